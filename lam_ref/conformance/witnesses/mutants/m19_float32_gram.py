"""Mutant: decides with ``2 - 2·a·b`` computed in float32 (a GPU-style GEMM) and never confirms
near the threshold, so pairs a hair from δ go the wrong way (SPEC §2: faster distances are fine
only as a filter, confirmed with the exact float64 rule outside the 1e-9 tie band)."""

from __future__ import annotations

import numpy as np

from ._base import Base, export

BUG = "float32 Gram-matrix distances without exact confirmation"
VIOLATES = "EQ1"


class Float32Gram(Base):
    def distances(self, e: np.ndarray, i: int, candidates: list[int]) -> np.ndarray:
        dots = e[candidates].astype(np.float32) @ e[i].astype(np.float32)
        return (np.float32(2.0) - np.float32(2.0) * dots).astype(np.float64)


export(Float32Gram(), globals())
