"""Mutant: π is written into one output buffer owned by the implementation and a view of it is
returned, so the next substitute or admit call overwrites the π the caller holds (issue 21: returned
arrays are fresh objects the caller owns)."""

from __future__ import annotations

import numpy as np

from ._base2 import Base2, export

BUG = 'returns a view of a reused output buffer'
VIOLATES = 'DEF1'
CLASS = 'aliasing'
IDIOM = 'C: static int64_t out[MAX]; return out;'
NEEDS = 'aliasing: a returned π must not change when the next call runs on other input'
CAUGHT_BY: tuple[str, ...] = ('online.equals_batch', 'online.sessions_independent', 'validation.online')


class SharedOut(Base2):
    def __init__(self):
        self._out = np.zeros(0, dtype=np.int64)

    def emit(self, s, pi):
        if self._out.size < pi.size:
            self._out = np.zeros(max(pi.size, 2 * self._out.size), dtype=np.int64)
        self._out[: pi.size] = pi
        return self._out[: pi.size]


export(SharedOut(), globals())
