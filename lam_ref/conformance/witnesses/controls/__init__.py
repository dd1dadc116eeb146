"""Allowed alternatives (controls): implementations the suite MUST pass (issue 21 §5).

Each module ``cNN_*.py`` differs from a correct skeleton in one way the spec permits (another
distance formula inside the tie band, another batching or internal block size, another valid
reading), states it in ``ALLOWED`` and sets ``CONTROL = True``. ``tests/conformance/test_mutants.py``
requires every control to pass every check: a control that fails is a false alarm of the suite.
``c00_base2`` is the mutants' second skeleton (:mod:`..mutants._base2`) exported unchanged.
"""

from __future__ import annotations

import importlib
import pkgutil
import re
import types

__all__ = ["control_names", "load_controls"]


def control_names() -> list[str]:
    """Dotted names of every shipped control, in order."""
    return [f"{__name__}.{m.name}" for m in sorted(pkgutil.iter_modules(__path__), key=lambda m: m.name) if re.match(r"c\d\d_", m.name)]


def load_controls() -> list[types.ModuleType]:
    """The control modules (each has ``ALLOWED`` and ``CONTROL = True``)."""
    return [importlib.import_module(n) for n in control_names()]
