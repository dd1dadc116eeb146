"""Mutant: t is validated as a similarity in [0, 1], so valid negative thresholds such as t = -1 or t =
-0.5 are rejected (SPEC §1.3: -1 <= t <= 1)."""

from __future__ import annotations

from ._base2 import Base2, export

BUG = 't range checked as [0, 1]'
VIOLATES = 'VALID'
CLASS = 'special-cased threshold'
IDIOM = 'Python: if not 0 <= t <= 1: raise ValueError'
NEEDS = 'valid negative thresholds'
CAUGHT_BY: tuple[str, ...] = ('substitute.exact_ties', 'validation.norm_tolerance', 'substitute.threshold_ends')


class NonNegative(Base2):
    def t_in_range(self, t):
        return 0.0 <= t <= 1.0


export(NonNegative(), globals())
