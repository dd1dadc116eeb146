"""``lam-ref compact`` robustness and ``lam-ref restore`` (spec §1.1, §3.3, §8, §9):
per-file failures never sink a batch, output paths are checked before any work, same-named inputs
keep separate audit stores, the L2 storage report, and the originals back from --residual-dir."""

from __future__ import annotations

import json
import os
import stat

import pytest

from lam_ref.cli import build_parser, main
from lam_ref.commands import compact as compact_cmd
from lam_ref.commands._options import L0_STUB_RULES
from lam_ref.tables import display_ids
from lam_ref.text.chunking import DEFAULT_WINDOW
from lam_ref.text.loaders import MAX_TURN, load_file

from .datagen import PYTEST_OBS as OBS
from .datagen import swe_agent_traj as _traj
from .datagen import write_file as _write


def _run(capsys, *argv: str) -> tuple[int, str, str]:
    rc = main(list(argv))
    cap = capsys.readouterr()
    return rc, cap.out, cap.err


def test_huge_turn_is_one_file_error_and_the_batch_goes_on(tmp_path, capsys):
    """A JSONL turn beyond int range used to crash the whole run with OverflowError; now it is a
    load error naming the file and ``$.turn``, and the good file is still compacted."""
    d = tmp_path / "runs"
    _write(d / "good.traj", _traj(1))
    (d / "bad.jsonl").write_text(json.dumps({"role": "observation", "text": "a", "turn": 2**63}) + "\n")
    out = tmp_path / "r.json"
    rc, _, err = _run(capsys, "compact", str(d), "--encoder", "hash", "--json", str(out), "--no-progress")
    assert rc == 1, "a failed file gives exit status 1"
    assert "bad.jsonl" in err and "line 1 $.turn" in err and str(MAX_TURN) in err, f"names file, path, range: {err}"
    rep = json.loads(out.read_text())
    assert [t["id"] for t in rep["trajectories"]] == ["good"], "the good file is still processed"
    assert len(rep["failures"]) == 1 and rep["failures"][0]["path"].endswith("bad.jsonl"), rep["failures"]


def test_jsonl_bad_line_names_the_line_once(tmp_path):
    p = tmp_path / "x.jsonl"
    p.write_text('{"role": "user", "text": "a"}\n{oops\n')
    with pytest.raises(Exception, match=r"line 2: invalid JSON at column 2") as exc:
        load_file(p)
    assert "line 1 column" not in str(exc.value), f"no second, confusing line number: {exc.value}"


def test_compaction_failure_of_one_trajectory_is_reported_and_the_rest_go_on(tmp_path, capsys, monkeypatch):
    """An exception inside one trajectory's compaction is that file's failure (exit 1, listed in the
    JSON report), not a traceback that loses the other files' results."""
    d = tmp_path / "runs"
    _write(d / "a.traj", _traj(1))
    _write(d / "b.traj", _traj(2))
    real = compact_cmd.compact_trajectory

    def flaky(item, *a, **k):
        if item.id == "a":
            raise OverflowError("simulated failure inside compaction")
        return real(item, *a, **k)

    monkeypatch.setattr(compact_cmd, "compact_trajectory", flaky)
    out = tmp_path / "r.json"
    rc, _, err = _run(capsys, "compact", str(d), "--encoder", "hash", "--json", str(out), "--no-progress")
    assert rc == 1, "exit status 1 when a trajectory failed"
    assert "a.traj" in err and "OverflowError: simulated failure" in err, f"the failure names file and cause: {err}"
    rep = json.loads(out.read_text())
    assert [t["id"] for t in rep["trajectories"]] == ["b"], "the other trajectory is reported"
    assert "simulated failure" in rep["failures"][0]["error"], rep["failures"]


@pytest.mark.parametrize("flag,target,message", [
    ("--json", "DIR", "is a directory"),
    ("--json", "FILE/x.json", "is not a directory"),
    ("--residual-dir", "FILE", "exists and is not a directory"),
])
def test_bad_output_paths_fail_before_any_work(tmp_path, capsys, monkeypatch, flag, target, message):
    """Output paths are checked before the encoder loads: exit 2, one line naming flag and path."""
    src = _write(tmp_path / "t.traj", _traj(1))
    afile = tmp_path / "afile"
    afile.write_text("keep me")
    path = {"DIR": str(tmp_path), "FILE/x.json": str(afile / "x.json"), "FILE": str(afile)}[target]

    def no_encoder(*a, **k):
        raise AssertionError("the encoder was loaded before the output path was checked")

    monkeypatch.setattr("lam_ref.text.encoders.get_encoder", no_encoder)  # run_encoder loads through it
    rc, out, err = _run(capsys, "compact", str(src), "--encoder", "hash", flag, path)
    assert rc == 2, f"bad {flag} exits 2, got {rc}"
    assert flag in err and message in err and "Traceback" not in err, f"one clear line: {err}"
    assert afile.read_text() == "keep me", "the existing file is untouched"


