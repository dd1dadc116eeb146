"""Mutant: substitute reads row 0 first ('the first chunk is always retained') before the loop, which
raises IndexError on an empty batch instead of returning an empty π (SPEC §15: no crash on valid or
invalid input; IndexError is not a refusal)."""

from __future__ import annotations

import numpy as np

from ._base2 import Base2, export

BUG = 'empty batch raises IndexError'
VIOLATES = 'VALID'
CLASS = 'early exit'
IDIOM = 'C: pi[0] = 0; kept[0] = e[0]; for (i = 1; ...) with n = 0'
NEEDS = 'an empty batch (N = 0)'
CAUGHT_BY: tuple[str, ...] = ('substitute.empty', 'vectors.core')


class EmptyIndex(Base2):
    def substitute(self, embeddings, t):
        e = self.ingest(embeddings, None)
        s = self.online_session(t)
        s.dim = e.shape[1]
        s.push(e[0], 0)
        pi = [0]
        for i in range(1, e.shape[0]):
            pi.append(self.decide_row(s, e[i], i))
        return np.asarray(pi, dtype=np.int64)


export(EmptyIndex(), globals())
