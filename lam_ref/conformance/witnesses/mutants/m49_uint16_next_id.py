"""Mutant: the session's next chunk id is a uint16 counter: past 65,536 arrivals ids wrap to 0, so a
retained chunk reports π[i] = i - 65,536 (SPEC §1.2: ids increase across the trajectory)."""

from __future__ import annotations

from ._base2 import Base2, export

BUG = 'next chunk id kept in a uint16 counter (wraps at 65,536)'
VIOLATES = 'DEF1'
CLASS = 'integer width'
IDIOM = 'C: uint16_t next_id; ++next_id'
NEEDS = 'more than 65,536 arrivals with a retained row after id 65,535'
CAUGHT_BY: tuple[str, ...] = ('substitute.large_ids',)


class Uint16Ids(Base2):
    def assign_id(self, s, k):
        return (s.next_id + k) & 0xFFFF


export(Uint16Ids(), globals())
