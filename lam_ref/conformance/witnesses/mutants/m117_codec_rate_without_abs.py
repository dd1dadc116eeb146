"""Mutant: the block rate is the bit length of max(d) instead of max(|d|), so a block whose largest
delta is negative gets too few bit planes and decodes wrong (docs/codec.md: rate = bit_length(max
|d|))."""

from __future__ import annotations

import numpy as np

from ._base2 import Base2, export

BUG = 'rate from max(d), not max(|d|)'
VIOLATES = 'L2'
CLASS = 'integer width'
IDIOM = 'C: int m = *std::max_element(d, d + B); rate = 32 - __builtin_clz(m);'
NEEDS = 'codec blocks whose largest |delta| is negative'
CAUGHT_BY: tuple[str, ...] = ('codec.error_bound', 'codec.v1_format', 'vectors.codec-bound')


class RateNoAbs(Base2):
    def rate(self, d):
        mx = np.maximum(d.max(axis=1), 0) if d.size else np.zeros(d.shape[0], dtype=np.int64)
        r = np.zeros(d.shape[0], dtype=np.int64)
        for b in range(33):
            r += (mx >> b) != 0
        return r


export(RateNoAbs(), globals())
