"""``lam-ref conform`` cannot be fooled by how an implementation dies (issue 24 D4, D21; SPEC §15.3).

Each adapter below is written into a temporary folder and checked by a real ``lam-ref conform`` run:
a hang inside a check, ``os._exit(0)`` inside a check, a hang while importing, a raise while
importing, and an empty ``--impl``. Every one gives a failing verdict: exit 1 with a report whose
unfinished checks are failed (hangs, early exits), or one line and exit 2 (unusable input).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from lam_ref.conformance.report import validate_report

HANG = """
import lam_ref.conformance.witnesses.independent as _i
COMPLETE = True
def substitute(e, t):
    while True:  # a busy loop that never returns
        pass
"""
EXIT = """
import os
def substitute(e, t):
    os._exit(0)  # a library that ends the process, 'successfully'
"""
HANG_IMPORT = """
import time
time.sleep(10_000)
def substitute(e, t):
    return None
"""
RAISE_IMPORT = """
raise RuntimeError("the GPU driver is missing")
"""


def _conform(tmp_path: Path, *args: str, timeout: float = 240) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k not in ("LAM_IMPL", "PYTEST_ADDOPTS")}
    return subprocess.run([sys.executable, "-m", "lam_ref.cli", "conform", *args], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=timeout, check=False)


def _report(path: Path) -> dict:
    rep = json.loads(path.read_text())
    assert not validate_report(rep), f"report invalid: {validate_report(rep)}"
    return rep


def test_hanging_adapter_fails_with_a_report(tmp_path):
    """D4: a check that never returns is stopped at its deadline; exit 1, a report saying which check timed out."""
    (tmp_path / "hang.py").write_text(HANG)
    res = _conform(tmp_path, "--impl", "hang", "--check-timeout", "3", "-k", "exact_ties or contract", "--json", "r.json")
    assert res.returncode == 1, f"a hang must fail, got {res.returncode}\n{res.stdout[-1500:]}{res.stderr[-1500:]}"
    assert "FAILED" in res.stderr and "deadline" in res.stderr, res.stderr[-1500:]
    rep = _report(tmp_path / "r.json")
    assert rep["run"]["status"] == "timed_out", rep["run"]
    assert rep["summary"]["failed"] >= 1 and rep["summary"]["passed"] == 0, rep["summary"]
    assert rep["profiles"]["core"]["verdict"] == "failed", rep["profiles"]["core"]


def test_os_exit_zero_is_not_a_pass(tmp_path):
    """D4: an adapter calling os._exit(0) inside a check used to give exit 0 with no report; now exit 1 and a
    report with status crashed and every unfinished check failed."""
    (tmp_path / "quits.py").write_text(EXIT)
    res = _conform(tmp_path, "--impl", "quits", "-k", "substitute", "--json", "r.json")
    assert res.returncode == 1, f"os._exit(0) must not pass, got {res.returncode}\n{res.stdout[-1500:]}"
    assert "without finishing the run" in res.stderr, res.stderr[-1500:]
    rep = _report(tmp_path / "r.json")
    assert rep["run"]["status"] == "crashed" and rep["run"]["exit_code"] == 0, rep["run"]
    assert rep["summary"]["passed"] == 0 and rep["summary"]["failed"] >= 1, rep["summary"]
    assert all(t["outcome"] != "passed" for t in rep["tests"]), "no check may pass in a run that died"


def test_hanging_import_fails_at_its_deadline(tmp_path):
    """D4: an import that blocks is held to the same deadline: exit 1 and a timed-out report."""
    (tmp_path / "slow_import.py").write_text(HANG_IMPORT)
    res = _conform(tmp_path, "--impl", "slow_import", "--check-timeout", "3", "--json", "r.json")
    assert res.returncode == 1, f"a blocking import must fail, got {res.returncode}\n{res.stderr[-1500:]}"
    rep = _report(tmp_path / "r.json")
    assert rep["run"]["status"] == "timed_out" and "loading the implementation" in rep["run"]["message"], rep["run"]


def test_raising_import_is_one_line_exit_2(tmp_path):
    """An implementation that raises at import is an unusable input: one line naming it and the cause, exit 2,
    no report written."""
    (tmp_path / "broken_gpu.py").write_text(RAISE_IMPORT)
    res = _conform(tmp_path, "--impl", "broken_gpu", "--json", "r.json")
    assert res.returncode == 2, f"got {res.returncode}\n{res.stdout}{res.stderr}"
    lines = [line for line in (res.stdout + res.stderr).splitlines() if line.strip()]
    assert len(lines) == 1 and "broken_gpu" in lines[0] and "GPU driver is missing" in lines[0], lines
    assert not (tmp_path / "r.json").exists(), "a usage error must write nothing"


def test_empty_or_missing_impl_is_one_line_exit_2(tmp_path):
    """D21 and issue 20 item 8: `--impl ''` and no implementation at all are refused (no silent self-test)."""
    for args in (["--impl", ""], ["--impl", "   "], []):
        res = _conform(tmp_path, *args)
        lines = [line for line in (res.stdout + res.stderr).splitlines() if line.strip()]
        assert res.returncode == 2 and len(lines) == 1, f"{args}: rc {res.returncode}, output {lines}"
        assert "--lam-impl=pkg.module" in lines[0] or "--impl" in lines[0], lines[0]


def test_unknown_profile_is_one_line_exit_2(tmp_path):
    """issue 21 'Bad input': an unknown profile: one line naming it, exit 2."""
    (tmp_path / "claims.py").write_text("from lam_ref.conformance.witnesses.independent import substitute\nPROFILES = {'core', 'codec-v9'}\n")
    res = _conform(tmp_path, "--impl", "claims")
    lines = [line for line in (res.stdout + res.stderr).splitlines() if line.strip()]
    assert res.returncode == 2 and len(lines) == 1 and "codec-v9" in lines[0], (res.returncode, lines)


WRONG = """
import numpy as np
def substitute(e, t):
    return np.arange(len(e))[::-1].copy()  # a wrong map: fails its first check at once
"""


def test_a_run_stopped_early_is_incomplete_and_names_the_missing_checks(tmp_path):
    """Issue 39 §4: pytest stopped after the first failure (``-- -x``) ends normally, but the checks
    it collected and never ran have no result: the report never says ``completed``; it says
    ``incomplete``, names every missing check, and reports each one failed (exit 1)."""
    (tmp_path / "wrong.py").write_text(WRONG)
    res = _conform(tmp_path, "--impl", "wrong", "-k", "exact_ties or contract", "--json", "r.json", "--", "-x")
    assert res.returncode == 1, f"want exit 1, got {res.returncode}\n{res.stdout[-1500:]}{res.stderr[-1500:]}"
    rep = _report(tmp_path / "r.json")
    ran = [t for t in rep["tests"] if not (t["message"] or "").startswith("not completed")]
    missing = [t["id"] for t in rep["tests"] if (t["message"] or "").startswith("not completed")]
    assert rep["run"]["status"] == "incomplete", f"a run missing checks said {rep['run']}"
    assert missing and all(m in rep["run"]["message"] for m in missing), \
        f"the run's message must name every missing check {missing}: {rep['run']['message']}"
    assert len(ran) >= 1 and all(t["outcome"] == "failed" for t in rep["tests"] if t["id"] in missing), rep["tests"]
    assert "incomplete" in res.stderr, res.stderr[-1500:]
