"""Control (must pass): sums the squared differences with math.fsum (exactly rounded) instead of
numpy's pairwise sum: a different summation order, same rule (SPEC §2.1 fixes the terms, not their
order)."""

from __future__ import annotations

import math

import numpy as np

from ..mutants._base2 import Base2, export

CONTROL = True
ALLOWED = 'exactly rounded summation (math.fsum)'


class Fsum(Base2):
    def sq_to(self, x, rows):
        return np.array([math.fsum(v) for v in (rows - x) ** 2], dtype=np.float64)


export(Fsum(), globals())
