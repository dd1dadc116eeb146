"""Mutant: records are read with universal newlines: CRLF is turned into LF before splitting, so '\\r'
disappears from the residual and 'a\\r' equals 'a' (SPEC §7.1: split on '\\n' only; a line is its
bytes)."""

from __future__ import annotations

from ._base2 import Base2, export

BUG = 'CRLF normalised to LF before L0'
VIOLATES = 'L0'
CLASS = 'text encoding'
IDIOM = 'Python: open(path, newline=None); C++: std::getline in text mode on Windows'
NEEDS = 'L0 on CRLF text'
CAUGHT_BY: tuple[str, ...] = ('lines.text_edges', 'vectors.l0')


class CrlfNormalised(Base2):
    def split_lines(self, record):
        return record.replace("\r\n", "\n").split("\n")


export(CrlfNormalised(), globals())
