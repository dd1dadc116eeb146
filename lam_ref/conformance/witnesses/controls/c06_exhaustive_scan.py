"""Control (must pass): no index at all: every arrival is compared with every retained row (a different
candidate search; the oracle's lowest id is independent of how candidates are found, SPEC §5.1)."""

from __future__ import annotations

import numpy as np

from ..mutants._base2 import Base2, export

CONTROL = True
ALLOWED = 'exhaustive scan instead of the grid index'


class Exhaustive(Base2):
    def scan(self, s, x):
        return np.arange(s.count, dtype=np.int64)


export(Exhaustive(), globals())
