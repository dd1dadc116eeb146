"""Mutant: among the retained chunks within δ it picks the *nearest* one instead of the lowest id
(SPEC §5 fixes the lowest-index witness, which makes the result order-independent of search)."""

from __future__ import annotations

import numpy as np

from ._base import Base, export

BUG = "nearest retained chunk as witness instead of the lowest id"
VIOLATES = "DEF1"


class Nearest(Base):
    def choose(self, candidates: list[int], sq: np.ndarray, ok: np.ndarray) -> int:
        inside = np.flatnonzero(ok)
        return candidates[int(inside[np.argmin(sq[inside])])]


export(Nearest(), globals())
