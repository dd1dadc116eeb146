"""Mutant: lines are keyed by their Latin-1 encoding with replacement, so every non-Latin character
becomes '?' and different lines in Cyrillic, CJK or emoji collide (SPEC §7.1: the UTF-8 bytes)."""

from __future__ import annotations

from ._base2 import Base2, export

BUG = "line key encoded as Latin-1 with errors='replace'"
VIOLATES = 'L0'
CLASS = 'text encoding'
IDIOM = "Python 2 habit / C: narrow char conversion with '?' fallback"
NEEDS = 'L0 on non-Latin text'
CAUGHT_BY: tuple[str, ...] = ('lines.text_edges',)


class Latin1(Base2):
    def line_key(self, line):
        return line.encode("latin-1", "replace")


export(Latin1(), globals())
