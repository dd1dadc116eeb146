"""Mutant: revises earlier decisions. When an arrival is within δ of a retained chunk it keeps the
*newer* copy and re-points the old chunk (and everything it represented) to the arrival — a
freshness heuristic that breaks "decisions are never revised" (SPEC §6) and π[i] <= i."""

from __future__ import annotations

import numpy as np

from ._base import Base, BaseSession, export

BUG = "keeps the newest copy, revising the earlier chunk's decision"
VIOLATES = "ONLINE"


class KeepNewest(Base):
    def decide(self, state: BaseSession, e: np.ndarray, i: int, d2: float) -> None:
        cands = self.candidates(state, e, i)
        if cands:
            ok = self.within(self.distances(e, i, cands), d2)
            if ok.any():
                old = cands[int(np.flatnonzero(ok)[0])]
                state.pi = [i if p == old else p for p in state.pi]
        state.pi.append(i)


export(KeepNewest(), globals())
