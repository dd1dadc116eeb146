"""Mutant: a turn is processed in tiles of 64 rows (a GPU shared-memory tile): an arrival sees the rows
retained before the turn and those of its own tile, but not rows retained earlier in the same turn
in another tile (SPEC §6.1: R updates inside the turn)."""

from __future__ import annotations

import numpy as np

from ._base2 import Base2, export

BUG = 'intra-turn matches only inside 64-row tiles'
VIOLATES = 'DEF1'
CLASS = 'off-by-one at block boundary'
IDIOM = 'CUDA: __shared__ float tile[64][D]; earlier tiles of the turn not re-read'
NEEDS = 'turns (and batches) longer than 64 rows with matches across a 64-row tile'
CAUGHT_BY: tuple[str, ...] = ('substitute.large', 'substitute.large_ids', 'substitute.retained_4096')


class Tile64(Base2):
    TILE = 64

    def admit2(self, s, embeddings):
        e = self.ingest(embeddings, s.dim)
        n = e.shape[0]
        pi = np.empty(n, dtype=np.int64)
        if s.dim is None:
            s.dim = e.shape[1]
        turn0 = s.count
        for k in range(n):
            if k % self.TILE == 0:
                tile0 = s.count
            slots = s.neighbours(e[k])
            slots = slots[(slots < turn0) | (slots >= tile0)]
            ok = self.within(self.sq_to(e[k], s.rows[slots]), s.d2) if slots.size else np.zeros(0, bool)
            cid = s.next_id + k
            if ok.any():
                pi[k] = s.ids[slots[int(np.argmax(ok))]]
            else:
                s.push(e[k], cid)
                pi[k] = cid
        s.next_id += n
        return pi


export(Tile64(), globals())
