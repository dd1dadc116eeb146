r"""The STAB certificate: decision margins, jitter and at-risk decisions (claim ``STAB``; paper App. D; SPEC §2, §10).

The math of docs/determinism.md ("The stability lemma"), on embedding matrices only:

* **Margin** of arrival ``i`` (greedy first occurrence, SPEC §5): with ``R_i`` the rows retained
  before ``i``, ``margin_i = min_{j ∈ R_i} |sq(e_i, e_j) − δ²|`` (``+∞`` when ``R_i`` is empty).
  In cosine units (unit rows, eq. 1) this is ``2 · |cos(e_i, e_j) − t|`` at the closest pair.
* **Lemma (STAB)**: if a perturbed embedding matrix ``E'`` satisfies
  ``|sq'(i, j) − sq(i, j)| < margin_i`` for every ``i`` and every ``j ∈ R_i``, the greedy rule
  gives the same ``π`` on ``E'`` as on ``E`` (induction on arrivals; docs/determinism.md).
* **Jitter** between two encodings of the same windows: the largest coordinate difference, the
  largest difference of a pairwise dot product (self products included: "cosine jitter" ``γ``)
  and the largest ``|Δsq|``. Since ``sq = a·a + b·b − 2a·b``, ``|Δsq| <= 4γ``; a decision is
  **at risk** under a stated jitter ``γ`` when its margin is at most ``4γ`` (plus the float64
  slack :data:`MARGIN_SLACK`). A decision that is not at risk cannot change (the lemma); the first
  decision that differs between two runs is always at risk for the jitter between them.

This module imports numpy and :mod:`lam_ref.geometry` only: no encoder, no torch, no subprocess
(``determinism/test_package.py`` checks it in a fresh interpreter and on the source).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from ..geometry import LamValueError, delta_sq, validate_embeddings, validate_threshold

__all__ = ["MACHINE_JITTER", "MARGIN_SLACK", "at_risk", "decision_margins", "first_divergence", "groups_or_all", "jitter",
           "risk_bound"]

#: Allowance for float64 rounding when margins and ``Δsq`` are computed from Gram matrices
#: (``sq = n_i + n_j − 2 g_ij``) instead of the coordinate-wise sum of SPEC §2: the two differ by
#: less than ``4 (D + 2) · 2**-53 · (1 + 1e-4)**2``, below ``1e-12`` for ``D <= 4096``.
MARGIN_SLACK = 1e-12
#: The pairwise-cosine jitter γ the certificate assumes by default between machines and CPU kernels
#: (``probe``'s at-risk set uses the larger of this and the jitter it measures): about 3x the largest
#: jitter measured between CPU kernel configurations (3.5e-7: torch's scalar kernels against its
#: AVX-512 ones on AMD EPYC) and between batch sizes on AMD EPYC and Intel Xeon (3.2e-7);
#: docs/determinism.md, "Which jitter to assume".
MACHINE_JITTER = 1e-6
_BLOCK = 2048


def groups_or_all(n: int, groups: Sequence[tuple[int, int]] | None) -> list[tuple[int, int]]:
    """``groups`` checked as consecutive ``[start, stop)`` ranges covering ``0..n`` (``None``: one group of all rows)."""
    if groups is None:
        return [(0, n)] if n else []
    out = [(int(a), int(b)) for a, b in groups]
    pos = 0
    for a, b in out:
        if a != pos or b < a:
            raise LamValueError(f"groups must be consecutive [start, stop) ranges covering 0..{n}, got {out[:5]!r}...")
        pos = b
    if pos != n:
        raise LamValueError(f"groups cover 0..{pos} but there are {n} rows")
    return out


def decision_margins(
    embeddings: Any, pi: Any, t: float, groups: Sequence[tuple[int, int]] | None = None
) -> np.ndarray:
    """``margin_i = min_{j ∈ R_i} |sq(e_i, e_j) − δ²|`` per arrival, ``+∞`` where ``R_i`` is empty (claim ``STAB``).

    ``R_i`` are the rows retained (``π[j] == j``) before ``i`` in ``i``'s group (a trajectory, or
    the whole matrix when ``groups`` is ``None``); ``π`` is given in global ids. ``sq`` comes from
    float64 Gram products, within :data:`MARGIN_SLACK` of SPEC §2's coordinate-wise sum.

    Args:
        embeddings: unit float32 rows ``(N, D)`` in arrival order.
        pi: the representative map ``int64[N]`` of the greedy rule on these rows.
        t: the cosine threshold.
        groups: consecutive ``[start, stop)`` ranges (matching never crosses a group).

    Returns:
        float64[N], in squared-distance units (cosine units: divide by 2).

    Raises:
        LamValueError: bad rows, threshold, groups or a ``π`` of the wrong length.
    """
    e = validate_embeddings(embeddings)
    t = validate_threshold(t)
    d2 = delta_sq(t)
    p = np.asarray(pi, dtype=np.int64)
    n = e.shape[0]
    if p.shape != (n,):
        raise LamValueError(f"pi must have shape ({n},), got {p.shape}")
    out = np.full(n, np.inf)
    for a, b in groups_or_all(n, groups):
        ids = np.arange(a, b)
        kept = ids[p[a:b] == ids]
        if kept.size == 0:
            continue
        e64 = e[a:b].astype(np.float64)
        norms = np.einsum("ij,ij->i", e64, e64)
        k64 = e[kept].astype(np.float64)
        knorm = np.einsum("ij,ij->i", k64, k64)
        for s in range(0, b - a, _BLOCK):
            rows = ids[s : s + _BLOCK]
            sq = norms[s : s + _BLOCK, None] + knorm[None, :] - 2.0 * (e64[s : s + _BLOCK] @ k64.T)
            gap = np.abs(sq - d2)
            gap[kept[None, :] >= rows[:, None]] = np.inf  # only rows retained *before* i count
            out[rows] = gap.min(axis=1)
    return out


def risk_bound(cos_jitter: float) -> float:
    """The ``|Δsq|`` bound implied by a pairwise-cosine jitter ``γ``: ``4γ`` (``sq = a·a + b·b − 2a·b``)."""
    g = float(cos_jitter)
    if not math.isfinite(g) or g < 0:
        raise LamValueError(f"jitter must be a finite number >= 0, got {cos_jitter!r}")
    return 4.0 * g


def at_risk(margins: Any, bound_sq: float) -> np.ndarray:
    """Ids of the decisions whose margin is at most ``bound_sq + MARGIN_SLACK`` (claim ``STAB``).

    A decision outside this set cannot change under any perturbation with ``|Δsq| <= bound_sq``.
    """
    m = np.asarray(margins, dtype=np.float64)
    return np.flatnonzero(np.isfinite(m) & (m <= float(bound_sq) + MARGIN_SLACK)).astype(np.int64)


def jitter(reference: Any, other: Any, groups: Sequence[tuple[int, int]] | None = None) -> dict[str, float]:
    """Differences between two encodings of the same windows (App. D's "jitter").

    Returns ``coord`` (max coordinate difference), ``cos`` (max ``|Δ(e_i·e_j)|`` over pairs in
    a group, self products included: the pairwise-cosine jitter γ) and ``sq`` (max
    ``|Δsq(e_i, e_j)|`` over pairs in a group): ``sq <= 4·cos`` up to float64 rounding.
    """
    a = np.asarray(reference, dtype=np.float32)
    b = np.asarray(other, dtype=np.float32)
    if a.shape != b.shape or a.ndim != 2:
        raise LamValueError(f"jitter needs two (N, D) matrices of one shape, got {a.shape} and {b.shape}")
    out = {"coord": float(np.abs(a.astype(np.float64) - b.astype(np.float64)).max()) if a.size else 0.0,
           "cos": 0.0, "sq": 0.0}
    for s, z in groups_or_all(a.shape[0], groups):
        a64, b64 = a[s:z].astype(np.float64), b[s:z].astype(np.float64)
        selfd = np.einsum("ij,ij->i", b64, b64) - np.einsum("ij,ij->i", a64, a64)
        for r in range(0, z - s, _BLOCK):
            dg = b64[r : r + _BLOCK] @ b64.T - a64[r : r + _BLOCK] @ a64.T
            out["cos"] = max(out["cos"], float(np.abs(dg).max()))
            dsq = selfd[r : r + _BLOCK, None] + selfd[None, :] - 2.0 * dg
            out["sq"] = max(out["sq"], float(np.abs(dsq).max()))
    return out


def first_divergence(pi_a: Any, pi_b: Any) -> tuple[int | None, int]:
    """``(first id whose π differs, how many later ids differ)``; ``(None, 0)`` when equal."""
    a, b = np.asarray(pi_a, dtype=np.int64), np.asarray(pi_b, dtype=np.int64)
    if a.shape != b.shape:
        raise LamValueError(f"maps differ in length: {a.size} vs {b.size}")
    diff = np.flatnonzero(a != b)
    if diff.size == 0:
        return None, 0
    return int(diff[0]), int(diff.size - 1)
