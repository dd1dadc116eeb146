"""Mutant (kept-set form): drops a row when *any* earlier row, kept or dropped, is within δ (a
transitive, union-find-like rule): a dropped row may then have no kept row within δ (SPEC §5)."""

from __future__ import annotations

import numpy as np

from ._kept_base import KeptBase, export_kept

BUG = "compares each row with every earlier row, dropped ones included"
VIOLATES = "DEF1"


class Transitive(KeptBase):
    WITNESS = False
    COMPLETE = False

    def candidates(self, kept, i):
        return np.arange(i, dtype=np.int64)


export_kept(Transitive(), globals())
