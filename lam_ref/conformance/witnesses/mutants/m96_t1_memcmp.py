"""Mutant: at t = 1 (δ = 0) rows are compared byte for byte (memcmp) instead of by sq <= 0, so -0.0 and
+0.0 coordinates make equal rows differ (SPEC §2.1: sq(a, b) = 0 merges)."""

from __future__ import annotations

import numpy as np

from ._base2 import Base2, export

BUG = 't == 1 fast path compares raw bytes'
VIOLATES = 'EQ1'
CLASS = 'special-cased threshold'
IDIOM = 'C: if (d2 == 0.0) return memcmp(a, b, D * sizeof(float)) == 0;'
NEEDS = 'rows with signed zeros at t = 1'
CAUGHT_BY: tuple[str, ...] = ('substitute.signed_zeros',)


class T1Memcmp(Base2):
    def witness(self, s, x):
        if s.d2 == 0.0:
            raw = x.astype(np.float32).tobytes()
            for slot in self.scan(s, x):
                if s.rows[slot].astype(np.float32).tobytes() == raw:
                    return int(s.ids[slot])
            return None
        return super().witness(s, x)


export(T1Memcmp(), globals())
