"""Mutant: the codec quantizes by truncation toward zero (``int(x / 2eb)``) instead of rounding to
nearest, so the reconstruction error reaches 2·eb (SPEC §9: ``|x - x'| <= eb``)."""

from __future__ import annotations

import numpy as np

from ._base import Base, export

BUG = "codec truncates instead of rounding: error up to 2 eb"
VIOLATES = "L2"


class Truncation(Base):
    def quantize(self, x: np.ndarray, eb: float) -> np.ndarray:
        return np.trunc(x.astype(np.float64) / (2.0 * eb)).astype(np.int64)


export(Truncation(), globals())
