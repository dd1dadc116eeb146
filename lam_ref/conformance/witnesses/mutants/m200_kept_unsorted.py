"""Mutant (kept-set form): returns the kept indices in the order of a Python ``set`` walk, reversed
here for determinism: the indices are not ascending (SPEC §15.5)."""

from __future__ import annotations

import numpy as np

from ._kept_base import KeptBase, export_kept

BUG = "returns the kept indices newest first (not in arrival order)"
VIOLATES = "DEF1"


class Unsorted(KeptBase):
    WITNESS = False

    def output(self, kept, witness):
        return np.asarray(sorted(kept, reverse=True), dtype=np.int64)


export_kept(Unsorted(), globals())
