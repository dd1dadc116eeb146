"""No false alarms (docs/conformance.md, "How we know the suite works"): correct implementations pass the whole suite.

* an independently written implementation (:mod:`lam_ref.conformance.witnesses.independent`, no lam_ref
  code, Gram-form distances, its own L0 stubs and codec format);
* lam_ref's exhaustive mode (``COMPLETE = True``) and banded mode (``COMPLETE = False``);
* the correct skeleton the mutants are built on.
"""

from __future__ import annotations

import ast
import inspect

import pytest

import lam_ref.conformance.witnesses.independent as independent
from lam_ref.conformance import CHECKS, DEFAULT_IMPL, run_checks

CORRECT = [
    "lam_ref.conformance.witnesses.independent",
    "lam_ref.conformance.adapter",
    "lam_ref.conformance.adapter_banded",
    "lam_ref.conformance.witnesses.mutants.reference",
]


#: What each correct implementation claims (SPEC §15.4), stated here rather than read from it.
CLAIMS = {
    "lam_ref.conformance.witnesses.independent": {"core", "online", "l0", "codec-bound"},
    "lam_ref.conformance.adapter": {"core", "online", "l0", "l0-stubs", "codec-bound", "codec-v1", "codec-v2",
                                   "session-v1"},
    "lam_ref.conformance.adapter_banded": {"core", "online", "l0", "l0-stubs", "codec-bound", "codec-v1"},
    "lam_ref.conformance.witnesses.mutants.reference": {"core", "online", "l0", "codec-bound"},  # default set: no PROFILES
}


@pytest.mark.parametrize("spec", CORRECT)
def test_correct_implementation_passes_every_check(spec):
    """Every check of a claimed profile passes; a check is skipped exactly when none of its profiles is
    claimed (or, for banded mode, when it is COMPLETE-only), always with the reason; each claimed
    profile's verdict is passed, each other one skipped (SPEC §15.4)."""
    from lam_ref.conformance.profiles import profile_verdicts

    results = run_checks(spec)
    failed = [(r.id, r.message) for r in results if r.outcome not in ("passed", "skipped")]
    assert not failed, f"{spec}: false alarms {failed}"
    assert len(results) == len(CHECKS), f"{spec}: ran {len(results)} of {len(CHECKS)} checks"
    claims = CLAIMS[spec]
    skipped = {r.id: r.reason for r in results if r.outcome == "skipped"}
    unclaimed = {c.id for c in CHECKS if not set(c.profiles) & claims}
    complete_only = {c.id for c in CHECKS if c.complete_only} if spec.endswith("adapter_banded") else set()
    assert set(skipped) == unclaimed | complete_only, (
        f"{spec} must skip exactly the checks of unclaimed profiles {sorted(unclaimed)} and COMPLETE-only ones "
        f"{sorted(complete_only)}; skipped {sorted(skipped)}"
    )
    for cid, why in skipped.items():
        wants = ("COMPLETE = False",) if cid in complete_only - unclaimed else ("not declared", "not provided")
        assert any(w in why for w in wants), f"{spec}: {cid} skipped without a reason naming why: {why!r}"
    verdicts = profile_verdicts(claims, [r.to_json() for r in results])
    for name, v in verdicts.items():
        expected = "passed" if name in claims else "skipped"
        assert v["verdict"] == expected, f"{spec}: profile {name} verdict {v['verdict']} ({v['reason']}), expected {expected}"


def test_there_is_no_silent_default_implementation():
    """issue 20 item 8: with neither --lam-impl nor LAM_IMPL (or an empty name) the suite refuses, saying how to
    choose; lam_ref's own test run chooses its exhaustive adapter explicitly (conftest.py)."""
    import os

    import lam_ref.conformance.adapter as adapter
    from lam_ref.conformance.impl import resolve_spec
    from lam_ref.geometry import LamValueError

    saved = os.environ.pop("LAM_IMPL", None)
    try:
        for bad in (None, "", "  "):
            with pytest.raises(LamValueError, match="--lam-impl=pkg.module") as info:
                resolve_spec(bad)
            assert "\n" not in str(info.value), f"the refusal must be one line: {info.value}"
        os.environ["LAM_IMPL"] = ""
        with pytest.raises(LamValueError, match="LAM_IMPL is set but empty"):
            resolve_spec(None)
    finally:
        os.environ.pop("LAM_IMPL", None)
        if saved is not None:
            os.environ["LAM_IMPL"] = saved
    assert DEFAULT_IMPL == "lam_ref.conformance.adapter", f"lam_ref's adapter name changed to {DEFAULT_IMPL}"
    assert adapter.COMPLETE is True and adapter.EXHAUSTIVE is True, "lam_ref's own adapter must be exhaustive and complete"


def test_independent_implementation_shares_no_code_with_lam_ref():
    """Independence is structural: the second implementation imports only numpy, xxhash and the stdlib."""
    tree = ast.parse(inspect.getsource(independent))
    imported = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            imported |= {a.name.split(".")[0] for a in node.names}
        elif isinstance(node, ast.ImportFrom):
            assert node.level == 0, f"relative import in the independent implementation: {ast.dump(node)}"
            imported.add((node.module or "").split(".")[0])
    assert "lam_ref" not in imported, f"independent implementation imports lam_ref: {imported}"
    assert imported <= {"__future__", "math", "struct", "typing", "numpy", "xxhash"}, f"unexpected imports {imported}"
