"""Mutant: a wrong threshold conversion — it merges at Theorem 2's ``t' = 4t - 3`` (the radius-2δ
threshold, meant for the covering bound) instead of ``t``, i.e. within 2δ."""

from __future__ import annotations

from ....geometry import t_prime
from ._base import Base, export

BUG = "uses t' = 4t - 3 (radius 2δ) as the merge threshold"
VIOLATES = "EQ1"


class WrongTPrime(Base):
    def threshold(self, t: float) -> float:
        return 2.0 - 2.0 * max(-1.0, t_prime(t))


export(WrongTPrime(), globals())
