"""Issue 39 §4: a residual folder binds each audit store to its own files and run. Two swapped
residual/audit pairs are refused by name (not restored under each other's names), a run killed
while ``--overwrite`` replaces a folder never leaves a new residual beside an old store that
``restore`` accepts, and a folder mixing the stores of two runs is reported. Hash encoder throughout
(docs/reliability.md)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from .datagen import run_cli, swe_corpus


def _compact(capsys, inputs: list[str], out: Path, *extra: str) -> None:
    rc, _, err = run_cli(capsys, "compact", *inputs, "--encoder", "hash", "--no-progress", "--residual-dir", str(out),
                      "--mkdir", *extra)
    assert rc == 0, f"compact failed: {err}"


def _failed(err: str) -> list[str]:
    return [x for x in err.splitlines() if ": failed: " in x]


def test_swapped_residual_audit_pairs_are_refused_naming_both(tmp_path, capsys):
    """Two trajectories' pairs swapped by name (t0's files renamed to t1's and back) restored each
    trajectory under the other's name with exit 0; now each store names the files it belongs to,
    and restore refuses both, naming the store's own name and the name it was found under."""
    d = swe_corpus(tmp_path)
    out = tmp_path / "out"
    _compact(capsys, [str(d)], out)
    for suffix in (".residual.jsonl", ".audit.json"):
        a, b, tmp = out / f"t0{suffix}", out / f"t1{suffix}", out / f"swap{suffix}.tmp"
        a.rename(tmp)
        b.rename(a)
        tmp.rename(b)
    rc, _, err = run_cli(capsys, "restore", str(out))
    failed = _failed(err)
    assert rc == 1, f"restore of swapped pairs must fail, got rc={rc}: {err}"
    assert len(failed) == 2 and all("'t0'" in f and "'t1'" in f and "swapped" in f for f in failed), \
        f"each failure must name both trajectories: {failed}"


_KILL_AT_SECOND_STORE = """
import os, signal, sys
from lam_ref.text.audit import AuditStore
from lam_ref.cli import main
save, calls = AuditStore.save, []
def killing_save(self, path):
    calls.append(path)
    if len(calls) == 2:
        os.kill(os.getpid(), signal.SIGKILL)  # killed between the residual and its store
    return save(self, path)
AuditStore.save = killing_save
sys.exit(main(sys.argv[1:]))
"""


def test_a_run_killed_during_overwrite_leaves_no_pair_restore_accepts(tmp_path, capsys):
    """A run SIGKILLed while ``--overwrite`` replaces a folder, between writing a trajectory's new
    residual and its new store: the old store is removed before the residual is replaced, so the
    new residual is left without a store and restore fails naming it (exit 1), instead of
    accepting the new residual beside the old store."""
    d = swe_corpus(tmp_path)
    out = tmp_path / "out"
    _compact(capsys, [str(d)], out)
    res = subprocess.run([sys.executable, "-c", _KILL_AT_SECOND_STORE, "compact", str(d), "--encoder", "hash",
                          "--no-progress", "--residual-dir", str(out), "--overwrite"],
                         capture_output=True, text=True, timeout=300, check=False)
    assert res.returncode == -9, f"the run was to be killed: rc={res.returncode} {res.stderr[-800:]}"
    rc, _, err = run_cli(capsys, "restore", str(out))
    failed = _failed(err)
    assert rc == 1 and len(failed) == 1 and "t1.residual.jsonl" in failed[0], \
        f"the half-replaced trajectory must fail restore by name: rc={rc} {err}"


_KILL_BETWEEN_TRAJECTORIES = """
import os, signal, sys
from lam_ref.text.residuals import ResidualWriter
from lam_ref.cli import main
write, calls = ResidualWriter.write, []
def killing_write(self, res, name=None):
    calls.append(res)
    if len(calls) == 2:
        os.kill(os.getpid(), signal.SIGKILL)  # t0 replaced, t1 not yet touched
    return write(self, res, name)
ResidualWriter.write = killing_write
sys.exit(main(sys.argv[1:]))
"""


