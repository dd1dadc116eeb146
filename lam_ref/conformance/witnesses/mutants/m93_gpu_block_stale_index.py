"""Mutant: the batch runs in blocks of 256 arrivals against the index as it stood before the block (a
GPU launch per block); rows retained inside the block are added only after the block, so matches
inside a block are missed (SPEC §5.1: R grows with every retained arrival)."""

from __future__ import annotations

import numpy as np

from ._base2 import Base2, export

BUG = 'index updated only between 256-row blocks'
VIOLATES = 'DEF1'
CLASS = 'stale cache'
IDIOM = 'CUDA: one kernel launch per block reads the retained set copied before the launch'
NEEDS = 'batches longer than 256 rows with matches inside a block'
CAUGHT_BY: tuple[str, ...] = ('substitute.equals_oracle', 'substitute.shared_blocks', 'substitute.chain')


class StaleBlock(Base2):
    BLOCK_ROWS = 256

    def substitute(self, embeddings, t):
        s = self.online_session(t)
        e = self.ingest(embeddings, None)
        n = e.shape[0]
        pi = np.empty(n, dtype=np.int64)
        if n:
            s.dim = e.shape[1]
        for lo in range(0, n, self.BLOCK_ROWS):
            pending = []
            for i in range(lo, min(n, lo + self.BLOCK_ROWS)):
                rep = self.witness(s, e[i])
                pi[i] = i if rep is None else rep
                if rep is None:
                    pending.append(i)
            for i in pending:
                s.push(e[i], i)
        return pi


export(StaleBlock(), globals())
