"""Mutant: t is validated with strict inequalities, so the valid end points t = 1 and t = -1 are
rejected (SPEC §1.3: -1 <= t <= 1)."""

from __future__ import annotations

from ._base2 import Base2, export

BUG = 't range exclusive at both ends'
VIOLATES = 'VALID'
CLASS = 'off-by-one at turn boundary'
IDIOM = 'C: if (!(t > -1.0 && t < 1.0)) return EINVAL;'
NEEDS = 'the valid end points t = ±1'
CAUGHT_BY: tuple[str, ...] = ('substitute.exact_ties', 'validation.norm_tolerance', 'substitute.signed_zeros')


class Exclusive(Base2):
    def t_in_range(self, t):
        return -1.0 < t < 1.0


export(Exclusive(), globals())
