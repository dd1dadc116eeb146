"""Issue 24, one input must not abort or hang a run, and messages (docs/cli.md conventions;
docs/reliability.md): parser limits are per-file failures (D2), only regular files are read and
one file's size is bounded (D3), writes fail per file (D7), the banded candidate work is bounded
(D13, SPEC §5.2), skips are reported (D10), progress lines never glue to error lines (D14),
``--window 0`` is a usage error before the model loads (D15), names print escaped (D17), a full
disk names the path (D18), a file without observation text is warned about (D22), and argparse
errors are one line. Hash encoder throughout."""

from __future__ import annotations

import errno
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from lam_ref.cli import main
from lam_ref.substitution import Matcher

from .datagen import swe_agent_traj


def _run(capsys, *argv: str) -> tuple[int, str, str]:
    rc = main(list(argv))
    cap = capsys.readouterr()
    return rc, cap.out, cap.err


def _good(d: Path, n: int = 2) -> list[Path]:
    d.mkdir(parents=True, exist_ok=True)
    out = []
    for i in range(n):
        p = d / f"good{i}.traj"
        p.write_text(json.dumps(swe_agent_traj(i)))
        out.append(p)
    return out


def _failed(err: str) -> list[str]:
    return [x for x in err.splitlines() if ": failed: " in x]


# ---- D2: parser limits ---------------------------------------------------------------------------

@pytest.mark.parametrize("body", [
    b'{"trajectory": [{"observation": "x", "n": ' + b"9" * 5000 + b"}]}",
    b"[" * 100000 + b"]" * 100000,
])
def test_d2_parser_limits_fail_one_file_and_later_files_run(body, tmp_path, capsys):
    """D2: an integer of more than 4,300 digits, or nesting past the recursion limit, is one file's
    failure (exit 1, one line); the good files after it are processed."""
    d = tmp_path / "runs"
    _good(d)
    (d / "a_bad.traj").write_bytes(body)
    rep = tmp_path / "r.json"
    rc, _, err = _run(capsys, "compact", str(d), "--encoder", "hash", "--no-progress", "--json", str(rep))
    assert rc == 1 and len(_failed(err)) == 1 and "a_bad.traj" in _failed(err)[0], f"{rc} {err!r}"
    ids = sorted(t["id"] for t in json.loads(rep.read_text())["trajectories"])
    assert ids == ["good0", "good1"], f"the later good files ran: {ids}"


def test_d2_restore_survives_parser_limits_in_its_inputs(tmp_path, capsys):
    """D2: a residual line nested too deeply is that store's failure in ``restore`` (exit 1)."""
    _good(tmp_path / "runs")
    res = tmp_path / "res"
    assert _run(capsys, "compact", str(tmp_path / "runs"), "--encoder", "hash", "--no-progress", "--residual-dir",
                str(res), "--mkdir")[0] == 0
    (res / "good0.residual.jsonl").write_bytes(b"[" * 100000 + b"]" * 100000 + b"\n")
    rc, out, err = _run(capsys, "restore", str(res))
    assert rc == 1 and len(_failed(err)) == 1 and "1 of 2" in out, f"{rc} {out} {err!r}"


# ---- D3: regular files only, bounded size ---------------------------------------------------------

@pytest.mark.parametrize("kind", ["fifo", "dev_zero"])
def test_d3_a_fifo_or_device_argument_fails_at_once(kind, tmp_path, capsys):
    """D3: a FIFO or ``/dev/zero`` given as an input is refused as not a regular file (one line,
    exit 1), without blocking or reading without bound; the good file runs."""
    good = _good(tmp_path / "runs", 1)[0]
    if kind == "fifo":
        bad = tmp_path / "pipe.traj"
        os.mkfifo(bad)
    else:
        bad = Path("/dev/zero")
    rc, _, err = _run(capsys, "compact", str(good), str(bad), "--format", "swe-agent", "--encoder", "hash",
                      "--no-progress")
    assert rc == 1 and "not a regular file" in _failed(err)[0], f"{rc} {err!r}"


