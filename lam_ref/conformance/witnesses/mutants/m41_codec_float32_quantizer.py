"""Mutant: the codec quantizes in float32 (``x * (0.5f / eb)``, as cuSZp does), so quotients near
2³¹ lose up to 2⁷ code steps and the error reaches hundreds of eb (SPEC §9.2: the quotient is float64)."""

from __future__ import annotations

import numpy as np

from ._base import Base, export

BUG = "codec quotient computed in float32"
VIOLATES = "L2"


class Float32Quantizer(Base):
    def quantize(self, x: np.ndarray, eb: float) -> np.ndarray:
        with np.errstate(over="ignore", invalid="ignore"):
            y = x.astype(np.float32) * np.float32(0.5 / eb)
            return np.rint(y).astype(np.int64)


export(Float32Quantizer(), globals())
