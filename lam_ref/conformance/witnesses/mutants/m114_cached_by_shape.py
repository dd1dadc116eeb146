"""Mutant: substitute memoises its last result under (N, D, t) — meant for repeated calls on the same
batch — so a different batch of the same shape gets the old π (SPEC §5: π is a function of the
embeddings)."""

from __future__ import annotations

import numpy as np

from ._base2 import Base2, export

BUG = 'result cache keyed by shape and t, not content'
VIOLATES = 'DEF1'
CLASS = 'stale cache'
IDIOM = 'Python: @functools.cache on a wrapper keyed by (e.shape, t)'
NEEDS = 'two batches of one shape and threshold'
CAUGHT_BY: tuple[str, ...] = ('substitute.exact_ties',)


class CachedByShape(Base2):
    def __init__(self):
        self._cache = {}

    def substitute(self, embeddings, t):
        arr = np.asarray(embeddings)
        key = (arr.shape, float(t) if isinstance(t, (int, float)) else repr(t))
        if key not in self._cache:
            self._cache[key] = super().substitute(embeddings, t)
        return self._cache[key].copy()


export(CachedByShape(), globals())
