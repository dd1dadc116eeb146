"""Mutant: the quotient computed as x * (1/(2eb)) (one division hoisted out of the loop): the code changes
for values beside a tie, which SPEC §9.2 forbids (one float64 division, never a rounded reciprocal)."""

from __future__ import annotations

import numpy as np

from ....geometry import LamValueError
from ._base2 import Base2, export

BUG = 'quotient as x * (1/(2 eb)) instead of x / (2 eb)'
VIOLATES = 'L2'
CLASS = 'special-cased threshold'
IDIOM = 'C: const double inv = 1.0 / (2*eb); for (...) y = x[i] * inv;'
NEEDS = 'codec-v1 golden bytes of values whose code differs under the reciprocal, at several eb'
CAUGHT_BY: tuple[str, ...] = ('vectors.codec-v1', 'codec.encoder_boundaries')


class Reciprocal(Base2):
    def quantize(self, x, eb):
        y = x * (1.0 / (2.0 * eb))
        f = np.floor(y)
        q = f + (y - f >= 0.5)
        if q.size and not np.abs(q).max() <= self.QMAX:
            raise LamValueError(f"eb = {eb!r} is too small for x: a code exceeds 2**31 - 1")
        return q.astype(np.int64)


export(Reciprocal(), globals())
