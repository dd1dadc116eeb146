"""Issue 24, data destroyed or lost, and tampering (SPEC §8 "nothing is lost, only moved"; docs/cli.md
conventions; docs/reliability.md): an output never replaces an input or lands inside an input
folder (D1, D12), a second run never silently replaces the first (D11), every residual is
accounted for by ``restore`` (D8), every Unicode line separator and every file name round-trips
(D5, D6), and the audit store's version is covered by its checksum (D9). Hash encoder throughout."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from lam_ref.text.audit import AuditError, AuditStore

from .datagen import PYTEST_OBS, one_error_line, run_cli, swe_agent_traj, swe_corpus, write_jsonl_trajectory

# ---- D1, D12: outputs never inputs ---------------------------------------------------------------

@pytest.mark.parametrize("option,target", [
    ("--json", "runs/t0.traj"),
    ("--save-embeddings", "runs/t0.traj"),
    ("--save-embeddings", "runs/emb.npy"),
    ("--json", "runs/sub/report.json"),
    ("--residual-dir", "runs/res"),
    ("--residual-dir", "runs"),
])
def test_d1_d12_an_output_inside_the_inputs_is_refused_and_nothing_changes(option, target, tmp_path, capsys):
    """D1/D12: an output that is an input file or lies inside an input folder is refused (exit 2,
    one line naming the option) before any work; every input byte is unchanged."""
    d = swe_corpus(tmp_path)
    before = {p: p.read_bytes() for p in d.rglob("*") if p.is_file()}
    (d / "sub").mkdir()
    (d / "res").mkdir()
    rc, _, err = run_cli(capsys, "compact", str(d), "--encoder", "hash", "--no-progress", option, str(tmp_path / target))
    assert rc == 2, f"{option} {target}: exit 2 expected, got {rc}: {err}"
    assert option in one_error_line(err), f"the line names {option}: {err!r}"
    after = {p: p.read_bytes() for p in d.rglob("*") if p.is_file()}
    assert after == before, f"{option} {target}: the inputs changed: {set(after) ^ set(before)}"


@pytest.mark.parametrize("command", ["pairs", "sweep", "compare", "verify"])
def test_d1_pairs_and_sweep_refuse_an_output_that_is_an_input(command, tmp_path, capsys):
    """D1: the other trajectory commands refuse ``--json`` onto an input file too (exit 2, input unchanged)."""
    d = swe_corpus(tmp_path, 1)
    before = (d / "t0.traj").read_bytes()
    rc, _, err = run_cli(capsys, command, str(d), "--encoder", "hash", "--no-progress", "--json", str(d / "t0.traj"))
    assert rc == 2 and "--json" in one_error_line(err), f"{command}: {rc} {err!r}"
    assert (d / "t0.traj").read_bytes() == before, f"{command}: the input is unchanged"


def test_d1_the_embeddings_sidecar_may_not_be_an_input(tmp_path, capsys):
    """D1: ``--save-embeddings X.npy`` also writes ``X.ids.json``; that one may not be an input either."""
    d = swe_corpus(tmp_path, 1)
    side = tmp_path / "emb.ids.json"
    side.write_text(json.dumps(swe_agent_traj(7)))
    rc, _, err = run_cli(capsys, "compact", str(d), str(side), "--format", "swe-agent", "--encoder", "hash",
                      "--no-progress", "--save-embeddings", str(tmp_path / "emb.npy"))
    assert rc == 2 and "ids.json" in one_error_line(err), f"the sidecar is refused: {rc} {err!r}"
    assert json.loads(side.read_text()) == swe_agent_traj(7), "the input behind the sidecar name is unchanged"


def test_d12_our_own_outputs_are_skipped_when_a_folder_is_scanned(tmp_path, capsys):
    """D12: residual, audit, native and restored files lying in an input folder (an earlier run's
    output moved there) are never read back as input: skipped, each with a warning line."""
    d = swe_corpus(tmp_path, 1)
    res = tmp_path / "res"
    rc, _, err = run_cli(capsys, "compact", str(d), "--encoder", "hash", "--no-progress", "--residual-dir", str(res),
                      "--mkdir", "--residual-format", "native")
    assert rc == 0, err
    for f in res.iterdir():
        if not f.name.startswith("."):
            (d / f.name).write_bytes(f.read_bytes())
    rep = tmp_path / "r.json"
    rc, _, err = run_cli(capsys, "compact", str(d), "--encoder", "hash", "--no-progress", "--json", str(rep))
    assert rc == 0, err
    ids = [t["id"] for t in json.loads(rep.read_text())["trajectories"]]
    assert ids == ["t0"], f"only the real input is read, not our outputs: {ids}"
    skipped = [x for x in err.splitlines() if "lam-ref output file" in x]
    assert len(skipped) == 2, f"one warning per skipped output (residual, native; audit stores match no pattern): {err!r}"


# ---- D5, D6: framing agrees on every line separator and file name ---------------------------------

@pytest.mark.parametrize("sep", ["\u2028", "\u2029", "\x85", "\x0b", "\x0c", "\x1c", "\x1d", "\x1e", "\r"])
def test_d5_line_separators_in_records_restore_byte_for_byte(sep, tmp_path, capsys):
    """D5: a record holding any character ``str.splitlines`` takes for a line end compacts and
    restores byte for byte (the residual is framed by ``\\n`` only, on write and on read)."""
    f = write_jsonl_trajectory(tmp_path / "in" / "t.jsonl", [("ls", f"a{sep}b\n" + PYTEST_OBS), ("ls", PYTEST_OBS)],
                               head=[("user", f"task{sep}x")])
    res, out = tmp_path / "res", tmp_path / "orig"
    rc, _, err = run_cli(capsys, "compact", str(f), "--encoder", "hash", "--no-progress", "--residual-dir", str(res),
                      "--mkdir", "--residual-format", "native", "--check")
    assert rc == 0, err
    for fmt in ("jsonl", "native"):
        rc, _, err = run_cli(capsys, "restore", str(res), "--out", str(out / fmt), "--mkdir", "--residual-format", fmt)
        assert rc == 0, f"{fmt}: {err}"
    texts = [json.loads(x)["text"] for x in (out / "jsonl" / "t.original.jsonl").read_text().split("\n") if x]
    want = [json.loads(x)["text"] for x in f.read_text().split("\n") if x]
    assert texts == want, f"the original texts, separators included: {texts!r}"


def test_d6_a_non_utf8_byte_in_a_file_name_round_trips(tmp_path, capsys):
    """D6: an input whose file name holds a byte that is not UTF-8 compacts, and its residual
    restores (the record sources hold the name; the residual is valid UTF-8)."""
    d = tmp_path / "runs"
    d.mkdir()
    name = os.fsdecode(b"t\xff.traj")
    (d / name).write_text(json.dumps(swe_agent_traj(1)))
    res = tmp_path / "res"
    rc, _, err = run_cli(capsys, "compact", str(d), "--encoder", "hash", "--no-progress", "--residual-dir", str(res),
                      "--mkdir", "--check")
    assert rc == 0, err
    rc, out, err = run_cli(capsys, "restore", str(res), "--out", str(tmp_path / "o"), "--mkdir")
    assert rc == 0 and "1 of 1 trajectories restored" in out, f"restored: {rc} {out} {err}"
    rows = [json.loads(x) for x in next((tmp_path / "o").iterdir()).read_text(encoding="utf-8").splitlines()]
    assert any("\udcff" in r["source"] for r in rows), "the sources name the file as it is"


# ---- D9: the version is checksummed ----------------------------------------------------------------

def _store(tmp_path: Path) -> Path:
    s = AuditStore.for_records("t", ["a", "b"], meta=[["observation", 0, "s0", None], ["action", 1, "s1", None]])
    return s.save(tmp_path / "t.audit.json")


@pytest.mark.parametrize("edit", ["version_down_to_1", "version_down_to_2", "inner_version", "drop_inner_version"])
def test_d9_editing_the_version_is_detected(edit, tmp_path):
    """D9: the version lies inside the checksummed body: editing it (to switch the field checks
    off) or the body's copy is refused with an :class:`AuditError`, never read with fewer checks."""
    p = _store(tmp_path)
    obj = json.loads(p.read_text())
    if edit == "version_down_to_1":
        obj["version"] = 1
    elif edit == "version_down_to_2":
        obj["version"] = 2
    elif edit == "inner_version":
        obj["body"]["version"] = 1
    else:
        del obj["body"]["version"]
    p.write_text(json.dumps(obj))
    with pytest.raises(AuditError, match="edited|checksum"):
        AuditStore.load(p)


