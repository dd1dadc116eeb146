"""Mutant: the next chunk id is one process-wide counter shared by every session (a C static), so a
second session starts its ids where the first stopped (SPEC §6.1: a session holds its own next id)."""

from __future__ import annotations

from ._base2 import Base2, export

BUG = 'next id is a process-wide counter'
VIOLATES = 'ONLINE'
CLASS = 'per-session global'
IDIOM = 'C: static int64_t g_next_id;'
NEEDS = 'two sessions, or a session after another'
CAUGHT_BY: tuple[str, ...] = ('online.equals_batch', 'online.sessions_independent', 'validation.online')


class GlobalNext(Base2):
    def __init__(self):
        self._next = 0

    def assign_id(self, s, k):
        return self._next + k

    def admit2(self, s, embeddings):
        out = super().admit2(s, embeddings)
        self._next += len(out)
        return out

    def substitute(self, embeddings, t):
        return Base2().substitute(embeddings, t)


export(GlobalNext(), globals())
