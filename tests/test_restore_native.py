"""``lam-ref restore`` from native residuals (SPEC §8): ``compact --residual-format native`` writes the
residual in the input's own format; ``restore`` reads it with that format's loader and gives back
exactly the original records (SHA-256 of every text, role, turn, source and name), for every
format the loaders read (SWE-agent, mini-swe-agent, LoCoMo, JSONL) and on the shared SWE-agent
trajectories."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from lam_ref.cli import main
from lam_ref.text.loaders import load_all, load_file, shared_data_dir
from tests.test_cmd_pairs_native import FORMATS, LONG

SHARED = shared_data_dir()


def _run(capsys, *argv: str) -> tuple[int, str, str]:
    rc = main(list(argv))
    cap = capsys.readouterr()
    return rc, cap.out, cap.err


def _compact_native(capsys, src: Path, rdir: Path, *extra: str) -> dict:
    rep = rdir.parent / "compact.json"
    rc, _, err = _run(capsys, "compact", str(src), "--encoder", "hash", "--residual-dir", str(rdir), "--mkdir",
                      "--residual-format", "native", "--check", "--no-progress", "--json", str(rep), *extra)
    assert rc == 0, f"compact --residual-format native failed: {err}"
    return json.loads(rep.read_text())["residual_files"]


def _fields(records) -> list[tuple]:
    """What a loader reads from a file, minus the file's own path."""
    return [(r.role, r.text, r.turn, r.name, r.source.rpartition(":")[2]) for r in records]


@pytest.mark.parametrize("fmt", list(FORMATS))
def test_restore_reads_native_residuals(fmt, tmp_path, capsys):
    """Claim (SPEC §8): compact → native residual → restore gives every original record byte for
    byte with all its fields, reading only the native residual (the JSONL residuals are deleted
    first); ``--out`` also writes the original in the input's format, which the same loader reads
    as the input's records (LoCoMo: the conversation's records, as sample 0 of its file)."""
    name, make = FORMATS[fmt]
    obs = [LONG, "ls -la\nfile_a\nfile_b", LONG, LONG + "\nand one new line", "=" * 70 + "\nok\n" + "=" * 70]
    src = tmp_path / "in" / name
    src.parent.mkdir(parents=True)
    src.write_text(make(obs))
    rdir = tmp_path / "res"
    written = _compact_native(capsys, tmp_path / "in", rdir)
    for entry in written.values():
        (rdir / entry["residual"]).unlink()
    out, rep = tmp_path / "orig", tmp_path / "restore.json"
    rc, printed, err = _run(capsys, "restore", str(rdir), "--residual-format", "native", "--out", str(out),
                            "--mkdir", "--json", str(rep))
    assert rc == 0, f"restore from native residuals failed: {err}"
    n = len(written)
    same = f"0 of {n} are byte for byte their input file, {n} not compared" if fmt == "locomo" else \
        f"{n} of {n} are byte for byte their input file"
    assert "every record's text byte for byte" in printed and same in printed, \
        f"the summary says what holds of the records and of the native file (issues 23 §6, 35 §1): {printed}"
    report = {r["name"]: r for r in json.loads(rep.read_text())["restored"]}
    originals = {t.id: t for t in load_file(src, fmt if fmt == "locomo" else None,
                                            traj_id=None if fmt != "mini-swe-agent" else "task")}
    assert set(report) == set(written), f"one restored trajectory per residual: {sorted(report)}"
    for nm, entry in written.items():
        orig = originals[entry["id"]]
        assert report[nm]["residual"].endswith(entry["native"]), f"{nm}: read from {report[nm]['residual']}"
        got = [json.loads(x) for x in (out / f"{nm}.original.jsonl").read_text().splitlines()]
        assert got == [r.to_json() for r in orig.records], f"{nm}: restored records differ from the input's"
        native_back = load_file(report[nm]["written_native"], fmt if fmt == "locomo" else None)
        assert len(native_back) == 1, f"{nm}: the restored file holds one trajectory"
        back = native_back[0]
        assert back.format == fmt, f"{nm}: restored file read as {back.format}, not {fmt}"
        if fmt == "locomo":
            assert back.meta["qa"] == orig.meta["qa"], f"{nm}: QA items kept"
            want = [(r.role, r.text, r.turn, r.name) for r in orig.records]
            assert [(r.role, r.text, r.turn, r.name) for r in back.records] == want, f"{nm}: records differ"
        else:
            assert _fields(back.records) == _fields(orig.records), f"{nm}: the restored file's records differ"


@pytest.mark.parametrize("fmt", ["swe-agent", "jsonl"])
def test_restore_takes_a_native_file_and_refuses_edits(fmt, tmp_path, capsys):
    """A ``*.native.*`` file given as PATH is read natively (paired with its audit store); a native
    residual edited after compaction is refused (exit 1, the file named), never "restored"; asking
    for native residuals where none was written is a usage error (exit 2, before any work)."""
    name, make = FORMATS[fmt]
    src = tmp_path / name
    src.write_text(make([LONG, LONG, "short"]))
    rdir = tmp_path / "res"
    written = _compact_native(capsys, src, rdir)
    (entry,) = written.values()
    native = rdir / entry["native"]
    rc, out, err = _run(capsys, "restore", str(native))
    assert rc == 0 and "1 of 1 trajectories restored" in out, f"a native file as PATH: {out} {err}"
    raw = native.read_text()
    assert "[LAM:" in raw, "the repeat became a stub in the native residual"
    native.write_text(raw.replace("[LAM:", "[LAM: ", 1))
    rc, _, err = _run(capsys, "restore", str(native))
    assert rc == 1 and native.name in err and "SHA-256" in err, f"an edited native residual is refused: {err}"
    plain = tmp_path / "plain"
    _run(capsys, "compact", str(src), "--encoder", "hash", "--residual-dir", str(plain), "--mkdir", "--no-progress")
    rc, _, err = _run(capsys, "restore", str(plain), "--residual-format", "native")
    assert rc == 2 and "no .native.<suffix> residual" in err, f"missing native residual: rc {rc}, {err}"
    assert err.count("\n") == 1, f"one line per error: {err!r}"


@pytest.mark.data
@pytest.mark.skipif(SHARED is None, reason="../shared/data/swe-agent-trajectories not found (or set LAM_SHARED_DATA)")
def test_restore_native_on_the_shared_trajectories(tmp_path, capsys):
    """Claim (SPEC §8) on real SWE-agent trajectories: every native ``.traj`` residual restores to
    the input's records, all fields, byte for byte (L1 with the hashing encoder, then L0 with the
    default net-positive stubs)."""
    rdir = tmp_path / "res"
    written = _compact_native(capsys, SHARED, rdir)
    out, rep = tmp_path / "orig", tmp_path / "restore.json"
    rc, _, err = _run(capsys, "restore", str(rdir), "--residual-format", "native", "--out", str(out), "--mkdir",
                      "--json", str(rep))
    assert rc == 0, err
    originals = {t.id: t for t in load_all([SHARED])}
    assert len(written) == len(originals) > 0, f"{len(written)} residuals for {len(originals)} trajectories"
    for nm, entry in written.items():
        assert entry["native"].endswith(".native.traj"), f"{nm}: SWE-agent residual in its own format"
        got = [json.loads(x) for x in (out / f"{nm}.original.jsonl").read_text().splitlines()]
        assert got == [r.to_json() for r in originals[entry["id"]].records], f"{nm}: restored records differ"
