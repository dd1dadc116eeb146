"""Mutant (kept-set form): scans the rows newest first, so of two near duplicates the later one is
kept: the decision on a row depends on later rows (SPEC §5, the prefix property)."""

from __future__ import annotations

from ._kept_base import KeptBase, export_kept

BUG = "greedy over the rows in reverse arrival order (keeps the newest duplicate)"
VIOLATES = "DEF1"


class Newest(KeptBase):
    WITNESS = False

    def order(self, n):
        return range(n - 1, -1, -1)


export_kept(Newest(), globals())
