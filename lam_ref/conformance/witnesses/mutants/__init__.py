"""Deliberately wrong implementations of SPEC §15: the proof that the suite catches real bugs.

Each module ``mNN_*.py`` is a small SPEC §15 implementation (a subclass of
:class:`~lam_ref.conformance.witnesses.mutants._base.Base`) with **one** realistic bug, a ``BUG`` sentence
and ``VIOLATES``, the claim ID the suite must name when it rejects it. The meta-test
``tests/conformance/test_mutants.py`` runs the checks on every mutant and requires each to fail
with ``VIOLATES`` among the failed checks' claims (kill rate 100 %); :mod:`.reference` (the
correct skeleton) must pass everything.

Run the suite on one yourself: ``lam-ref conform --impl lam_ref.conformance.witnesses.mutants.m03_strict_less``.
"""

from __future__ import annotations

import importlib
import pkgutil
import re
import types

__all__ = ["mutant_names", "load_mutants"]


def mutant_names() -> list[str]:
    """Dotted names of every shipped mutant, in order."""
    found = [m.name for m in pkgutil.iter_modules(__path__) if re.match(r"m\d{2,3}_", m.name)]
    return [f"{__name__}.{name}" for name in sorted(found, key=lambda name: int(name[1:].split("_")[0]))]


def load_mutants() -> list[types.ModuleType]:
    """The mutant modules (each has ``BUG`` and ``VIOLATES``)."""
    return [importlib.import_module(n) for n in mutant_names()]
