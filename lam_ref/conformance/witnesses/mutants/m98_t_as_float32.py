"""Mutant: t arrives through a C `float` parameter, so δ² = 2 - 2·float32(t): at t = 0.9 the threshold
moves by 5e-8, far beyond the 1e-9 tie band (SPEC §2.1: δ² = 2.0 - 2.0*t in float64)."""

from __future__ import annotations

import numpy as np

from ._base2 import Base2, export

BUG = 'threshold narrowed to float32 at the API boundary'
VIOLATES = 'EQ1'
CLASS = 'special-cased threshold'
IDIOM = 'C API: int lam_substitute(const float *e, size_t n, size_t d, float t, int64_t *pi)'
NEEDS = 'pairs a hair (1e-8) outside δ at thresholds not exact in float32'
CAUGHT_BY: tuple[str, ...] = ('substitute.boundary', 'vectors.core')


class TFloat32(Base2):
    def threshold(self, t):
        return 2.0 - 2.0 * float(np.float32(t))


export(TFloat32(), globals())
