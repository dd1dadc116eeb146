"""The C outsider (tests/outsiders/c, issue 38 Deliver §6): a docs-only implementation in C11.

``lam.c`` was written from the docs alone and speaks the exec protocol (SPEC §15.2). The careful
build must pass every check and every vector of the profiles it claims (no false alarm of the suite
on an implementation it never saw), and a few of its deliberate bug builds (``-DBUG=n``,
tests/outsiders/c/bugs.md) must be caught by the check that caught them when the round was measured
(docs/conformance-mutants.md, "Outsider rounds"). Skips without gcc.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from lam_ref.conformance.impl import load_implementation
from lam_ref.conformance.runner import run_checks
from lam_ref.conformance.vectors.run import run_vectors
from lam_ref.conformance.witnesses.outsiders import C_REMEASURED_MISSED, C_REMEASURED_NEW, C_ROUND

GCC = shutil.which("gcc")
HERE = Path(__file__).resolve().parent / "outsiders" / "c"
SOURCE = HERE / "lam.c"
CLAIMED = ("core", "online", "l0", "l0-stubs", "codec-bound", "codec-v1", "codec-v2")

# bug -> the check that caught it in the recorded round (tests/outsiders/c/results.json); each is a
# cheap check, so that the whole module stays well under a minute on two shared cores.
CAUGHT = {
    9: "substitute.exact_ties",  # early exit at s >= δ²: an exact tie is not merged (SPEC §2.1)
    16: "lines.stub_format",  # stub lines not counted in the output line index (SPEC §8.1)
    22: "vectors.codec-v1",  # lround: ties rounded away from zero (codec page, rounding rule)
    37: "vectors.codec-v2",  # Huffman ties go to the merged node (codec page, code lengths)
    12: "validation.online",  # a dimension change reported as IndexError, not ValueError (SPEC §2.3)
}

needs_gcc = pytest.mark.skipif(GCC is None, reason="gcc is not installed: the C outsider cannot be built")


def build(tmp_path: Path, bug: int = 0) -> Path:
    """Compile lam.c with the flags its README gives (``-DBUG=bug`` for a bug build)."""
    exe = tmp_path / f"lam_bug{bug}"
    cmd = [GCC, "-O2", "-std=c11", "-Wall", "-Wextra", f"-DBUG={bug}", "-o", str(exe), str(SOURCE), "-lm"]
    done = subprocess.run(cmd, capture_output=True, text=True, check=False)
    assert done.returncode == 0, f"gcc failed on {SOURCE.name} with BUG={bug}: {done.stderr[-800:]}"
    if bug == 0:
        assert "warning" not in done.stderr, f"the careful build must compile without warnings: {done.stderr[-800:]}"
    return exe


@needs_gcc
def test_careful_c_outsider_passes_every_check_and_every_vector(tmp_path):
    """SPEC §15: the docs-only C implementation passes every check and vector it claims (no false alarm)."""
    exe = build(tmp_path)
    results = run_checks(f"exec:{exe}")
    failed = [f"{r.id}: {(r.message or '').splitlines()[0] if r.message else r.exception}" for r in results
              if r.outcome == "failed"]
    assert not failed, "the careful C outsider fails checks (a false alarm, or a bug in lam.c):\n" + "\n".join(failed)
    passed = {r.id for r in results if r.outcome == "passed"}
    assert len(passed) >= 40, f"only {len(passed)} checks passed; the claimed profiles were not run: {sorted(passed)}"
    impl = load_implementation(f"exec:{exe}")
    try:
        assert set(CLAIMED) <= set(impl.profiles), f"lam.c claims {sorted(impl.profiles)}, expected {CLAIMED}"
        bad = {p: [str(f).splitlines()[0] for f in run_vectors(impl, p)] for p in CLAIMED}
    finally:
        impl.close()
    bad = {p: f for p, f in bad.items() if f}
    assert not bad, f"the careful C outsider fails vectors (LargeIds included): {bad}"


@needs_gcc
@pytest.mark.parametrize("bug", sorted(CAUGHT))
def test_c_outsider_bug_is_caught(tmp_path, bug):
    """Each listed bug build of the C outsider fails the check recorded as catching it."""
    exe = build(tmp_path, bug)
    check = CAUGHT[bug]
    results = run_checks(f"exec:{exe}", select=[check])
    outcomes = {r.id: r.outcome for r in results}
    assert outcomes.get(check) == "failed", (
        f"BUG={bug} (tests/outsiders/c/bugs.md) is no longer caught by {check}: outcomes {outcomes}"
    )


def test_outsider_page_matches_the_recorded_round():
    """docs/conformance-mutants.md's C round (witnesses.outsiders.C_ROUND) is tests/outsiders/c/results.json."""
    record = json.loads((HERE / "results.json").read_text())
    assert not record["careful"]["caught"], f"the recorded careful build failed: {record['careful']}"
    caught = {b["bug"]: b["caught"] for b in record["bugs"]}
    page = {bug: bool(by) for bug, (_, _, by) in C_ROUND.items()}
    assert page == caught, f"the page's caught/missed differs from results.json: page {page}, record {caught}"
    for bug, (_, _, by) in C_ROUND.items():
        run = next(b for b in record["bugs"] if b["bug"] == bug)
        missing = [c for c in run["checks_failed"] if c not in by]
        assert not missing, f"BUG={bug}: checks {missing} caught it in results.json but are not on the page"
    for bug, check in CAUGHT.items():
        assert check in C_ROUND[bug][2], f"BUG={bug}: {check} is not recorded as catching it"


def test_outsider_page_matches_the_remeasured_round():
    """The re-measurement after issue 38 (witnesses.outsiders.C_REMEASURED_*) is results_after_issue38.json:
    the missed bugs are exactly those listed, and each newly caught bug is caught by the checks named."""
    record = json.loads((HERE / "results_after_issue38.json").read_text())
    assert not record["careful"]["caught"], f"the careful build failed in the re-measurement: {record['careful']}"
    missed = {b["bug"] for b in record["bugs"] if not b["caught"]}
    assert missed == set(C_REMEASURED_MISSED), f"missed bugs {sorted(missed)} differ from the page's {sorted(C_REMEASURED_MISSED)}"
    for bug, checks in C_REMEASURED_NEW.items():
        run = next(b for b in record["bugs"] if b["bug"] == bug)
        assert set(checks) <= set(run["checks_failed"]), f"BUG={bug}: {checks} not among {run['checks_failed']}"
        assert not C_ROUND[bug][2], f"BUG={bug} was already caught in round 4; it is not newly caught"
