"""Mutant: the line key drops a trailing '\\r' (getline plus CR trimming), so a CRLF line and the same
LF line count as equal (SPEC §7.1: the line without its '\\n' terminator)."""

from __future__ import annotations

from ._base2 import Base2, export

BUG = 'trailing CR removed from the key'
VIOLATES = 'L0'
CLASS = 'text encoding'
IDIOM = "C: if (len && buf[len-1] == '\\\\r') buf[--len] = 0;"
NEEDS = 'L0 on CRLF and LF copies of one line'
CAUGHT_BY: tuple[str, ...] = ('lines.text_edges', 'vectors.l0')


class StripCr(Base2):
    def line_key(self, line):
        return line.rstrip("\r").encode("utf-8", "surrogatepass")


export(StripCr(), globals())
