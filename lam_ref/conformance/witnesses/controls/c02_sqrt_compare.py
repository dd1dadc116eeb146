"""Control (must pass): compares distances, sqrt(sq) <= sqrt(δ²), instead of squares: sqrt is monotone
and correctly rounded, so it can differ from the squared test only within an ulp (inside the tie
band, SPEC §2.2)."""

from __future__ import annotations

import numpy as np

from ..mutants._base2 import Base2, export

CONTROL = True
ALLOWED = 'compares distances instead of squared distances'


class SqrtCompare(Base2):
    def within(self, sq, d2):
        return np.sqrt(sq) <= np.sqrt(d2)


export(SqrtCompare(), globals())
