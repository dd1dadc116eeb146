"""Mutant: the retained rows live in a ring buffer of 1,024 slots: an arrival is compared only with the
1,024 most recently retained rows, so a repeat of an early chunk is retained again once more than
1,024 chunks were kept (SPEC §5.1: every retained chunk is a candidate)."""

from __future__ import annotations

from ._base2 import Base2, export

BUG = 'retained set is a 1,024-slot ring buffer (older retained rows forgotten)'
VIOLATES = 'DEF1'
CLASS = 'fixed-size buffer'
IDIOM = 'C: static float kept[1024][D], index k % 1024'
NEEDS = 'retained sets past 1,024 rows with a late repeat of an early row'
CAUGHT_BY: tuple[str, ...] = ('substitute.large_ids', 'substitute.retained_4096', 'vectors.core')


class Ring1024(Base2):
    CAP = 1024

    def scan(self, s, x):
        slots = s.neighbours(x)
        return slots[slots >= s.count - self.CAP]


export(Ring1024(), globals())
