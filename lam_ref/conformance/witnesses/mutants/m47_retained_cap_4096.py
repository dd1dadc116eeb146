"""Mutant: the retained index is a fixed array of 4,096 rows; once it is full, newly retained chunks
are still reported as retained but are never indexed, so their later repeats are retained too (SPEC
§5.1)."""

from __future__ import annotations

from ._base2 import Base2, export

BUG = 'retained index silently stops growing at 4,096 rows'
VIOLATES = 'DEF1'
CLASS = 'fixed-size buffer'
IDIOM = 'C++: if (n_kept < MAX_KEPT) kept[n_kept++] = row;'
NEEDS = 'retained sets past 4,096 rows with a late repeat'
CAUGHT_BY: tuple[str, ...] = ('substitute.retained_4096',)


class Cap4096(Base2):
    CAP = 4096

    def decide_row(self, s, x, cid):
        rep = self.witness(s, x)
        if rep is None:
            if s.count < self.CAP:
                s.push(x, cid)
            return cid
        return rep


export(Cap4096(), globals())
