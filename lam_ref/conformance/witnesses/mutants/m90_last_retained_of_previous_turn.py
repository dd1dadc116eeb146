"""Mutant: at the start of a turn the retained count is snapshotted one short (`count - 1`), so the row
retained last in the previous turns is not a candidate for the new turn (SPEC §6.2: online equals
batch for any split)."""

from __future__ import annotations

from ._base2 import Base2, export

BUG = 'last retained row of earlier turns invisible to the next turn'
VIOLATES = 'ONLINE'
CLASS = 'off-by-one at turn boundary'
IDIOM = 'C: for (j = 0; j < n_kept_before - 1; ++j)'
NEEDS = "online splits where a turn's first arrival matches the last retained row"
CAUGHT_BY: tuple[str, ...] = ('online.equals_batch', 'online.sessions_independent', 'validation.online')


class LastOfPrevTurn(Base2):
    def admit2(self, s, embeddings):
        s.hidden = s.count - 1
        return super().admit2(s, embeddings)

    def scan(self, s, x):
        slots = s.neighbours(x)
        return slots[slots != getattr(s, "hidden", -1)]


export(LastOfPrevTurn(), globals())
