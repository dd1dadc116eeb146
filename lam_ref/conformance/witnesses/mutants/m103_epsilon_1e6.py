"""Mutant: the merge test adds a safety epsilon, sq <= δ² + 1e-6, so pairs up to 1e-6 outside δ merge
(SPEC §2.1: exactly sq <= δ²)."""

from __future__ import annotations

from ._base2 import Base2, export

BUG = 'merge test with a 1e-6 epsilon'
VIOLATES = 'EQ1'
CLASS = 'special-cased threshold'
IDIOM = 'GPU code: if (sq <= d2 + 1e-6f)'
NEEDS = 'pairs just outside δ (1e-7 .. 1e-6)'
CAUGHT_BY: tuple[str, ...] = ('substitute.boundary', 'substitute.threshold_ends', 'vectors.core')


class Eps(Base2):
    def within(self, sq, d2):
        return sq <= d2 + 1e-6


export(Eps(), globals())
