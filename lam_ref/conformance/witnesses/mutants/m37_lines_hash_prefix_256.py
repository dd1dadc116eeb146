"""Mutant: L0 hashes only the first 256 bytes of a line (a fixed read buffer), so long lines that
share a long prefix count as repeats (SPEC §7.1: the whole line is compared)."""

from __future__ import annotations

from ._base import Base, export

BUG = "L0 compares only the first 256 bytes of each line"
VIOLATES = "L0"


class HashPrefix(Base):
    def line_key(self, line: str) -> bytes:
        return line.encode("utf-8", "surrogatepass")[:256]


export(HashPrefix(), globals())
