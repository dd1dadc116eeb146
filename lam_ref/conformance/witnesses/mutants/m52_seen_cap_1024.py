"""Mutant: the L0 seen-set is a FIFO of 1,024 hashes: after 1,024 distinct lines the oldest are
evicted, so their repeats are kept (SPEC §7.2: the trajectory's seen-set)."""

from __future__ import annotations

from ._base2 import Base2, export

BUG = 'L0 seen-set capped at 1,024 entries (FIFO eviction)'
VIOLATES = 'L0'
CLASS = 'fixed-size buffer'
IDIOM = 'C: uint64_t seen[1024] ring, seen[n++ % 1024] = h'
NEEDS = 'L0 seen-sets past 1,024 distinct lines with a late repeat'
CAUGHT_BY: tuple[str, ...] = ('lines.large', 'vectors.l0')


class Fifo:
    def __init__(self, cap):
        self.cap, self.order, self.keys = cap, [], set()

    def __contains__(self, key):
        return key in self.keys

    def add(self, key):
        self.order.append(key)
        self.keys.add(key)
        if len(self.order) > self.cap:
            self.keys.discard(self.order.pop(0))


class SeenCap(Base2):
    def new_seen(self):
        return Fifo(1024)


export(SeenCap(), globals())