def test_d9_a_version_2_store_edited_to_1_is_refused(tmp_path):
    """D9: an old (version-2) store, whose version is outside its checksum, edited to version 1 is
    recognised by its 'meta' and refused; read as it is, it is restored with a note of what was checked."""
    p = _store(tmp_path)
    obj = json.loads(p.read_text())
    del obj["body"]["version"]
    import hashlib

    obj["body_sha256"] = hashlib.sha256(json.dumps(obj["body"], sort_keys=True).encode()).hexdigest()
    obj["version"] = 2
    p.write_text(json.dumps(obj))
    store = AuditStore.load(p)
    assert store.version == 2 and "not covered" in store.checked, f"the note says so: {store.checked!r}"
    obj["version"] = 1
    p.write_text(json.dumps(obj))
    with pytest.raises(AuditError, match="version was edited"):
        AuditStore.load(p)


def test_d9_the_restore_table_states_what_was_checked(tmp_path, capsys):
    """D9: the restore table says what was checked for each store (texts' SHA-256 and fields)."""
    d = swe_corpus(tmp_path, 1)
    res = tmp_path / "res"
    assert run_cli(capsys, "compact", str(d), "--encoder", "hash", "--no-progress", "--residual-dir", str(res),
                "--mkdir")[0] == 0
    rc, out, err = run_cli(capsys, "restore", str(res))
    assert rc == 0 and "SHA-256 of every record text and its role, turn, source, name" in out, out + err


