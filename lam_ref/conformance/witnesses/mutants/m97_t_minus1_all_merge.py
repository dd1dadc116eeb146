"""Mutant: t = -1 is special-cased as 'δ = 2 is the sphere's diameter, everything merges into the first
row', although rows of norm up to 1 + 1e-4 can be farther apart than 2 (SPEC §2.1: sq <= 4,
checked)."""

from __future__ import annotations

from ._base2 import Base2, export

BUG = 't == -1 short-circuits to everything merging'
VIOLATES = 'EQ1'
CLASS = 'special-cased threshold'
IDIOM = 'Python: if t <= -1: return np.zeros(n, np.int64)'
NEEDS = 't = -1 with antipodal rows of norm slightly above 1'
CAUGHT_BY: tuple[str, ...] = ('substitute.threshold_ends',)


class TMinus1(Base2):
    def witness(self, s, x):
        if s.t <= -1.0 and s.count:
            return int(s.ids[0])
        return super().witness(s, x)


export(TMinus1(), globals())
