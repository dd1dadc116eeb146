"""Mutant: t = 1 is special-cased as 'δ = 0, nothing can merge' and returns the identity map, although
identical rows are at sq = 0 <= δ² = 0 and merge (SPEC §2.1, inclusive rule)."""

from __future__ import annotations

from ._base2 import Base2, export

BUG = 't == 1 short-circuits to no merges'
VIOLATES = 'EQ1'
CLASS = 'special-cased threshold'
IDIOM = 'Python: if t >= 1.0: return np.arange(n)'
NEEDS = 'duplicates at t = 1'
CAUGHT_BY: tuple[str, ...] = ('substitute.exact_ties', 'substitute.signed_zeros', 'substitute.threshold_ends')


class T1NoMerge(Base2):
    def witness(self, s, x):
        if s.t >= 1.0:
            return None
        return super().witness(s, x)


export(T1NoMerge(), globals())