def test_d3_a_file_over_the_size_limit_is_refused_naming_the_limit(tmp_path, capsys, monkeypatch):
    """D3: a file larger than the documented limit (``LAM_REF_MAX_FILE_BYTES``) fails with a line
    naming the limit; smaller files run."""
    d = tmp_path / "runs"
    _good(d, 1)
    big = d / "big.traj"
    big.write_text(json.dumps(swe_agent_traj(3, repeats=400)))
    monkeypatch.setenv("LAM_REF_MAX_FILE_BYTES", str(big.stat().st_size - 1))
    rc, _, err = _run(capsys, "compact", str(d), "--encoder", "hash", "--no-progress")
    assert rc == 1 and "big.traj" in _failed(err)[0] and "LAM_REF_MAX_FILE_BYTES" in _failed(err)[0], err


# ---- D7, D18: writes fail per file, naming the path ------------------------------------------------

def test_d7_a_lone_surrogate_in_a_locomo_sample_id_restores(tmp_path, capsys):
    """D7: a lone surrogate in a field the loaders do not validate (LoCoMo ``sample_id``) does not
    crash the run after the work: the residual is written (ASCII-escaped) and restores."""
    sample = [{"sample_id": "x\ud800", "conversation": {"speaker_a": "A", "speaker_b": "B", "session_1": [
        {"speaker": "A", "dia_id": "D1:1", "text": "hello"}, {"speaker": "B", "dia_id": "D1:2", "text": "hi"}]}}]
    f = tmp_path / "locomo_x.json"
    f.write_text(json.dumps(sample))
    res = tmp_path / "res"
    rc, _, err = _run(capsys, "compact", str(f), "--encoder", "hash", "--no-progress", "--residual-dir", str(res),
                      "--mkdir", "--check", "--json", str(tmp_path / "r.json"))
    assert rc == 0, err
    rc, out, err = _run(capsys, "restore", str(res))
    assert rc == 0 and "1 of 1" in out, f"{rc} {out} {err!r}"


def test_d7_d18_a_write_that_fails_is_that_files_failure_and_names_the_path(tmp_path, capsys, monkeypatch):
    """D7/D18: a write error (a full disk) while writing one trajectory's residual fails that
    file only, with a line naming the path, and leaves no half pair of residual files."""
    import lam_ref._io as io_mod

    d = tmp_path / "runs"
    _good(d, 2)
    res = tmp_path / "res"
    res.mkdir()
    real = io_mod.os.fsync
    calls = {"n": 0}

    def full(fd):
        calls["n"] += 1
        if calls["n"] == 2:  # the first trajectory's audit store
            raise OSError(errno.ENOSPC, "No space left on device")
        return real(fd)

    monkeypatch.setattr(io_mod.os, "fsync", full)
    rc, _, err = _run(capsys, "compact", str(d), "--encoder", "hash", "--no-progress", "--residual-dir", str(res))
    assert rc == 1 and len(_failed(err)) == 1, f"{rc} {err!r}"
    assert "good0.audit.json" in _failed(err)[0] and "No space left" in _failed(err)[0], _failed(err)
    names = sorted(p.name for p in res.iterdir() if not p.name.startswith("."))
    assert names == ["good1.audit.json", "good1.residual.jsonl"], f"no residual without its store: {names}"


# ---- D13: bounded candidate work ----------------------------------------------------------------

def test_d13_dense_band_matches_fall_back_to_blocked_products_and_stay_sound():
    """D13 (SPEC §5.2): rows that all share their band keys but are not within δ of each other
    (the worst case of the band index) take the blocked-products path, give the same π as the
    oracle here (nothing merges), and the verified count says every pair was a candidate."""
    import lam_ref.substitution as sub

    rng = np.random.default_rng(0)
    base = np.zeros(64, np.float32)
    base[0] = 1.0
    e = np.tile(base, (600, 1))
    e[:, 1:] += rng.normal(0, 1e-3, (600, 63)).astype(np.float32)
    e[np.arange(600), 1 + np.arange(600) % 63] += 0.9  # far from each other, similar band codes
    e /= np.linalg.norm(e, axis=1, keepdims=True)
    from lam_ref.bands import BandIndex

    gathered = []
    real_query = BandIndex.query

    def spy(self, keys, *, unique=True):
        out = real_query(self, keys, unique=unique)
        gathered.append(out[0].size)
        return out

    def run(cap):
        gathered.clear()
        old, sub._RAW_CAP = sub._RAW_CAP, cap
        try:
            BandIndex.query = spy
            return Matcher(0.999, 64).admit(e.astype(np.float32)), list(gathered)
        finally:
            BandIndex.query = real_query
            sub._RAW_CAP = old

    (pi, dist, verified), raw_banded = run(1 << 40)
    (pi_f, dist_f, verified_f), raw_fallback = run(16)
    assert raw_banded and max(raw_banded) > 16 * 256, f"the input is dense in band matches: {raw_banded}"
    assert raw_fallback == [], f"with the bound, no band matches are gathered: {raw_fallback}"
    ref = sub.oracle(e, 0.999)
    assert np.array_equal(pi_f, ref.pi) and np.array_equal(pi, ref.pi), "sound, and here equal to the oracle"
    assert bool(np.all(dist_f <= ref.delta + 1e-12)), "δ̂ <= δ (THM1)"
    kept_first = int(np.count_nonzero(ref.pi[:512] == np.arange(512)))
    assert verified_f >= 88 * kept_first, f"every retained id counted as a candidate: {verified_f} < 88 x {kept_first}"


