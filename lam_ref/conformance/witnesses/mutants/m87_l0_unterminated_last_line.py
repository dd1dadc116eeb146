"""Mutant: only '\\n'-terminated lines are deduplicated: the last line of a record that does not end
with '\\n' is copied through and never registered (SPEC §7.1: each record is split on '\\n')."""

from __future__ import annotations

from ._base2 import Base2, export

BUG = 'last line without a terminator bypasses L0'
VIOLATES = 'L0'
CLASS = 'off-by-one at record boundary'
IDIOM = 'C: while (getline(...)) loop that handles only complete lines'
NEEDS = 'L0 repeats on an unterminated last line'
CAUGHT_BY: tuple[str, ...] = ('lines.semantics', 'lines.text_edges', 'lines.large')


class Unterminated(Base2):
    def dedup_record(self, record, seen):
        lines = self.split_lines(record)
        if len(lines) < 2 or lines[-1] == "":
            return super().dedup_record(record, seen)
        return self.join_lines([super().dedup_record(self.join_lines(lines[:-1]), seen), lines[-1]])


export(Unterminated(), globals())
