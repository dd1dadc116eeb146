"""Mutant: admit records the session's dimension from the turn before validating it, so a rejected
first turn still fixes D and the next, valid turn of another width is refused (issue 21 §3: a
rejected turn leaves the session as it was, including its dimension)."""

from __future__ import annotations

import numpy as np

from ._base2 import Base2, export

BUG = 'dimension fixed before the turn is validated'
VIOLATES = 'VALID'
CLASS = 'stale cache'
IDIOM = 'Python: self.dim = x.shape[1]; self._validate(x)'
NEEDS = 'a rejected first turn must not fix the dimension'
CAUGHT_BY: tuple[str, ...] = ('online.rejected_turn', 'vectors.online')


class DimFirst(Base2):
    def admit2(self, s, embeddings):
        arr = np.asarray(embeddings)
        if s.dim is None and arr.ndim == 2 and arr.shape[1] > 0:
            s.dim = arr.shape[1]
        return super().admit2(s, embeddings)


export(DimFirst(), globals())
