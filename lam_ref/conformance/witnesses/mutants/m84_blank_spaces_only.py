"""Mutant: only spaces count as blank, so a line of tabs (or other whitespace) is deduplicated like
content (SPEC §7.1: blank or whitespace-only lines are protected)."""

from __future__ import annotations

from ._base2 import Base2, export

BUG = "whitespace-only test knows only ' '"
VIOLATES = 'L0'
CLASS = 'text encoding'
IDIOM = 'C: strspn(line, " ") == len'
NEEDS = 'L0 whitespace-only lines of tabs'
CAUGHT_BY: tuple[str, ...] = ('lines.semantics', 'lines.text_edges', 'vectors.l0')


class SpacesOnly(Base2):
    def is_blank(self, line):
        return line.strip(" ") == ""


export(SpacesOnly(), globals())
