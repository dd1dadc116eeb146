"""Mutant: the unit-norm tolerance is 1e-3 instead of 1e-4, so rows of norm 1.0005 are accepted (SPEC
§2.3)."""

from __future__ import annotations

from ._base2 import Base2, export

BUG = 'norm tolerance 1e-3'
VIOLATES = 'VALID'
CLASS = 'special-cased threshold'
IDIOM = 'C: #define NORM_TOL 1e-3f'
NEEDS = 'rows with norm just outside the 1e-4 tolerance'
CAUGHT_BY: tuple[str, ...] = ('validation.norm_tolerance', 'vectors.core')


class Tol1e3(Base2):
    NORM_TOL = 1e-3


export(Tol1e3(), globals())
