"""Mutant: the range check applied to the quotient y = x/(2eb) before rounding (|y| <= 2^31 - 1) instead of
to the code q: a quotient in (2^31 - 1, 2^31 - 0.5) rounds to q = 2^31 - 1, which SPEC §9.4 says a
codec-v1 encoder MUST encode; this one refuses it."""

from __future__ import annotations

import numpy as np

from ....geometry import LamValueError
from ._base2 import Base2, export

BUG = 'range check on the quotient, not the rounded code'
VIOLATES = 'L2'
CLASS = 'off-by-one at block boundary'
IDIOM = 'C: if (fabs(x / s) > INT32_MAX) return ERR_RANGE; q = round_half_up(x / s);'
NEEDS = 'an input whose quotient lies in (2^31 - 1, 2^31 - 0.5)'
CAUGHT_BY: tuple[str, ...] = ('vectors.codec-v1', 'codec.encoder_boundaries')


class RangeOnQuotient(Base2):
    def quantize(self, x, eb):
        with np.errstate(over="ignore"):
            y = x / (2.0 * eb)
        if y.size and not np.abs(y).max() <= self.QMAX:
            raise LamValueError(f"eb = {eb!r} is too small for x: a quotient exceeds 2**31 - 1")
        return super().quantize(x, eb)


export(RangeOnQuotient(), globals())
