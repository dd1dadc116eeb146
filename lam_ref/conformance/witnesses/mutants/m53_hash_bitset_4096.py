"""Mutant: the L0 seen-set is a 4,096-bit table indexed by XXH3-64 mod 4,096 with no stored key, so two
different lines in the same bucket count as a repeat (SPEC §7.2 drops a line only when its own hash
was seen)."""

from __future__ import annotations

import xxhash

from ._base2 import Base2, export

BUG = 'seen-set is a 4,096-bucket bitset without key comparison'
VIOLATES = 'L0'
CLASS = 'fixed-size buffer'
IDIOM = 'C: uint8_t seen[4096/8]; bit h & 4095'
NEEDS = 'L0 over more than ~100 distinct lines (bucket collisions)'
CAUGHT_BY: tuple[str, ...] = ('lines.semantics', 'lines.large', 'vectors.l0')


class Bitset:
    def __init__(self):
        self.bits = bytearray(4096 // 8)

    def _slot(self, key):
        return xxhash.xxh3_64_intdigest(key) & 4095

    def __contains__(self, key):
        h = self._slot(key)
        return bool(self.bits[h >> 3] & (1 << (h & 7)))

    def add(self, key):
        h = self._slot(key)
        self.bits[h >> 3] |= 1 << (h & 7)


class HashBitset(Base2):
    def new_seen(self):
        return Bitset()


export(HashBitset(), globals())
