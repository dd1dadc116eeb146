"""Mutant (kept-set form): names the most similar kept row as the witness (as semhash 0.5 does), not
the lowest id within δ (SPEC §5): the kept set is right, the witness is not."""

from __future__ import annotations

import numpy as np

from ._kept_base import KeptBase, export_kept

BUG = "witness = nearest kept row instead of the lowest kept id within δ"
VIOLATES = "DEF1"


class Nearest(KeptBase):
    def choose(self, cands, sq, ok):
        inside = np.flatnonzero(ok)
        return int(cands[inside[np.argmin(sq[inside])]])


export_kept(Nearest(), globals())
