"""No false alarms (docs/conformance.md, "How we know the suite works"): correct implementations pass the whole suite.

* an independently written implementation (:mod:`lam_ref.conformance.independent`, no lam_ref
  code, Gram-form distances, its own L0 stubs and codec format);
* lam_ref's exhaustive mode (``COMPLETE = True``) and banded mode (``COMPLETE = False``);
* the correct skeleton the mutants are built on.
"""

from __future__ import annotations

import ast
import inspect

import pytest

import lam_ref.conformance.independent as independent
from lam_ref.conformance import CHECKS, DEFAULT_IMPL, run_checks

CORRECT = [
    "lam_ref.conformance.independent",
    "lam_ref.conformance.adapter",
    "lam_ref.conformance.adapter_banded",
    "lam_ref.conformance.mutants.reference",
]


@pytest.mark.parametrize("spec", CORRECT)
def test_correct_implementation_passes_every_check(spec):
    """Every check passes or is skipped for a stated reason (COMPLETE-only checks for banded mode)."""
    results = run_checks(spec)
    failed = [(r.id, r.message) for r in results if r.outcome not in ("passed", "skipped")]
    assert not failed, f"{spec}: false alarms {failed}"
    assert len(results) == len(CHECKS), f"{spec}: ran {len(results)} of {len(CHECKS)} checks"
    skipped = {r.id: r.reason for r in results if r.outcome == "skipped"}
    if spec.endswith("adapter_banded"):
        want = {c.id for c in CHECKS if c.complete_only}
        assert set(skipped) == want, f"banded mode must skip exactly the COMPLETE-only checks {want}, skipped {skipped}"
        assert all("COMPLETE = False" in why for why in skipped.values()), f"skip reasons must say why: {skipped}"
    else:
        assert not skipped, f"{spec} provides every part, nothing may be skipped: {skipped}"


def test_default_implementation_is_the_exhaustive_adapter():
    """Without --lam-impl/LAM_IMPL, `make test` checks lam_ref's exhaustive adapter (COMPLETE = True)."""
    import lam_ref.conformance.adapter as adapter

    assert DEFAULT_IMPL == "lam_ref.conformance.adapter", f"default changed to {DEFAULT_IMPL}"
    assert adapter.COMPLETE is True and adapter.EXHAUSTIVE is True, "the default adapter must be exhaustive and complete"


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
