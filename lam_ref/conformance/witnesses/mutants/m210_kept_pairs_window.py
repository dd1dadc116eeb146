"""Mutant (kept-set form, ``COMPLETE = False``, reports the pairs it found): it finds every pair within
δ but compares each row only with the kept rows among the previous two arrivals (a sliding-window
shortcut), so it keeps a row although one of its own reported pairs names an earlier kept row
within δ (SPEC §15.1: the lowest id among the pairs it found; §15.5)."""

from __future__ import annotations

import numpy as np

from ....geometry import delta_sq, sq_dist_rows
from ._kept_base import KeptBase, export_kept

BUG = "decides over a window of the last two arrivals while reporting every pair it found"
VIOLATES = "DEF1"


class Window(KeptBase):
    COMPLETE = False

    def candidates(self, kept, i):
        return np.asarray([k for k in kept if k >= i - 2], dtype=np.int64)

    def kept(self, embeddings, t):
        idx, _ = super().kept(embeddings, t)
        e = np.asarray(embeddings, dtype=np.float32)
        d2 = delta_sq(float(t))
        pairs = [(i, j) for i in range(e.shape[0]) for j in range(i)
                 if sq_dist_rows(e, np.array([i]), e[np.array([j])])[0] <= d2]
        return idx, np.asarray(pairs, dtype=np.int64).reshape(-1, 2)


export_kept(Window(), globals())
