"""Mutant: compares the squared distance with δ instead of δ² (``sq <= sqrt(2 - 2t)``), a unit
slip that merges far too much whenever δ < 1 (every t > 1/2)."""

from __future__ import annotations

import math

from ._base import Base, export

BUG = "compares sq with δ, not δ²"
VIOLATES = "EQ1"


class DeltaNotSquared(Base):
    def threshold(self, t: float) -> float:
        return math.sqrt(2.0 - 2.0 * t)


export(DeltaNotSquared(), globals())
