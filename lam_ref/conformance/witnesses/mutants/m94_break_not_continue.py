"""Mutant: the candidate loop breaks at the first retained row beyond δ instead of moving on to the
next one (SPEC §5.1: the lowest retained id within δ, among all retained rows)."""

from __future__ import annotations

from ._base2 import Base2, export

BUG = '`break` instead of `continue` in the candidate loop'
VIOLATES = 'DEF1'
CLASS = 'early exit'
IDIOM = 'C: if (sq > d2) break;'
NEEDS = 'a far retained row before the witness'
CAUGHT_BY: tuple[str, ...] = ('substitute.equals_oracle', 'substitute.shared_blocks', 'substitute.chain')


class BreakEarly(Base2):
    def witness(self, s, x):
        for slot in self.scan(s, x):
            if not self.within(self.sq_to(x, s.rows[slot : slot + 1]), s.d2)[0]:
                return None
            return int(s.ids[slot])
        return None


export(BreakEarly(), globals())
