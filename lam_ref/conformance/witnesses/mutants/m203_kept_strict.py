"""Mutant (kept-set form): merges iff ``sq < δ²`` (strict): exact ties are kept apart (SPEC §2.1)."""

from __future__ import annotations

from ._kept_base import KeptBase, export_kept

BUG = "strict < instead of <= in the merge test"
VIOLATES = "DEF1"
PROFILES = {"kept-set"}  # under kept-set-f32 exact ties are in the tie band: either answer is allowed


class Strict(KeptBase):
    def within(self, sq, d2):
        return sq < d2


export_kept(Strict(), globals())
