"""Mutant: π is built with np.array(list_of_ids), which is int64 for a non-empty turn but float64 for
an empty one (SPEC §15: int64[n], also for n = 0)."""

from __future__ import annotations

import numpy as np

from ._base2 import Base2, export

BUG = 'empty result has dtype float64'
VIOLATES = 'DEF1'
CLASS = 'early exit'
IDIOM = 'Python: return np.array(out)'
NEEDS = 'empty turns (dtype of an empty π)'
CAUGHT_BY: tuple[str, ...] = ('substitute.empty', 'online.empty_turns', 'vectors.core')


class EmptyFloat(Base2):
    def emit(self, s, pi):
        return np.array(pi.tolist())


export(EmptyFloat(), globals())
