"""Mutant: L0 keys a line by its C string, so a line is cut at its first NUL: 'a\\0b', 'a\\0c' and 'a'
are one line (SPEC §7.1: the key is the line's exact UTF-8 bytes, NUL included)."""

from __future__ import annotations

from ._base2 import Base2, export

BUG = "line key cut at the first NUL (strlen)"
VIOLATES = "L0"
CLASS = "text encoding"
IDIOM = "C: XXH3_64bits(line, strlen(line))"
NEEDS = "lines that differ after a NUL"
CAUGHT_BY: tuple[str, ...] = ("lines.key_collisions",)


class CutAtNul(Base2):
    def line_key(self, line):
        return line.split("\x00", 1)[0].encode("utf-8", "surrogatepass")


export(CutAtNul(), globals())
