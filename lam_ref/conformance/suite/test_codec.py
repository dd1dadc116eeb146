"""Conformance: L2 error-bounded codec (SPEC §9)."""

import pytest

from lam_ref.conformance.checks import checks_for_area
from lam_ref.conformance.plugin import run_check

CHECKS = [pytest.param(c, id=c.id, marks=pytest.mark.claim(c.claim)) for c in checks_for_area("codec")]


@pytest.mark.lam_conformance
@pytest.mark.parametrize("check", CHECKS)
def test_codec(check, lam_impl, lam_ctx):
    """One check of the 'codec' area against the implementation under test (see lam_ref.conformance.checks)."""
    run_check(check, lam_impl, lam_ctx)
