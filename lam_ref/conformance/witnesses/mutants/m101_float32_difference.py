"""Mutant: coordinate differences are taken in float32 (a float32 kernel) and only squared and summed
in float64, which rounds each difference (SPEC §2.1: float64(a) - float64(b))."""

from __future__ import annotations

import numpy as np

from ._base2 import Base2, export

BUG = 'differences computed in float32'
VIOLATES = 'EQ1'
CLASS = 'special-cased threshold'
IDIOM = 'CUDA: float d = a[k] - b[k]; acc += (double)d * d;'
NEEDS = 'pairs a hair from δ in D >= 16'
CAUGHT_BY: tuple[str, ...] = ('substitute.boundary',)


class Float32Diff(Base2):
    def sq_to(self, x, rows):
        diff = (rows.astype(np.float32) - x.astype(np.float32)).astype(np.float64)
        return np.einsum("ij,ij->i", diff, diff)


export(Float32Diff(), globals())
