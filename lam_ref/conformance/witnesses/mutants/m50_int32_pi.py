"""Mutant: π is returned as int32 (the natural C index type) instead of int64 (SPEC §1.4, §15.1)."""

from __future__ import annotations

import numpy as np

from ._base2 import Base2, export

BUG = 'π returned as int32'
VIOLATES = 'DEF1'
CLASS = 'integer width'
IDIOM = 'C: int32_t *pi; numpy view of the C buffer'
NEEDS = 'the int64 return type'
CAUGHT_BY: tuple[str, ...] = ('substitute.contract', 'substitute.sound', 'substitute.equals_oracle')


class Int32Pi(Base2):
    def emit(self, s, pi):
        return pi.astype(np.int32)


export(Int32Pi(), globals())
