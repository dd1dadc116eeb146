"""Mutant: δ² is computed in float32 arithmetic (2.0f - 2.0f*t), off by up to half a float32 ulp of δ²
(SPEC §2.1: float64)."""

from __future__ import annotations

import numpy as np

from ._base2 import Base2, export

BUG = 'δ² = 2 - 2t computed in float32'
VIOLATES = 'EQ1'
CLASS = 'special-cased threshold'
IDIOM = 'CUDA: const float d2 = 2.0f - 2.0f * t;'
NEEDS = 'pairs a hair outside δ where float32(2 - 2t) rounds'
CAUGHT_BY: tuple[str, ...] = ('substitute.boundary', 'vectors.core')


class D2Float32(Base2):
    def threshold(self, t):
        return float(np.float32(2.0) - np.float32(2.0) * np.float32(t))


export(D2Float32(), globals())
