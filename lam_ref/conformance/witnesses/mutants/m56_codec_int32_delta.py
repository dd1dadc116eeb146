"""Mutant: deltas are computed in int32, so a jump between codes near +2³¹ and -2³¹ overflows (the
difference needs 33 bits) and the block decodes wrong (docs/codec.md: |d| < 2³²)."""

from __future__ import annotations

import numpy as np

from ._base2 import Base2, export

BUG = 'codec deltas computed in int32 (overflow on large swings)'
VIOLATES = 'L2'
CLASS = 'integer width'
IDIOM = 'C: int32_t d = q[j] - q[j-1];'
NEEDS = 'codec codes near ±2^31 with sign swings'
CAUGHT_BY: tuple[str, ...] = ('codec.large_quotients', 'vectors.codec-bound', 'vectors.codec-v1')


class Int32Delta(Base2):
    def deltas(self, q, n, bs):
        return super().deltas(q, n, bs).astype(np.int32).astype(np.int64)


export(Int32Delta(), globals())
