"""The runnable examples in the docstrings of the public entry points pass (each module's
``Examples:`` sections, run with :mod:`doctest`)."""

from __future__ import annotations

import doctest
import importlib
import pkgutil

import pytest

import lam_ref

#: Every module of the package: any example written in a docstring is run.
ALL_MODULES = sorted(
    m.name for m in pkgutil.walk_packages(lam_ref.__path__, "lam_ref.") if "._vendor" not in m.name
)

#: Modules whose public entry points must carry runnable examples (the API pages' core).
WITH_EXAMPLES = {
    "lam_ref.geometry",
    "lam_ref.digest",
    "lam_ref.bands",
    "lam_ref.online",
    "lam_ref.codec",
    "lam_ref.verify",
    "lam_ref.strategies",
    "lam_ref.claims",
    "lam_ref.conformance.runner",
    "lam_ref.theory",
    "lam_ref.tables",
}


def test_modules_with_examples_exist():
    """The modules required to carry examples are modules of the package."""
    missing = WITH_EXAMPLES - set(ALL_MODULES)
    assert not missing, f"not modules of lam_ref: {sorted(missing)}"


@pytest.mark.parametrize("name", ALL_MODULES)
def test_docstring_examples_run(name):
    """Every example in the module's docstrings gives the output it shows."""
    try:
        module = importlib.import_module(name)
    except ImportError as exc:  # an optional extra (cupy, faiss, ...) absent here
        pytest.skip(f"{name} needs an optional dependency: {exc}")
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE, verbose=False)
    assert result.failed == 0, f"{name}: {result.failed} of {result.attempted} doctest examples failed"
    if name in WITH_EXAMPLES:
        assert result.attempted > 0, f"{name} has no runnable example"
