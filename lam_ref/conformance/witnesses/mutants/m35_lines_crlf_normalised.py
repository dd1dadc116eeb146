"""Mutant: L0 strips a trailing ``\r`` before comparing lines (CRLF "normalised"), so ``"a\r"``
counts as a repeat of ``"a"`` (SPEC §7.1: lines are compared byte for byte, split on ``\n`` only)."""

from __future__ import annotations

from ._base import Base, export

BUG = "L0 compares lines with a trailing CR removed"
VIOLATES = "L0"


class CrlfNormalised(Base):
    def line_key(self, line: str) -> str:
        return line.rstrip("\r")


export(CrlfNormalised(), globals())
