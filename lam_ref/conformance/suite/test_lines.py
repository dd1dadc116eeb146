"""Conformance: L0 exact line deduplication (SPEC §7)."""

import pytest

from lam_ref.conformance.checks import checks_for_area
from lam_ref.conformance.plugin import run_check

CHECKS = [pytest.param(c, id=c.id, marks=pytest.mark.claim(c.claim)) for c in checks_for_area("lines")]


@pytest.mark.lam_conformance
@pytest.mark.parametrize("check", CHECKS)
def test_lines(check, lam_impl, lam_ctx):
    """One check of the 'lines' area against the implementation under test (see lam_ref.conformance.checks)."""
    run_check(check, lam_impl, lam_ctx)
