"""The runnable examples in the docstrings of the public entry points pass (each module's
``Examples:`` sections, run with :mod:`doctest`)."""

from __future__ import annotations

import doctest
import importlib

import pytest

#: Modules whose public entry points carry runnable examples.
MODULES = [
    "lam_ref.geometry",
    "lam_ref.digest",
    "lam_ref.bands",
    "lam_ref.online",
    "lam_ref.codec",
    "lam_ref.verify",
    "lam_ref.strategies",
    "lam_ref.claims",
    "lam_ref.claims._base",
    "lam_ref.claims.eq1",
    "lam_ref.claims.def1",
    "lam_ref.claims.thm1",
    "lam_ref.claims.hull",
    "lam_ref.claims.cor1",
    "lam_ref.claims.prop1",
    "lam_ref.claims.cor2",
    "lam_ref.claims.prop2",
    "lam_ref.claims.thm2",
    "lam_ref.claims.cor3",
    "lam_ref.claims.gemlink",
    "lam_ref.text.lines",
    "lam_ref.conformance.runner",
]


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples_run(name):
    """Every example in the module's docstrings gives the output it shows."""
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE, verbose=False)
    assert result.failed == 0, f"{name}: {result.failed} of {result.attempted} doctest examples failed"
    if name not in {"lam_ref.claims._base"}:
        assert result.attempted > 0, f"{name} has no runnable example"
