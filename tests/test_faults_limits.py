"""Issue 39 §3: files found while reading (an audit store in a ``restore`` folder, the ids beside an
embeddings file) that are FIFOs are that file's failure, without a hang; parser limits (JSON nested
past the recursion limit, an integer of more than 4,300 digits, a ``.npy`` header past numpy's
limit) are one line naming the file in every command that reads JSON or ``.npy``, never a
traceback (docs/reliability.md). A timeout fails a hang."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest

from lam_ref.cli import main

from .datagen import run_cli, swe_corpus

DEEP = "[" * 100_000 + "]" * 100_000
HUGE = "[" + "9" * 5000 + "]"


def _one_error(rc: int, err: str, name: str) -> None:
    lines = [x for x in err.splitlines() if x.strip() and "hashing encoder" not in x]
    assert rc == 2 and len(lines) == 1 and "error:" in lines[0] and name in lines[0], \
        f"want one error line naming {name}, exit 2; got rc={rc}: {err!r}"
    assert "Traceback" not in err, err


@pytest.mark.timeout(60)
def test_restore_a_fifo_audit_store_in_a_folder_fails_that_store(tmp_path, capsys):
    """A ``restore`` folder whose ``x.audit.json`` is a FIFO (reading it blocked forever): that
    store fails in one ``failed:`` line naming it, the other trajectory restores, exit 1."""
    d = swe_corpus(tmp_path)
    out = tmp_path / "out"
    assert main(["compact", str(d), "--encoder", "hash", "--no-progress", "--residual-dir", str(out), "--mkdir"]) == 0
    (out / "t1.audit.json").unlink()
    os.mkfifo(out / "t1.audit.json")
    rc, stdout, err = run_cli(capsys, "restore", str(out))
    failed = [x for x in err.splitlines() if ": failed: " in x]
    assert rc == 1 and len(failed) == 1 and "t1.audit.json" in failed[0] and "FIFO" in failed[0], \
        f"the FIFO store must fail by name: rc={rc} {err!r}"
    assert "1 of 2 trajectories restored" in stdout, stdout


def _gold_args(tmp_path: Path, f: Path) -> list[str]:
    return ["sweep", str(swe_corpus(tmp_path)), "--encoder", "hash", "--no-progress", "--gold", str(f)]


def _report_args(tmp_path: Path, f: Path) -> list[str]:
    return ["determinism", "compare", str(f)]


def _kept_args(tmp_path: Path, f: Path) -> list[str]:
    e = tmp_path / "e.npy"
    np.save(e, np.eye(3, dtype=np.float32))
    return ["audit", str(e), "--kept", str(f), "-t", "0.9"]


def _profile_args(tmp_path: Path, f: Path) -> list[str]:
    return ["model", "--device", str(f)]


def _lre_args(tmp_path: Path, f: Path) -> list[str]:
    return ["compare", str(swe_corpus(tmp_path)), "--encoder", "hash", "--methods", "lre", "--lre-weights", str(f)]


@pytest.mark.timeout(120)
@pytest.mark.parametrize("content", [DEEP, HUGE], ids=["deep-nesting", "huge-int"])
@pytest.mark.parametrize("build", [_gold_args, _report_args, _kept_args, _profile_args, _lre_args],
                         ids=["sweep-gold", "determinism-compare", "audit-kept", "model-device", "compare-lre-weights"])
def test_json_parser_limits_are_one_line_naming_the_file(build, content, tmp_path, capsys):
    """JSON nested 100,000 deep or holding a 5,000-digit integer: one error line naming the file,
    exit 2, no traceback (they raised RecursionError / ValueError before)."""
    f = tmp_path / "limit.json"
    f.write_text(content)
    rc, _, err = run_cli(capsys, *build(tmp_path, f))
    _one_error(rc, err, "limit.json")


@pytest.mark.timeout(60)
@pytest.mark.parametrize("cmd", ["bands", "substitute", "audit"])
def test_a_npy_header_past_numpys_limit_is_one_line(cmd, tmp_path, capsys):
    """A ``.npy`` whose header is longer than numpy reads safely: one line naming the file, exit 2."""
    f = tmp_path / "big-header.npy"
    header = "{'descr': '<f4', 'fortran_order': False, 'shape': (1, 1), " + " " * 20_000 + "}\n"
    f.write_bytes(b"\x93NUMPY\x02\x00" + len(header).to_bytes(4, "little") + header.encode("latin1") + b"\0" * 4)
    argv = [cmd, str(f)] + (["--kept", str(f), "-t", "0.9"] if cmd == "audit" else [])
    rc, _, err = run_cli(capsys, *argv)
    _one_error(rc, err, "big-header.npy")


@pytest.mark.timeout(60)
def test_verify_ids_beside_the_embeddings_that_are_a_fifo(tmp_path, capsys):
    """``verify emb.npy`` reads ``emb.ids.json`` beside it: a FIFO there is one line naming it
    (exit 2), not a hang."""
    e = tmp_path / "emb.npy"
    np.save(e, np.eye(4, dtype=np.float32))
    os.mkfifo(tmp_path / "emb.ids.json")
    rc, _, err = run_cli(capsys, "verify", str(e), "-t", "0.9")
    _one_error(rc, err, "emb.ids.json")


@pytest.mark.timeout(60)
@pytest.mark.parametrize("cmd", ["bands", "determinism compare"])
def test_an_input_past_the_size_limit_is_refused_naming_it(cmd, tmp_path, capsys, monkeypatch):
    """D3: an input file larger than the documented limit (``LAM_REF_MAX_FILE_BYTES``; 1 GiB by
    default) is refused before it is read, in one line naming the file and the limit."""
    f = tmp_path / "big.json"
    f.write_bytes(b" " * 4096)
    monkeypatch.setenv("LAM_REF_MAX_FILE_BYTES", "1024")
    rc, _, err = run_cli(capsys, *cmd.split(), str(f))
    _one_error(rc, err, "big.json")
    assert "LAM_REF_MAX_FILE_BYTES" in err, err
