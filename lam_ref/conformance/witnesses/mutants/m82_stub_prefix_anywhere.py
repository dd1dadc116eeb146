"""Mutant: a line counts as a stub when it *contains* STUB_PREFIX anywhere, so ordinary repeated lines
that quote the prefix mid-line are never deduplicated (SPEC §7.1: stub lines start with the prefix)."""

from __future__ import annotations

from ._base2 import Base2, export

BUG = 'stub test uses `in` instead of startswith'
VIOLATES = 'L0'
CLASS = 'text encoding'
IDIOM = 'C: strstr(line, PREFIX) != NULL'
NEEDS = 'L0 lines containing the stub prefix mid-line'
CAUGHT_BY: tuple[str, ...] = ('lines.text_edges', 'vectors.l0')


class PrefixAnywhere(Base2):
    def is_stub(self, line):
        return self.STUB_PREFIX in line


export(PrefixAnywhere(), globals())
