"""Mutant: the rate is floor(log2(max |d|)) (the index of the top bit) instead of the bit length, so
the top bit plane of every block is lost (docs/codec.md: rate = bit_length)."""

from __future__ import annotations

import numpy as np

from ._base2 import Base2, export

BUG = 'rate one short (floor(log2 m) instead of bit length)'
VIOLATES = 'L2'
CLASS = 'off-by-one at block boundary'
IDIOM = 'C: rate = 31 - __builtin_clz(m);'
NEEDS = 'codec bound on any data'
CAUGHT_BY: tuple[str, ...] = ('codec.error_bound', 'codec.input_forms')


class RateOffByOne(Base2):
    def rate(self, d):
        return np.maximum(super().rate(d) - 1, 0)


export(RateOffByOne(), globals())
