"""Mutant: empty records are skipped (`if not record: continue`), so the output has fewer records than
the input (SPEC §15: one output record per input record)."""

from __future__ import annotations

from ._base2 import Base2, export

BUG = 'empty records dropped from the output'
VIOLATES = 'L0'
CLASS = 'early exit'
IDIOM = 'Python: if not rec: continue'
NEEDS = 'L0 with empty records'
CAUGHT_BY: tuple[str, ...] = ('lines.text_edges', 'vectors.l0')


class SkipsEmpty(Base2):
    def dedup_lines(self, records):
        seen = self.new_seen()
        return [self.dedup_record(r, seen) for r in records if r]


export(SkipsEmpty(), globals())
