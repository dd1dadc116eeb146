"""Mutant: admit reserves the turn's ids before validating it, so after a rejected turn every later id
is shifted by the rejected turn's length (SPEC §6.1 / VALID: a rejected turn leaves no trace)."""

from __future__ import annotations

from ._base2 import Base2, export

BUG = 'ids reserved before validation'
VIOLATES = 'VALID'
CLASS = 'stale cache'
IDIOM = 'C: first = next_id; next_id += n; if (!valid(turn)) return -1;'
NEEDS = 'ids after a rejected turn'
CAUGHT_BY: tuple[str, ...] = ('validation.online', 'online.rejected_turn', 'vectors.online')


class IdsFirst(Base2):
    def admit2(self, s, embeddings):
        n = len(embeddings) if hasattr(embeddings, "__len__") else 0
        s.next_id += n
        e = self.ingest(embeddings, s.dim)
        s.next_id -= n
        return super().admit2(s, e)


export(IdsFirst(), globals())
