"""Mutant: L0's seen-set holds a 32-bit Java String.hashCode hash of each line, so two different lines with one
hash are taken for the same line and the second is dropped (SPEC §7.1: the key is the line's exact
UTF-8 bytes, through a 64-bit hash at least)."""

from __future__ import annotations

from ...hazards import java_hash
from ._base2 import Base2, export

BUG = "line key is a 32-bit Java String.hashCode hash"
VIOLATES = "L0"
CLASS = "key collision"
IDIOM = "Java: seen.add(line.hashCode())"
NEEDS = "two lines with one 32-bit Java String.hashCode hash"
CAUGHT_BY: tuple[str, ...] = ("lines.key_collisions",)


class Hash32(Base2):
    def line_key(self, line):
        return java_hash(line)


export(Hash32(), globals())
