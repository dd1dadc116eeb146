"""Conformance: Algorithm 2 (SPEC §2, §5, §15): the map π, soundness, the oracle, the inclusive rule."""

import pytest

from lam_ref.conformance.checks import checks_for_area
from lam_ref.conformance.plugin import run_check

CHECKS = [pytest.param(c, id=c.id, marks=pytest.mark.claim(c.claim)) for c in checks_for_area("substitute")]


@pytest.mark.lam_conformance
@pytest.mark.parametrize("check", CHECKS)
def test_substitute(check, lam_impl, lam_ctx):
    """One check of the 'substitute' area against the implementation under test (see lam_ref.conformance.checks)."""
    run_check(check, lam_impl, lam_ctx)
