"""Faults on a real Dask cluster of worker processes (docs/scale.md): a worker killed in the middle
of a run, and a client killed and restarted with ``--resume``, give the serial run's digests; a
resumed run does not recompute finished files."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

distributed = pytest.importorskip("distributed")
psutil = pytest.importorskip("psutil")

from lam_ref.cli import main  # noqa: E402
from lam_ref.distributed.trajectories import digests_from_report, input_files  # noqa: E402

from .datagen import outcome  # noqa: E402

pytestmark = pytest.mark.dask
ENV = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "false",
       "LAM_REF_DASK_PROCESSES": "1"}


def _corpus(root: Path, n: int) -> Path:
    """``n`` SWE-agent files of 40 steps each (repeated test output, file reads, edits)."""
    d = root / "runs"
    d.mkdir()
    for i in range(n):
        steps = []
        for k in range(40):
            body = "\n".join(f"line {k % 7} of module_{(i + k) % 5}.py: value = {(k * 31 + i) % 11}" for _ in range(30))
            steps.append({"action": f"cat module_{k % 5}.py", "observation": body, "thought": f"step {k}"})
        (d / f"task-{i:03d}.traj").write_text(json.dumps({"trajectory": steps}))
    return d


def _serial(tmp_path: Path, d: Path, capsys) -> tuple[dict, str]:
    out = tmp_path / "serial.json"
    assert main(["compact", str(d), "--encoder", "hash", "--json", str(out), "--no-progress"]) == 0
    capsys.readouterr()
    rep = json.loads(out.read_text())
    files = [p for p, _ in input_files([str(d)], None)[0]]
    return rep, digests_from_report(rep, files)[1]


def _start(d: Path, run: Path, out: Path, workers: int) -> subprocess.Popen:
    cmd = [sys.executable, "-m", "lam_ref.cli", "compact", str(d), "--encoder", "hash", "--workers", str(workers),
           "--resume", str(run), "--json", str(out), "--no-progress"]
    return subprocess.Popen(cmd, env=ENV, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            start_new_session=True)


def _wait_for_outputs(proc: subprocess.Popen, run: Path, k: int, timeout: float = 240.0) -> int:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        done = len(list((run / "files").glob("*.json"))) if (run / "files").is_dir() else 0
        if done >= k:
            return done
        if proc.poll() is not None:
            pytest.fail(f"the run ended before {k} files were done: {proc.stderr.read() if proc.stderr else ''}")
        time.sleep(0.05)
    pytest.fail(f"fewer than {k} files done after {timeout} s")


def _workers_of(proc: subprocess.Popen) -> list[psutil.Process]:
    kids = psutil.Process(proc.pid).children(recursive=True)
    return [p for p in kids if "resource_tracker" not in " ".join(p.cmdline())]


def test_killing_a_worker_mid_run_gives_the_serial_digests(tmp_path, capsys):
    """One of two worker processes is killed (SIGKILL) while files remain: Dask reruns its task on
    the other worker (or the restarted one); the atomic per-file outputs make the retry harmless."""
    n = 30
    d = _corpus(tmp_path, n)
    serial, serial_digest = _serial(tmp_path, d, capsys)
    run, out = tmp_path / "run", tmp_path / "dask.json"
    proc = _start(d, run, out, workers=2)
    try:
        done = _wait_for_outputs(proc, run, 3)
        workers = _workers_of(proc)
        assert len(workers) >= 2, f"two worker processes run under the command: {[w.cmdline() for w in workers]}"
        workers[0].send_signal(signal.SIGKILL)
        assert done < n, f"the worker was killed mid-run ({done} of {n} files done)"
        stdout, stderr = proc.communicate(timeout=300)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    assert proc.returncode == 0, f"the run completes after losing a worker: {stderr[-2000:]}"
    rep = json.loads(out.read_text())
    assert rep["distributed"]["corpus_digest"] == serial_digest, "corpus digest equals the serial run's"
    assert outcome(rep["total"]) == outcome(serial["total"]), "totals and global digests equal the serial run's"


def test_killed_client_resumes_without_recomputing(tmp_path, capsys, monkeypatch):
    """The client (and its local cluster) is killed; ``--resume`` then computes only the missing
    files (the finished outputs are not rewritten) and gives the serial digests."""
    n = 20
    d = _corpus(tmp_path, n)
    serial, serial_digest = _serial(tmp_path, d, capsys)
    run, out = tmp_path / "run", tmp_path / "dask.json"
    proc = _start(d, run, out, workers=1)
    try:
        _wait_for_outputs(proc, run, 3)
    finally:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate(timeout=60)
    finished = {p.name: p.stat().st_mtime_ns for p in (run / "files").glob("*.json")}
    assert 3 <= len(finished) < n, f"killed mid-run: {len(finished)} of {n} files finished"
    monkeypatch.setenv("LAM_REF_DASK_PROCESSES", "0")
    rc = main(["compact", str(d), "--encoder", "hash", "--workers", "1", "--resume", str(run), "--json", str(out),
               "--no-progress"])
    text = capsys.readouterr().out
    assert rc == 0, text
    rep = json.loads(out.read_text())
    assert rep["distributed"]["resumed"] >= len(finished), f"finished files are skipped: {rep['distributed']}"
    assert rep["distributed"]["computed"] == n - rep["distributed"]["resumed"], rep["distributed"]
    assert {k: (run / "files" / k).stat().st_mtime_ns for k in finished} == finished, "finished outputs untouched"
    assert rep["distributed"]["corpus_digest"] == serial_digest and outcome(rep["total"]) == outcome(serial["total"]), \
        "the resumed run gives the serial digests"
