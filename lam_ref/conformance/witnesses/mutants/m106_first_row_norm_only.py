"""Mutant: only the first row's norm is checked (the others are assumed to come from the same encoder),
so a later non-unit row is accepted (SPEC §2.3: every row)."""

from __future__ import annotations

import numpy as np

from ._base2 import Base2, export

BUG = 'norm checked on row 0 only'
VIOLATES = 'VALID'
CLASS = 'early exit'
IDIOM = 'Python: assert abs(np.linalg.norm(e[0]) - 1) < tol'
NEEDS = 'a non-unit row after row 0'
CAUGHT_BY: tuple[str, ...] = ('validation.substitute', 'validation.online', 'validation.norm_tolerance')


class FirstRowOnly(Base2):
    def norm_bad(self, norms):
        bad = np.zeros(norms.shape, dtype=bool)
        bad[:1] = np.abs(norms[:1] - 1.0) > self.NORM_TOL
        return bad


export(FirstRowOnly(), globals())
