"""Mutant: inside a turn the candidate loop stops one short, so the arrival immediately before is never
a candidate when it was retained in the same turn (SPEC §6.1: an arrival may match an earlier
arrival of the same turn)."""

from __future__ import annotations

import numpy as np

from ._base2 import Base2, export

BUG = 'the immediately preceding arrival of the turn is never a candidate'
VIOLATES = 'ONLINE'
CLASS = 'off-by-one at turn boundary'
IDIOM = 'C: for (j = turn_start; j < i - 1; ++j)'
NEEDS = 'consecutive near-duplicates within one turn'
CAUGHT_BY: tuple[str, ...] = ('substitute.equals_oracle', 'substitute.shared_blocks', 'substitute.chain')


class PrevArrival(Base2):
    def admit2(self, s, embeddings):
        s.turn0 = s.count
        return super().admit2(s, embeddings)

    def decide_row(self, s, x, cid):
        slots = s.neighbours(x)
        last = s.count - 1
        if s.count > getattr(s, "turn0", 0) and s.count and s.ids[last] == cid - 1:
            slots = slots[slots != last]
        ok = self.within(self.sq_to(x, s.rows[slots]), s.d2) if slots.size else np.zeros(0, bool)
        if ok.any():
            return int(s.ids[slots[int(np.argmax(ok))]])
        s.push(x, cid)
        return cid


export(PrevArrival(), globals())
