"""Mutant: the retained set lives in a fixed array of 1,024 rows; later retained rows are never
compared against (SPEC §5: every retained chunk is a candidate)."""

from __future__ import annotations

import numpy as np

from ._base import Base, BaseSession, export

BUG = "retained set capped at 1,024 rows (fixed buffer)"
VIOLATES = "DEF1"


class RetainedCap(Base):
    def candidates(self, state: BaseSession, e: np.ndarray, i: int) -> list[int]:
        return super().candidates(state, e, i)[:1024]


export(RetainedCap(), globals())
