"""Mutant: codes rounded as floor(y + 0.5): equal to the rule except where y + 0.5 itself rounds, i.e. at the
largest double below 0.5 (0.5 - 2^-54 + 0.5 rounds to 1.0), so one code is 1 where docs/codec.md gives 0."""

from __future__ import annotations

import numpy as np

from ....geometry import LamValueError
from ._base2 import Base2, export

BUG = 'q = floor(y + 0.5) instead of floor(y) + (y - floor(y) >= 0.5)'
VIOLATES = 'L2'
CLASS = 'special-cased threshold'
IDIOM = 'C: q = (int64_t)floor(x / s + 0.5);'
NEEDS = 'codec-v1 golden bytes of a quotient equal to the largest double below 0.5'
CAUGHT_BY: tuple[str, ...] = ('vectors.codec-v1', 'codec.encoder_boundaries')


class FloorHalf(Base2):
    def quantize(self, x, eb):
        with np.errstate(over="ignore"):
            q = np.floor(x / (2.0 * eb) + 0.5)
        if q.size and not np.abs(q).max() <= self.QMAX:
            raise LamValueError(f"eb = {eb!r} is too small for x: a code exceeds 2**31 - 1")
        return q.astype(np.int64)


export(FloorHalf(), globals())
