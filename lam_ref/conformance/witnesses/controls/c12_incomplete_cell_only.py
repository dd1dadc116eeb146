"""Control (must pass): declares COMPLETE = False and searches only the arrival's own grid cell (it can
miss pairs across a cell border): held to soundness, the lowest id among the pairs it finds, online
equal to its own batch (SPEC §15.1)."""

from __future__ import annotations

import numpy as np

from ..mutants._base2 import Base2, export

CONTROL = True
ALLOWED = 'an incomplete (COMPLETE = False), sound candidate search'


class CellOnly(Base2):
    COMPLETE = False

    def scan(self, s, x):
        return np.asarray(s.grid.get(s.key(x), []), dtype=np.int64)


export(CellOnly(), globals())
#: The vectors once held a COMPLETE = False implementation to the oracle's exact π (a false alarm
#: this control found); they now hold it to soundness (SPEC §15.1), so it declares no expected failure.
