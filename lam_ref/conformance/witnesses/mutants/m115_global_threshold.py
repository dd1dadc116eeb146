"""Mutant: δ² is a module-level global set by the first session that is opened, so a later session with
another threshold decides with the first one's δ² (SPEC §6.1: a session holds its own t)."""

from __future__ import annotations

from ._base2 import Base2, export

BUG = 'δ² kept in a process-wide global'
VIOLATES = 'ONLINE'
CLASS = 'per-session global'
IDIOM = 'C: static double g_d2; initialised on first lam_open()'
NEEDS = 'sessions with different thresholds'
CAUGHT_BY: tuple[str, ...] = ('online.equals_batch', 'online.sessions_independent', 'validation.online')


class GlobalD2(Base2):
    def __init__(self):
        self._d2 = None

    def threshold(self, t):
        if self._d2 is None:
            self._d2 = 2.0 - 2.0 * t
        return self._d2

    def substitute(self, embeddings, t):
        return Base2().substitute(embeddings, t)


export(GlobalD2(), globals())