# ---- messages: D10, D14, D15, D17, D22, argparse -------------------------------------------------

def test_d10_skips_inside_a_folder_are_reported(tmp_path, capsys):
    """D10: a FIFO, a looping link and an unreadable subfolder inside a folder argument are each
    reported on stderr as skipped (the good file still runs)."""
    d = tmp_path / "runs"
    _good(d, 1)
    os.mkfifo(d / "pipe.traj")
    os.symlink(d / "loop.traj", d / "loop.traj")
    locked = d / "locked"
    locked.mkdir()
    (locked / "x.traj").write_text(json.dumps(swe_agent_traj(2)))
    locked.chmod(0)
    try:
        rc, _, err = _run(capsys, "compact", str(d), "--encoder", "hash", "--no-progress")
    finally:
        locked.chmod(0o755)
    assert rc == 0, err
    warn = [x for x in err.splitlines() if ": warning: " in x and "skipped" in x]
    assert any("pipe.traj" in x and "FIFO" in x for x in warn), f"the FIFO is reported: {warn}"
    assert any("loop.traj" in x for x in warn), f"the looping link is reported: {warn}"
    if os.geteuid() != 0:  # root lists any folder
        assert any("locked" in x and "cannot be listed" in x for x in warn), f"the folder is reported: {warn}"


def test_d14_progress_lines_never_glue_to_error_lines(tmp_path):
    """D14: with stderr redirected, every progress line is whole and every error line starts a
    line of its own."""
    d = tmp_path / "runs"
    _good(d, 2)
    (d / "bad.traj").write_text("{")
    proc = subprocess.run([sys.executable, "-m", "lam_ref.cli", "compact", str(d), "--encoder", "hash"],
                          capture_output=True, text=True, timeout=300, env=dict(os.environ, PYTHONPATH=os.getcwd()))
    assert proc.returncode == 1, proc.stderr
    assert "\r" not in proc.stderr, f"no carriage-return fragments: {proc.stderr!r}"
    lines = proc.stderr.splitlines()
    assert any(x.startswith("lam-ref compact: failed: ") for x in lines), f"the error has its own line: {lines}"
    assert all(x.startswith(("lam-ref compact: ", "compact: ")) for x in lines if x.strip()), lines


def test_d15_window_0_is_a_usage_error_before_the_model_loads(tmp_path, capsys):
    """D15: ``--window 0`` exits 2 with one line, with a model name that would fail to load."""
    _good(tmp_path / "runs", 1)
    with pytest.raises(SystemExit) as exc:
        main(["compact", str(tmp_path / "runs"), "--window", "0", "--encoder", "/no/such/model"])
    err = capsys.readouterr().err
    assert exc.value.code == 2 and err.count("\n") == 1 and "--window" in err, f"{exc.value.code} {err!r}"


def test_argparse_errors_are_one_line(capsys):
    """A usage error from argparse is one line naming the problem, not a usage block."""
    with pytest.raises(SystemExit) as exc:
        main(["compact", "--threshold", "abc", "x"])
    err = capsys.readouterr().err
    assert exc.value.code == 2 and err.count("\n") == 1 and "--threshold" in err, f"{exc.value.code} {err!r}"


def test_d17_file_names_print_escaped(tmp_path, capsys):
    """D17: a file name holding a newline and a terminal escape prints escaped: it neither splits
    the error line nor reaches the terminal raw."""
    d = tmp_path / "runs"
    _good(d, 1)
    (d / "evil\nlam-ref compact: ok\x1b[2J.traj").write_text("{")
    rc, out, err = _run(capsys, "compact", str(d), "--encoder", "hash", "--no-progress")
    assert rc == 1, err
    assert "\x1b" not in err + out, "no raw escape reaches the terminal"
    failed = _failed(err)
    assert len(failed) == 1 and "evil\\x0alam-ref" in failed[0], f"escaped in one line: {err!r}"
    assert not any(x.startswith("lam-ref compact: ok") for x in err.splitlines()), "no forged line"


