"""Mutant: squared differences are accumulated in a float32 sum (SPEC §2.1: the sum in float64)."""

from __future__ import annotations

import numpy as np

from ._base2 import Base2, export

BUG = 'sq accumulated in float32'
VIOLATES = 'EQ1'
CLASS = 'special-cased threshold'
IDIOM = 'C: float acc = 0; for (k < D) acc += d*d;'
NEEDS = 'pairs a hair from δ in D >= 16'
CAUGHT_BY: tuple[str, ...] = ('substitute.boundary', 'vectors.core')


class Float32Acc(Base2):
    def sq_to(self, x, rows):
        diff = (rows - x).astype(np.float32)
        return np.einsum("ij,ij->i", diff, diff, dtype=np.float32).astype(np.float64)


export(Float32Acc(), globals())
