"""The conformance suite as one parametrised pytest test: one case per registered check
(:data:`lam_ref.conformance.registry.CHECKS`, ids ``area.name``), marked with the claim it covers.

A check added to any module of :mod:`lam_ref.conformance.checks` is collected without an edit
here. Select an area or a check with ``-k`` (``-k codec.``, ``-k substitute.boundary``)."""

import pytest

from lam_ref.conformance.plugin import run_check
from lam_ref.conformance.registry import CHECKS

PARAMS = [pytest.param(c, id=c.id, marks=pytest.mark.claim(c.claim)) for c in CHECKS]


@pytest.mark.lam_conformance
@pytest.mark.parametrize("check", PARAMS)
def test_check(check, lam_impl, lam_ctx):
    """One check against the implementation under test (``--lam-impl`` / ``$LAM_IMPL``)."""
    run_check(check, lam_impl, lam_ctx)
