"""Mutant: the rate is computed as int(log2(float32(m))) + 1, and float32 rounds m = 2^k - 1 up to 2^k
for k >= 25, giving one plane too many — a stream the format forbids (docs/codec.md: a rate byte
larger than the bit length is refused)."""

from __future__ import annotations

import numpy as np

from ._base2 import Base2, export

BUG = 'rate via float32 log2 (one too many for m = 2^k - 1)'
VIOLATES = 'L2'
CLASS = 'integer width'
IDIOM = 'CUDA: int rate = (int)log2f((float)m) + 1;'
NEEDS = 'codec deltas of 2^k - 1 with k >= 25 (large quotients)'
CAUGHT_BY: tuple[str, ...] = ('codec.large_quotients', 'vectors.codec-bound', 'vectors.codec-v1')


class RateLog2f(Base2):
    def rate(self, d):
        mx = np.abs(d).max(axis=1).astype(np.float32) if d.size else np.zeros(d.shape[0], np.float32)
        with np.errstate(divide="ignore", invalid="ignore"):
            r = np.where(mx > 0, np.floor(np.log2(np.maximum(mx, 1))).astype(np.int64) + 1, 0)
        return r


export(RateLog2f(), globals())