def test_a_folder_a_killed_run_left_mixed_is_reported(tmp_path, capsys):
    """Killed between two trajectories, an ``--overwrite`` run leaves t0's new pair beside t1's old
    one: each pair restores, but restore reports that the last run writing the folder did not
    finish, so the folder may mix two runs' files (a warning line, ``unfinished_runs`` in the JSON)."""
    d = swe_corpus(tmp_path)
    out = tmp_path / "out"
    _compact(capsys, [str(d)], out)
    res = subprocess.run([sys.executable, "-c", _KILL_BETWEEN_TRAJECTORIES, "compact", str(d), "--encoder", "hash",
                          "--no-progress", "--residual-dir", str(out), "--overwrite", "--threshold", "0.5"],
                         capture_output=True, text=True, timeout=300, check=False)
    assert res.returncode == -9, f"the run was to be killed: rc={res.returncode} {res.stderr[-800:]}"
    rc, _, err = run_cli(capsys, "restore", str(out), "--json", str(tmp_path / "r.json"))
    warnings = [x for x in err.splitlines() if ": warning: " in x]
    assert len(warnings) == 1 and "did not finish" in warnings[0] and str(out) in warnings[0], \
        f"a folder a killed run left must be reported: {err}"
    report = json.loads((tmp_path / "r.json").read_text())
    assert report["unfinished_runs"] == {str(out): "killed"}, f"unfinished_runs: {report['unfinished_runs']}"


def _dask_compact(capsys, *argv: str) -> tuple[int, str, str]:
    return run_cli(capsys, "compact", *argv, "--encoder", "hash", "--workers", "1", "--no-progress")


def test_resume_with_a_new_run_folder_never_replaces_an_earlier_runs_files(tmp_path, capsys, monkeypatch):
    """``--resume NEW`` continues nothing: a ``--residual-dir`` holding an earlier run's files is
    refused as without ``--resume`` (exit 2, the files unchanged), where it was silently replaced."""
    monkeypatch.setenv("LAM_REF_DASK_PROCESSES", "0")
    d = swe_corpus(tmp_path)
    out = tmp_path / "out"
    _compact(capsys, [str(d)], out)
    before = {p.name: p.read_bytes() for p in out.iterdir()}
    rc, _, err = _dask_compact(capsys, str(d), "--residual-dir", str(out), "--resume", str(tmp_path / "new-run"))
    assert rc == 2 and "earlier run" in err and "--overwrite" in err, f"want a refusal naming --overwrite: rc={rc} {err}"
    assert {p.name: p.read_bytes() for p in out.iterdir()} == before, "the earlier run's files were changed"


def test_an_edited_run_folder_record_is_refused_on_resume(tmp_path, capsys, monkeypatch):
    """A resumed report is built from the run folder's per-file records: one edited after it was
    written changed the report while the corpus digest stayed the same; now each record carries its
    SHA-256 and the resumed run refuses the edited one in one line naming it (exit 2)."""
    monkeypatch.setenv("LAM_REF_DASK_PROCESSES", "0")
    d = swe_corpus(tmp_path)
    run = tmp_path / "run"
    rc, _, err = _dask_compact(capsys, str(d), "--resume", str(run), "--json", str(tmp_path / "a.json"))
    assert rc == 0, err
    rec_path = sorted((run / "files").glob("*.json"))[0]
    rec = json.loads(rec_path.read_text())
    rec["summaries"][0]["tokens_original"] += 1000  # an edit the report would show
    rec_path.write_text(json.dumps(rec))
    rc, _, err = _dask_compact(capsys, str(d), "--resume", str(run), "--json", str(tmp_path / "b.json"))
    lines = [x for x in err.splitlines() if "error:" in x]
    assert rc == 2 and len(lines) == 1 and rec_path.name in lines[0] and "edited" in lines[0], \
        f"an edited record must be refused by name: rc={rc} {err}"
    assert not (tmp_path / "b.json").exists(), "no report may be built from an edited record"


def test_resume_with_mkdir_creates_the_missing_folders(tmp_path, capsys, monkeypatch):
    """``--resume a/b/run --mkdir`` creates the missing parents, where it still said "pass --mkdir"."""
    monkeypatch.setenv("LAM_REF_DASK_PROCESSES", "0")
    d = swe_corpus(tmp_path)
    run = tmp_path / "a" / "b" / "run"
    rc, _, err = _dask_compact(capsys, str(d), "--resume", str(run), "--mkdir", "--json", str(tmp_path / "r.json"))
    assert rc == 0 and "pass --mkdir" not in err, f"--mkdir was given: rc={rc} {err}"
    assert (run / "settings.json").is_file(), "the run folder was not created"