def test_same_named_inputs_keep_separate_audit_stores_and_restore(tmp_path, capsys):
    """Two inputs with the same id (one task in two folders) used to overwrite each other's
    residual and audit files; each now has its own, and ``lam-ref restore`` gives back every
    original record of both, byte for byte (checked here against the loader, independently of
    the audit store's own checksum)."""
    f1 = _write(tmp_path / "run1" / "task.traj", _traj(1))
    f2 = _write(tmp_path / "run2" / "task.traj", _traj(2))
    rdir, odir, rep_path = tmp_path / "resid", tmp_path / "orig", tmp_path / "r.json"
    rc, out, _ = _run(capsys, "compact", str(f1), str(f2), "--encoder", "hash", "--residual-dir", str(rdir), "--mkdir",
                      "--json", str(rep_path), "--no-progress")
    assert rc == 0, "both compacted"
    rep = json.loads(rep_path.read_text())
    files = rep["residual_files"]
    assert len(files) == 2 and {v["path"] for v in files.values()} == {str(f1), str(f2)}, files
    assert len(list(rdir.glob("*.audit.json"))) == 2, "two audit stores, none overwritten"
    assert "task (2)" in out, "the table tells the two rows apart"
    rc, out, err = _run(capsys, "restore", str(rdir), "--out", str(odir), "--mkdir")
    assert rc == 0, f"restore succeeds: {err}"
    assert "2 of 2 trajectories restored" in out, out
    for name, info in files.items():
        restored = [json.loads(x) for x in (odir / f"{name}.original.jsonl").read_text().splitlines()]
        (orig,) = load_file(info["path"])
        assert [r["text"] for r in restored] == [r.text for r in orig.records], f"{name}: texts byte for byte"
        assert [(r["role"], r["turn"]) for r in restored] == [(r.role, r.turn) for r in orig.records], name
    assert any((rdir / n).read_text() != (odir / f"{n[:-len('.residual.jsonl')]}.original.jsonl").read_text()
               for n in os.listdir(rdir) if n.endswith(".residual.jsonl")), "compaction did remove something"


def test_restore_refuses_an_edited_residual(tmp_path, capsys):
    """A residual changed after compaction does not restore: exit 1 and the SHA-256 mismatch named,
    never a silently wrong "original" (SPEC §8)."""
    f1 = _write(tmp_path / "t.traj", _traj(1))
    rdir = tmp_path / "resid"
    assert _run(capsys, "compact", str(f1), "--encoder", "hash", "--residual-dir", str(rdir), "--mkdir", "--no-progress")[0] == 0
    (res,) = rdir.glob("*.residual.jsonl")
    lines = res.read_text().splitlines()
    rec = json.loads(lines[2])
    rec["text"] += " tampered"
    lines[2] = json.dumps(rec)
    res.write_text("\n".join(lines) + "\n")
    out = tmp_path / "o"
    rc, _, err = _run(capsys, "restore", str(rdir), "--out", str(out), "--mkdir")
    assert rc == 1 and "SHA-256 mismatch" in err, f"tampering is detected: rc={rc} {err}"
    written = list(out.glob("*.original.jsonl")) if out.exists() else []
    assert not written, f"no restored file for a trajectory that failed: {written}"


def test_restore_bad_paths(tmp_path, capsys):
    rc, _, err = _run(capsys, "restore", str(tmp_path / "nope"))
    assert rc == 2 and "does not exist" in err, err
    rc, _, err = _run(capsys, "restore", str(tmp_path))
    assert rc == 2 and "holds no *.audit.json" in err, err


