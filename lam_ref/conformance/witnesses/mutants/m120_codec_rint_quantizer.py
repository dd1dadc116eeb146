"""Mutant: codes are rounded half to even (np.rint / C lrint) instead of half up: the bound holds, but
ties such as x/(2 eb) = 0.5 or 2.5 give other codes and other bytes (docs/codec.md: round half up on
the float64 quotient)."""

from __future__ import annotations

import numpy as np

from ....geometry import LamValueError
from ._base2 import Base2, export

BUG = 'round half to even instead of half up'
VIOLATES = 'L2'
CLASS = 'special-cased threshold'
IDIOM = 'C: lrint(x / (2*eb)) under the default rounding mode'
NEEDS = 'codec-v1 byte vectors with rounding ties'
CAUGHT_BY: tuple[str, ...] = ('codec.v1_format', 'vectors.codec-v1')


class Rint(Base2):
    def quantize(self, x, eb):
        q = np.rint(x / (2.0 * eb))
        if q.size and np.abs(q).max() > self.QMAX:
            raise LamValueError(f"eb = {eb!r} is too small for x")
        return q.astype(np.int64)


export(Rint(), globals())
