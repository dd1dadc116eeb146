"""The residual folder (lam_ref.text.residuals; SPEC §8, reliability D8, D11): a residual never
without its audit store, one writer at a time, a lock a killed run does not leave blocking."""

from __future__ import annotations

import fcntl
import json
import os

from lam_ref.text.residuals import LOCK_NAME

from ..datagen import one_error_line, run_cli, swe_agent_traj, swe_corpus


def test_d11_a_second_run_into_the_same_residual_dir_needs_overwrite(tmp_path, capsys):
    """D11: a second run into a --residual-dir holding an earlier run's files is refused (exit 2)
    and leaves them byte for byte; ``--overwrite`` replaces them."""
    d = swe_corpus(tmp_path, 1)
    res = tmp_path / "res"
    argv = ["compact", str(d), "--encoder", "hash", "--no-progress", "--residual-dir", str(res), "--mkdir"]
    assert run_cli(capsys, *argv)[0] == 0
    first = {p.name: p.read_bytes() for p in res.iterdir()}
    (d / "t0.traj").write_text(json.dumps(swe_agent_traj(5)))
    rc, _, err = run_cli(capsys, *argv)
    assert rc == 2 and "--overwrite" in one_error_line(err), f"refused, naming --overwrite: {rc} {err!r}"
    assert {p.name: p.read_bytes() for p in res.iterdir()} == first, "the first run's files are untouched"
    rc, _, err = run_cli(capsys, *argv, "--overwrite")
    assert rc == 0, err
    assert (res / "t0.audit.json").read_bytes() != first["t0.audit.json"], "--overwrite replaced the store"


def test_d11_a_concurrent_writer_is_refused_while_the_lock_is_held(tmp_path, capsys):
    """D11: while another run holds the folder's lock, a run into it is refused (exit 2) naming the
    lock; when the holder is gone (closed or killed: flock) the folder can be used again."""
    d = swe_corpus(tmp_path, 1)
    res = tmp_path / "res"
    res.mkdir()
    with open(res / LOCK_NAME, "a+b") as held:
        fcntl.flock(held.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        rc, _, err = run_cli(capsys, "compact", str(d), "--encoder", "hash", "--no-progress", "--residual-dir", str(res))
        assert rc == 2 and LOCK_NAME in one_error_line(err), f"refused while locked: {rc} {err!r}"
        assert not list(res.glob("*.audit.json")), "nothing was written while another run held the folder"
    rc, _, err = run_cli(capsys, "compact", str(d), "--encoder", "hash", "--no-progress", "--residual-dir", str(res))
    assert rc == 0 and (res / "t0.audit.json").is_file(), f"usable once the lock is released: {err}"


def test_d8_a_residual_without_its_audit_store_fails_restore(tmp_path, capsys):
    """D8: ``restore DIR`` with a residual whose audit store is missing (a kill between the two
    writes) reports it as failed and exits 1; the others still restore."""
    d = swe_corpus(tmp_path, 2)
    res = tmp_path / "res"
    assert run_cli(capsys, "compact", str(d), "--encoder", "hash", "--no-progress", "--residual-dir", str(res),
                "--mkdir")[0] == 0
    (res / "t1.audit.json").unlink()
    rc, out, err = run_cli(capsys, "restore", str(res))
    assert rc == 1, f"exit 1 expected: {rc} {out} {err}"
    failed = [x for x in err.splitlines() if ": failed: " in x]
    assert len(failed) == 1 and "t1.residual.jsonl" in failed[0] and "audit store" in failed[0], err
    assert "1 of 2 trajectories restored" in out, f"both residuals counted: {out}"


def test_d11_a_killed_run_leaves_no_lock_that_blocks_the_next(tmp_path, capsys):
    """D11: the lock is an ``flock``: a run killed with SIGKILL while holding the folder leaves at
    most the lock file, which does not block the next run; a finished run removes it."""
    import signal
    import subprocess
    import sys
    import time

    d = swe_corpus(tmp_path, 1)
    res = tmp_path / "res"
    res.mkdir()
    holder = subprocess.Popen([sys.executable, "-c", (
        "import sys, time\nfrom lam_ref.text.residuals import claim_residual_dir\n"
        f"with claim_residual_dir({str(res)!r}):\n    print('held', flush=True)\n    time.sleep(60)\n")],
        stdout=subprocess.PIPE, text=True, env=dict(os.environ, PYTHONPATH=os.getcwd()))
    try:
        assert holder.stdout.readline().strip() == "held", "the holder took the lock"
        rc, _, err = run_cli(capsys, "compact", str(d), "--encoder", "hash", "--no-progress", "--residual-dir", str(res))
        assert rc == 2 and LOCK_NAME in one_error_line(err), f"refused while held: {rc} {err!r}"
    finally:
        holder.send_signal(signal.SIGKILL)
        holder.wait(timeout=30)
    time.sleep(0.1)
    rc, _, err = run_cli(capsys, "compact", str(d), "--encoder", "hash", "--no-progress", "--residual-dir", str(res))
    assert rc == 0, f"the killed holder does not block: {err}"
    assert not (res / LOCK_NAME).exists(), "a finished run removes its lock file"
