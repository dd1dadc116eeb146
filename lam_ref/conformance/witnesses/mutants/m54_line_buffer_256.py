"""Mutant: lines are compared through a 256-byte key buffer, so two lines that share their first 256
bytes count as equal (SPEC §7.1: the hash is of the whole line)."""

from __future__ import annotations

from ._base2 import Base2, export

BUG = 'line key truncated to a 256-byte buffer'
VIOLATES = 'L0'
CLASS = 'fixed-size buffer'
IDIOM = 'C: char key[256]; strncpy(key, line, sizeof key)'
NEEDS = 'L0 lines longer than 256 bytes that share a long prefix'
CAUGHT_BY: tuple[str, ...] = ('lines.large', 'vectors.l0')


class Prefix256(Base2):
    def line_key(self, line):
        return line.encode("utf-8", "surrogatepass")[:256]


export(Prefix256(), globals())
