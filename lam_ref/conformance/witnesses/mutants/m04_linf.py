"""Mutant: an l∞ test, ``max_k |a_k - b_k| <= δ``, instead of the l2 distance of eq. (1)."""

from __future__ import annotations

import numpy as np

from ._base import Base, export

BUG = "l-infinity distance instead of l2"
VIOLATES = "DEF1"


class LInf(Base):
    def distances(self, e: np.ndarray, i: int, candidates: list[int]) -> np.ndarray:
        diff = e[candidates].astype(np.float64) - e[i].astype(np.float64)
        return np.max(np.abs(diff), axis=1) ** 2


export(LInf(), globals())
