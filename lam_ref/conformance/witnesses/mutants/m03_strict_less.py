"""Mutant: merges iff ``sq < δ²`` (strict) instead of ``sq <= δ²`` (SPEC §2: inclusive; the pinned
example (1,0), (0,1) at t = 0 must merge)."""

from __future__ import annotations

import numpy as np

from ._base import Base, export

BUG = "strict < instead of <= in the merge test"
VIOLATES = "EQ1"


class StrictLess(Base):
    def within(self, sq: np.ndarray, d2: float) -> np.ndarray:
        return sq < d2


export(StrictLess(), globals())
