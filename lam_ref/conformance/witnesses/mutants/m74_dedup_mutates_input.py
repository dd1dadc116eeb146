"""Mutant: dedup_lines writes each residual back into the caller's list and returns that same list
object (SPEC §15: a function of the records; the caller's list is not an output buffer)."""

from __future__ import annotations

from ._base2 import Base2, export

BUG = 'dedup_lines overwrites the input list in place'
VIOLATES = 'L0'
CLASS = 'aliasing'
IDIOM = 'Python: records[i] = residual; return records'
NEEDS = 'L0 input list left untouched (and a fresh output list)'
CAUGHT_BY: tuple[str, ...] = ('lines.input_untouched',)


class MutatesInput(Base2):
    def dedup_lines(self, records):
        seen = self.new_seen()
        for i, r in enumerate(records):
            records[i] = self.dedup_record(r, seen)
        return records


export(MutatesInput(), globals())
