"""Pairs of windows within δ, counted exactly (the paper's near-duplicate control on LoCoMo, App. K:
2 pairs at cosine >= 0.95 among 17,296,021 with bge-base; SPEC §1, §2; ``lam-ref pairs``).

A pair ``(i, j)`` is within δ iff the merge rule of SPEC §2 holds: ``sum((e_i - e_j)**2) <= 2 - 2t``
in float64, inclusive. Pairs inside one group (trajectory) are what LAM matches; pooled, pairs
across groups count too, and :class:`PairCount` splits the two.
"""

from __future__ import annotations

import heapq
from dataclasses import dataclass

import numpy as np

from .geometry import delta_sq, sq_dist_rows, validate_threshold

__all__ = ["BLOCK", "EXACT_MARGIN", "PairCount", "near_pairs"]

#: Rows of the Gram matrix computed at once (memory: BLOCK × N float64).
BLOCK = 1024
#: Pairs whose approximate squared distance is this close to δ² are decided by the exact rule.
EXACT_MARGIN = 1e-6


@dataclass
class PairCount:
    """Pairs of windows looked at and found within δ, split by where they lie."""

    pairs_within_trajectories: int = 0
    pairs_across_trajectories: int = 0
    near_within: int = 0
    near_across: int = 0

    def to_json(self) -> dict[str, int]:
        return {
            "pairs_within_trajectories": self.pairs_within_trajectories,
            "pairs_across_trajectories": self.pairs_across_trajectories,
            "near_within": self.near_within,
            "near_across": self.near_across,
            "pairs_total": self.pairs_within_trajectories + self.pairs_across_trajectories,
            "near_total": self.near_within + self.near_across,
        }


def near_pairs(e: np.ndarray, t: float, groups: np.ndarray | None = None, pool: bool = True,
               top: int = 10, text_ids: np.ndarray | None = None) -> tuple[PairCount, list[tuple[float, int, int]]]:
    """All pairs ``i < j`` of rows of ``e`` within δ by the rule of SPEC §2, counted exactly.

    Args:
        e: unit float32 rows (N, D).
        t: cosine threshold in [-1, 1].
        groups: group (trajectory) number of each row; ``None``: one group.
        pool: count pairs across groups too (else only pairs inside a group).
        top: how many of the closest pairs to return.
        text_ids: one id per row, equal for rows of equal text; when given, pairs of equal text are
            counted but not returned among the closest (``--top-distinct``).

    Returns:
        The counts, and up to ``top`` closest pairs ``(distance, i, j)`` among the counted ones,
        closest first (ties by ``i``, then ``j``).

    Raises:
        LamValueError: a bad threshold.
    """
    t = validate_threshold(t, "--threshold")
    d2 = delta_sq(t)
    e = np.asarray(e, dtype=np.float32)
    n = e.shape[0]
    g = np.zeros(n, dtype=np.int64) if groups is None else np.asarray(groups, dtype=np.int64)
    counts = PairCount()
    _, sizes = np.unique(g, return_counts=True)
    within_total = int((sizes * (sizes - 1) // 2).sum())
    counts.pairs_within_trajectories = within_total
    counts.pairs_across_trajectories = n * (n - 1) // 2 - within_total if pool else 0
    best: list[tuple[float, int, int]] = []  # max-heap of the closest pairs via negated keys
    e64 = e.astype(np.float64)
    for a in range(0, n, BLOCK):
        b = min(n, a + BLOCK)
        approx = 2.0 - 2.0 * (e64[a:b] @ e64.T)  # rows a..b against every row
        rows, cols = np.nonzero(approx <= d2 + EXACT_MARGIN)
        rows = rows + a
        keep = cols > rows
        if not pool:
            keep &= g[rows] == g[cols]
        rows, cols = rows[keep], cols[keep]
        if rows.size == 0:
            continue
        sq = sq_dist_rows(e, rows, e[cols])  # the exact rule decides every candidate
        ok = sq <= d2
        rows, cols, sq = rows[ok], cols[ok], sq[ok]
        same = g[rows] == g[cols]
        counts.near_within += int(same.sum())
        counts.near_across += int((~same).sum())
        if top > 0:
            if text_ids is not None:
                distinct = np.flatnonzero(text_ids[rows] != text_ids[cols])
                order = distinct[np.lexsort((cols[distinct], rows[distinct], sq[distinct]))[:top]]
            else:
                order = np.lexsort((cols, rows, sq))[:top]
            for k in order.tolist():
                item = (-float(sq[k]), -int(rows[k]), -int(cols[k]))
                if len(best) < top:
                    heapq.heappush(best, item)
                elif item > best[0]:
                    heapq.heapreplace(best, item)
    closest = sorted((float(np.sqrt(-s)), -i, -j) for s, i, j in best)
    return counts, closest
