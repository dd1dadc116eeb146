"""Mutant: the batch loop runs to N - 1 and the final row is appended as retained without comparison
(SPEC §5.1: every arrival is decided)."""

from __future__ import annotations

import numpy as np

from ._base2 import Base2, export

BUG = 'last row of the batch never compared'
VIOLATES = 'DEF1'
CLASS = 'off-by-one at block boundary'
IDIOM = 'C: for (i = 1; i < n - 1; ++i) ...; pi[n-1] = n-1;'
NEEDS = 'a last row with an earlier witness'
CAUGHT_BY: tuple[str, ...] = ('substitute.equals_oracle', 'substitute.shared_blocks', 'substitute.chain')


class LastRow(Base2):
    def substitute(self, embeddings, t):
        s = self.online_session(t)
        e = self.ingest(embeddings, None)
        n = e.shape[0]
        if n == 0:
            return np.zeros(0, dtype=np.int64)
        s.dim = e.shape[1]
        pi = np.empty(n, dtype=np.int64)
        for k in range(n - 1):
            pi[k] = self.decide_row(s, e[k], k)
        pi[n - 1] = n - 1
        return pi


export(LastRow(), globals())
