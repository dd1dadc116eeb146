"""Mutant: SemDeDup's rule — an arrival is compared with *every* earlier chunk, dropped ones
included, and inherits the representative of the first one within δ (SPEC §16: "it compares
against dropped items too, unlike LAM"). On a chain the third link is then dropped as well."""

from __future__ import annotations

import numpy as np

from ._base import Base, BaseSession, export

BUG = "compares against dropped chunks too (SemDeDup)"
VIOLATES = "C4"


class SemDeDup(Base):
    def candidates(self, state: BaseSession, e: np.ndarray, i: int) -> list[int]:
        return list(range(i))

    def decide(self, state: BaseSession, e: np.ndarray, i: int, d2: float) -> None:
        cands = self.candidates(state, e, i)
        if cands:
            ok = self.within(self.distances(e, i, cands), d2)
            if ok.any():
                state.pi.append(state.pi[cands[int(np.flatnonzero(ok)[0])]])
                return
        state.pi.append(i)


export(SemDeDup(), globals())