def test_l2_storage_report(tmp_path, capsys):
    """The report carries the L2 codec storage of the retained embeddings (spec §9.1):
    raw bytes are kept chunks × D × 4 (fp32), the bound held, the ratio is raw/encoded, and the
    total sums bytes over trajectories; ``--no-l2`` leaves it out."""
    d = tmp_path / "runs"
    _write(d / "a.traj", _traj(1))
    _write(d / "b.traj", _traj(2))
    out = tmp_path / "r.json"
    rc, table_out, _ = _run(capsys, "compact", str(d), "--encoder", "hash-64", "--json", str(out), "--no-progress")
    assert rc == 0
    rep = json.loads(out.read_text())
    for t in rep["trajectories"]:
        l2 = t["l2"]
        assert l2["raw_bytes"] == t["kept_chunks"] * 64 * 4 and l2["vectors"] == t["kept_chunks"], l2
        assert l2["bound_holds"] and l2["rel_eb"] == 0.001, l2
        assert l2["ratio"] == pytest.approx(l2["raw_bytes"] / l2["encoded_bytes"]), l2
    tot = rep["total"]["l2"]
    assert tot["raw_bytes"] == sum(t["l2"]["raw_bytes"] for t in rep["trajectories"]), tot
    assert tot["encoded_bytes"] == sum(t["l2"]["encoded_bytes"] for t in rep["trajectories"]), tot
    assert "×" in table_out, "the table has an L2 column"
    rc, _, _ = _run(capsys, "compact", str(d), "--encoder", "hash-64", "--json", str(out), "--no-progress", "--no-l2")
    assert rc == 0 and json.loads(out.read_text())["total"]["l2"] is None, "--no-l2 skips it"
    rc, _, err = _run(capsys, "compact", str(d), "--encoder", "hash", "--l2-rel-eb", "nan")
    assert rc == 2 and "l2_rel_eb" in err and "nan" in err, err


def test_device_is_checked(tmp_path, capsys):
    src = _write(tmp_path / "t.traj", _traj(1))
    rc, _, err = _run(capsys, "compact", str(src), "--encoder", "hash", "--device", "cuda")
    assert rc == 2 and "'cuda'" in err and "hashing encoder" in err, err
    from lam_ref.text.encoders import validate_torch_device

    with pytest.raises(Exception, match="torch device such as"):
        validate_torch_device("nosuchdev")


def test_written_files_get_the_usual_mode(tmp_path, capsys):
    """Atomic writes used to leave audit stores at 0600 (mkstemp) next to 0644 residuals."""
    src = _write(tmp_path / "t.traj", _traj(1))
    rdir = tmp_path / "resid"
    old = os.umask(0o022)
    try:
        assert _run(capsys, "compact", str(src), "--encoder", "hash", "--residual-dir", str(rdir), "--mkdir", "--no-progress")[0] == 0
    finally:
        os.umask(old)
    modes = {p.name: stat.S_IMODE(p.stat().st_mode) for p in rdir.iterdir()}
    assert set(modes.values()) == {0o644}, f"every output is 0644 under umask 022: {modes}"


def test_display_ids_tell_rows_apart():
    ids = ["replay__marshmallow-code__marshmallow-1867__default__install-1/marshmallow-code__marshmallow-1867",
           "replay__marshmallow-code__marshmallow-1867__xml_sys-env__install-1/marshmallow-code__marshmallow-1867",
           "short", "short"]
    labels = display_ids(ids)
    assert len(set(labels)) == 4, f"every row has its own label: {labels}"
    assert all(len(x) <= 48 for x in labels), f"labels stay narrow: {labels}"
    assert "default" in labels[0] and "xml" in labels[1], f"the distinguishing part is shown: {labels}"
    assert labels[2:] == ["short", "short (2)"], labels


def test_trajectory_without_observation_text(tmp_path, capsys):
    """No observation records, or only empty/null ones: 0 windows, no L2 report, exit 0 (used to
    fail inside the L2 report on an empty matrix)."""
    a = tmp_path / "noobs.jsonl"
    a.write_text('{"role": "user", "text": "task"}\n{"role": "action", "text": "ls"}\n')
    b = tmp_path / "empty.jsonl"
    b.write_text('{"role": "user", "text": "task"}\n{"role": "observation", "text": null}\n'
                 '{"role": "observation", "text": ""}\n')
    out = tmp_path / "r.json"
    rc, _, err = _run(capsys, "compact", str(a), str(b), "--encoder", "hash", "--json", str(out), "--check",
                      "--no-progress")
    assert rc == 0, f"nothing to compact is not a failure: {err}"
    rep = json.loads(out.read_text())
    assert [t["chunks"] for t in rep["trajectories"]] == [0, 0], rep["trajectories"]
    assert all(t["l2"] is None for t in rep["trajectories"]) and rep["total"]["l2"] is None, "no L2 without windows"


