"""Mutant: lines are compared after rstrip(), so 'x' and 'x   ' count as the same line and the second
is dropped (SPEC §7.1: a line's hash is of its bytes)."""

from __future__ import annotations

from ._base2 import Base2, export

BUG = 'trailing whitespace stripped before hashing'
VIOLATES = 'L0'
CLASS = 'text encoding'
IDIOM = 'C: trim_right(buf) before hashing; Python line.rstrip()'
NEEDS = 'L0 lines differing only in trailing whitespace'
CAUGHT_BY: tuple[str, ...] = ('lines.text_edges', 'lines.exact_bytes', 'vectors.l0')


class RstripKey(Base2):
    def line_key(self, line):
        return line.rstrip().encode("utf-8", "surrogatepass")


export(RstripKey(), globals())