def test_d22_a_file_without_observation_text_is_warned_about(tmp_path, capsys):
    """D22: a trajectory with no observation text at all is accepted with a warning line."""
    f = tmp_path / "t.jsonl"
    f.write_text('{"role": "user", "text": "task"}\n{"role": "observation", "text": "  "}\n')
    rc, _, err = _run(capsys, "compact", str(f), "--encoder", "hash", "--no-progress")
    assert rc == 0 and "no observation text" in err, f"{rc} {err!r}"


def test_d19_a_failed_dask_task_is_one_line_without_a_traceback_object():
    """D19: a task that failed on a worker is reported as ``task failed: TYPE: first line``, never
    the ``(type, value, <traceback object>)`` tuple nor a multi-line message."""
    from lam_ref.distributed.files import task_error

    class Fut:
        def exception(self):
            return MemoryError("worker ran out\nof memory\n  traceback lines")

    class Lost:
        def exception(self):
            raise RuntimeError("future lost")

    line = task_error(Fut())
    assert line == "task failed: MemoryError: worker ran out", f"one line: {line!r}"
    assert "traceback object" not in task_error(Lost()) and "RuntimeError" in task_error(Lost()), task_error(Lost())


def test_d7_a_native_write_that_fails_fails_that_file_only(tmp_path, capsys):
    """D7: a native residual that cannot be written (here: the file's ``history`` copy of an
    observation disagrees with ``trajectory[i].observation``, SPEC §8.3; a lone surrogate escape in
    ``info``, the case this test used before, is now kept byte for byte by the splicing writer)
    with ``--residual-format native``: that file fails with one line after its work, the next file
    is written, and no residual of the failed file is left without its audit store."""
    from tests.datagen import swe_agent_0x_file

    bad = swe_agent_0x_file(["hello world " * 20, "ls output", "done"])
    bad["history"][3]["content"] = "another output"
    (tmp_path / "a.traj").write_text(json.dumps(bad))
    t = {"trajectory": [{"observation": "hello world " * 20, "action": "ls"}], "info": {}}
    (tmp_path / "b.traj").write_text(json.dumps(t))
    res = tmp_path / "res"
    rc, _, err = _run(capsys, "compact", str(tmp_path / "a.traj"), str(tmp_path / "b.traj"), "--encoder", "hash",
                      "--no-progress", "--residual-dir", str(res), "--mkdir", "--residual-format", "native")
    assert rc == 1 and len(_failed(err)) == 1 and "a.traj" in _failed(err)[0], f"{rc} {err!r}"
    names = sorted(p.name for p in res.iterdir())
    assert names == ["b.audit.json", "b.native.traj", "b.residual.jsonl"], f"all or nothing per file: {names}"


def test_d17_every_table_cell_is_printable():
    """D17: the one table printer (lam_ref.tables.table, used by compact, sweep, compare, audit,
    pairs, verify, restore) escapes every cell, so a file name or id with a newline, a carriage
    return or a terminal escape can neither split a row, forge a line nor drive the terminal."""
    from lam_ref.tables import table

    out = table([["evil\nTOTAL  100 %\x1b[2J", 1.5], ["ok\r", 2]], ["id", "x"])
    assert len(out.splitlines()) == 4, f"header, rule and two rows, one line each: {out!r}"
    assert "\x1b" not in out and "\r" not in out, f"no raw control character reaches the terminal: {out!r}"
    assert "evil\\x0aTOTAL" in out and "\\x1b[2J" in out, f"the escapes are shown: {out!r}"


@pytest.mark.dask
def test_d22_the_dask_driver_warns_about_a_file_without_observation_text(tmp_path, capsys):
    """D22 on ``--workers``: the same warning line as the serial command, exit 0."""
    f = tmp_path / "t.jsonl"
    f.write_text('{"role": "user", "text": "task"}\n{"role": "observation", "text": "  "}\n')
    rc, _, err = _run(capsys, "compact", str(f), "--encoder", "hash", "--no-progress", "--workers", "1")
    assert rc == 0 and "no observation text" in err, f"{rc} {err!r}"