def test_restore_keeps_every_field_and_refuses_an_edited_role(tmp_path, capsys):
    """Restored records are whole records: role, turn, source (the original file's, not the residual
    file's) and text equal the loaded originals; a residual whose role was edited is refused with
    the file and the field named (audit format 2 records every field)."""
    src = tmp_path / "odd.jsonl"
    src.write_text("\n".join(json.dumps(r) for r in [
        {"role": "user", "text": "task"}, {"role": "observation", "text": OBS, "turn": 0},
        {"role": "action", "text": "again", "turn": 1}, {"role": "observation", "text": OBS, "turn": 1},
        {"role": "observation", "text": "crlf\r\nline\r\n\x00", "turn": 2, "name": "tool"}]) + "\n")
    rdir, odir = tmp_path / "resid", tmp_path / "orig"
    assert _run(capsys, "compact", str(src), "--encoder", "hash", "--residual-dir", str(rdir), "--mkdir", "--check",
                "--no-progress")[0] == 0
    rc, _, err = _run(capsys, "restore", str(rdir), "--out", str(odir), "--mkdir")
    assert rc == 0, err
    restored = [json.loads(x) for x in (odir / "odd.original.jsonl").read_text().splitlines()]
    (orig,) = load_file(src)
    assert restored == [r.to_json() for r in orig.records], "every field of every record comes back"
    assert restored[1]["source"] == f"{src}:line 2", restored[1]
    (res,) = rdir.glob("*.residual.jsonl")
    lines = res.read_text().splitlines()
    rec = json.loads(lines[0])
    rec["role"] = "assistant"
    lines[0] = json.dumps(rec)
    res.write_text("\n".join(lines) + "\n")
    rc, _, err = _run(capsys, "restore", str(rdir))
    assert rc == 1 and res.name in err and "residual role 'assistant' differs from the original's 'user'" in err, err


def test_check_reads_back_the_written_audit_files(tmp_path, capsys, monkeypatch):
    """``--check --residual-dir`` restores from the files as written, not only in memory: an audit
    writer that rewrites CRLF in moved text is caught at compaction time."""
    from lam_ref.text import audit

    real = audit._enc
    monkeypatch.setattr(audit, "_enc", lambda b: ["t", b.decode("utf-8").replace("\r\n", "\n")]
                        if b"\r\n" in b else real(b))
    src = tmp_path / "crlf.jsonl"
    src.write_text("\n".join(json.dumps({"role": "observation", "text": "same\r\nlines\r\nhere", "turn": k})
                             for k in range(3)) + "\n")
    rc, _, err = _run(capsys, "compact", str(src), "--encoder", "hash", "--layers", "l0", "--residual-dir",
                      str(tmp_path / "r"), "--mkdir", "--l0-stubs", "paper", "--check", "--no-progress")
    assert rc == 1 and "written audit files do not restore" in err, f"the corrupt audit file is caught: {err}"


def _options(command: str) -> dict[str, object]:
    """``{option string: argparse action}`` of one subcommand's parser."""
    sub = next(a for a in build_parser()._actions if a.dest == "command").choices[command]
    return {opt: a for a in sub._actions for opt in a.option_strings}


def test_trajectory_options_are_declared_once():
    """Issue 20 item 6: the trajectory-input options mean the same in every command that takes
    them (declared once in commands/_options): ``--device`` (the encoder's) in compact, pairs, sweep
    and compare, ``--window`` (cl100k tokens, default 512) in compact and pairs, and ``--l0-stubs``
    with the one list of rules in compact and sweep."""
    devices = {c: _options(c)["--device"] for c in ("compact", "pairs", "sweep", "compare")}
    assert len({(a.help, a.default) for a in devices.values()}) == 1, \
        f"--device differs between commands: {[(c, a.help, a.default) for c, a in devices.items()]}"
    windows = {c: _options(c)["--window"] for c in ("compact", "pairs")}
    assert {(a.default, a.help) for a in windows.values()} == {(DEFAULT_WINDOW, windows["compact"].help)}, \
        f"--window differs: {[(c, a.default, a.help) for c, a in windows.items()]}"
    for c in ("compact", "sweep"):
        a = _options(c)["--l0-stubs"]
        assert tuple(a.choices) == L0_STUB_RULES and a.default == "net-positive", \
            f"{c} --l0-stubs: choices {a.choices}, default {a.default}"
