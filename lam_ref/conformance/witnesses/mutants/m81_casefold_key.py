"""Mutant: lines are compared case-insensitively, so 'Error' and 'error' count as the same line (SPEC
§7.1: exact bytes)."""

from __future__ import annotations

from ._base2 import Base2, export

BUG = 'case-insensitive line comparison'
VIOLATES = 'L0'
CLASS = 'text encoding'
IDIOM = 'C: strcasecmp / SQL COLLATE NOCASE'
NEEDS = 'L0 lines differing only in case'
CAUGHT_BY: tuple[str, ...] = ('lines.exact_bytes',)


class Casefold(Base2):
    def line_key(self, line):
        return line.casefold().encode("utf-8", "surrogatepass")


export(Casefold(), globals())
