"""Mutant: the scan of each record starts at its second line: the first line is copied through, never
dropped and never registered (SPEC §7.2: every line of every record)."""

from __future__ import annotations

from ._base2 import Base2, export

BUG = 'first line of each record bypasses L0'
VIOLATES = 'L0'
CLASS = 'off-by-one at record boundary'
IDIOM = 'C: for (j = 1; j < nlines; ++j)'
NEEDS = 'L0 repeats on the first line of a record'
CAUGHT_BY: tuple[str, ...] = ('lines.semantics', 'lines.text_edges', 'lines.large')


class FirstLineSkipped(Base2):
    def dedup_record(self, record, seen):
        lines = self.split_lines(record)
        head, rest = lines[:1], self.join_lines(lines[1:])
        tail = super().dedup_record(rest, seen) if len(lines) > 1 else None
        return self.join_lines(head + ([tail] if tail is not None else []))


export(FirstLineSkipped(), globals())
