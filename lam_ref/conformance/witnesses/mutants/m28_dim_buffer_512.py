"""Mutant: distances are summed in a fixed ``float buf[512]``, so coordinates past 512 are
ignored at D = 768 or 1,024 (SPEC §2.1: the sum runs over every coordinate)."""

from __future__ import annotations

import numpy as np

from ....geometry import sq_dist_rows
from ._base import Base, export

BUG = "distance over the first 512 coordinates only (fixed buffer)"
VIOLATES = "DEF1"


class DimBuffer(Base):
    def distances(self, e: np.ndarray, i: int, candidates: list[int]) -> np.ndarray:
        head = np.ascontiguousarray(e[:, :512])
        idx = np.asarray(candidates, dtype=np.int64)
        return sq_dist_rows(head, idx, np.broadcast_to(head[i], (idx.size, head.shape[1])))


export(DimBuffer(), globals())
