"""Mutant (COMPLETE = False): tests ``sq <= 2 - t`` instead of ``2 - 2t``; as an incomplete
implementation it is held to soundness, and merges beyond δ on exact ties (SPEC §2.1, §15.1)."""

from __future__ import annotations

from ._base import Base, export

BUG = "δ² computed as 2 - t (factor 2 forgotten) in an incomplete implementation"
VIOLATES = "EQ1"


class TwoMinusT(Base):
    COMPLETE = False

    def threshold(self, t: float) -> float:
        return 2.0 - t


export(TwoMinusT(), globals())
