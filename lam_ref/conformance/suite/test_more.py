"""Conformance: every registered check outside the five base areas (e.g. ``vectors.*``, or checks
of ``lam_ref.conformance.checks_extra``), so a check module added to the registry is collected
without a new suite file."""

import pytest

from lam_ref.conformance.plugin import run_check
from lam_ref.conformance.registry import CHECKS

BASE_AREAS = ("substitute", "online", "validation", "lines", "codec")
MORE = [pytest.param(c, id=c.id, marks=pytest.mark.claim(c.claim)) for c in CHECKS if c.area not in BASE_AREAS]


@pytest.mark.lam_conformance
@pytest.mark.parametrize("check", MORE or [pytest.param(None, marks=pytest.mark.skip(reason="no checks outside the base areas"))])
def test_more(check, lam_impl, lam_ctx):
    """One check of another area against the implementation under test (see lam_ref.conformance.registry)."""
    run_check(check, lam_impl, lam_ctx)
