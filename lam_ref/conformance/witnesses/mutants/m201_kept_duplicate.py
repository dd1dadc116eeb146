"""Mutant (kept-set form): appends the first row again when it closes a cluster, so an index appears
twice (SPEC §15.5: distinct indices)."""

from __future__ import annotations

import numpy as np

from ._kept_base import KeptBase, export_kept

BUG = "a kept index is reported twice"
VIOLATES = "DEF1"


class Duplicate(KeptBase):
    WITNESS = False

    def output(self, kept, witness):
        return np.asarray([0, *sorted(kept)], dtype=np.int64)


export_kept(Duplicate(), globals())
