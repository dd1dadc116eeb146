"""Mutant: an empty turn skips the dimension check (there is no row to compare), so after D is fixed
a (0, D') turn of another D' is accepted (SPEC §6.1, §2.3: a dimension mismatch is refused)."""

from __future__ import annotations

import numpy as np

from ._base2 import Base2, export

BUG = "empty turns skip the dimension check"
VIOLATES = "VALID"
CLASS = "early exit"
IDIOM = "C: if (n == 0) return empty; /* before if (d != s->dim) */"
NEEDS = "an empty turn of another D after D is fixed"
CAUGHT_BY: tuple[str, ...] = ("online.empty_turn_other_dim",)


class EmptyTurnUnchecked(Base2):
    def admit2(self, s, embeddings):
        arr = np.asarray(embeddings)
        if arr.ndim == 2 and arr.shape[0] == 0 and arr.shape[1] > 0 and s.dim is not None:
            return np.zeros(0, dtype=np.int64)
        return super().admit2(s, embeddings)


export(EmptyTurnUnchecked(), globals())
