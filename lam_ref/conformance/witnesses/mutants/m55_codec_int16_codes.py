"""Mutant: codec codes are stored as int16, so any |x|/(2 eb) beyond 32,767 wraps around silently (SPEC
§9: codes up to 2³¹ - 1, or a refusal)."""

from __future__ import annotations

import numpy as np

from ._base2 import Base2, export

BUG = 'quantization codes kept in int16 (silent wrap)'
VIOLATES = 'L2'
CLASS = 'integer width'
IDIOM = 'C: short q = (short)lrint(x / (2*eb));'
NEEDS = 'codec quotients |x|/(2 eb) beyond 2^15'
CAUGHT_BY: tuple[str, ...] = ('codec.error_bound', 'codec.large_quotients', 'vectors.codec-bound')


class Int16Codes(Base2):
    def quantize(self, x, eb):
        return super().quantize(x, eb).astype(np.int16).astype(np.int64)


export(Int16Codes(), globals())
