"""Control (must pass): scans the retained rows from the newest to the oldest and keeps the smallest id
within δ (another loop order, same lowest-id witness, SPEC §5.1)."""

from __future__ import annotations

from ..mutants._base2 import Base2, export

CONTROL = True
ALLOWED = 'reverse candidate order, keeping the minimum id'


class Reverse(Base2):
    def witness(self, s, x):
        best = None
        for slot in self.scan(s, x)[::-1]:
            if self.within(self.sq_to(x, s.rows[slot : slot + 1]), s.d2)[0]:
                cid = int(s.ids[slot])
                best = cid if best is None else min(best, cid)
        return best


export(Reverse(), globals())
