"""Mutant: quantizes as cuSZp does, in float32: y = x·(0.5f/eb), q = trunc(y + 0.5f) - (y < -0.5f); the
float32 quotient loses the bound for large |x|/eb and differs from the rule on ties (docs/codec.md:
float64 division, round half up)."""

from __future__ import annotations

import numpy as np

from ....geometry import LamValueError
from ._base2 import Base2, export

BUG = "cuSZp's float32 quantizer"
VIOLATES = 'L2'
CLASS = 'special-cased threshold'
IDIOM = 'CUDA (cuSZp): float y = x * (0.5f / eb); int q = (int)(y + 0.5f) - (y < -0.5f);'
NEEDS = 'codec quotients beyond 2^24, or v1 tie vectors'
CAUGHT_BY: tuple[str, ...] = ('codec.large_quotients', 'codec.v1_format', 'vectors.codec-v1')


class CuszpQuant(Base2):
    def quantize(self, x, eb):
        with np.errstate(over="ignore", invalid="ignore"):
            y = x.astype(np.float32) * np.float32(np.float32(0.5) / np.float32(eb))
            q = np.trunc(y + np.float32(0.5)).astype(np.float64) - (y < np.float32(-0.5))
        if q.size and not (np.abs(q).max() <= self.QMAX):
            raise LamValueError(f"eb = {eb!r} is too small for x")
        return q.astype(np.int64)


export(CuszpQuant(), globals())
