"""Mutant: merges iff the float64 cosine a·b >= t, the textbook rule; it equals sq <= 2 - 2t only for
exactly unit rows, and float32 unit rows are off by ~1e-7 (SPEC §2.1: the rule is on sq)."""

from __future__ import annotations

import numpy as np

from ._base2 import Base2, export

BUG = 'cosine a·b >= t instead of sq <= 2 - 2t'
VIOLATES = 'EQ1'
CLASS = 'special-cased threshold'
IDIOM = 'Python/FAISS: inner-product index, keep if score >= t'
NEEDS = 'pairs a hair from δ with rows of norm != 1 (within 1e-4)'
CAUGHT_BY: tuple[str, ...] = ('substitute.boundary', 'vectors.core')


class CosineGeT(Base2):
    def witness(self, s, x):
        slots = self.scan(s, x)
        if slots.size == 0:
            return None
        ok = s.rows[slots] @ x >= s.t
        return int(s.ids[slots[int(np.argmax(ok))]]) if ok.any() else None


export(CosineGeT(), globals())
