"""Auditing what a compactor wrote, not the compactor (issue 21 §6; docs/audit.md; ``lam-ref audit``).

Given the embeddings (one unit row per chunk in arrival order), the compactor's output as the kept
set or as its map π, the rows where each trajectory starts and the threshold ``t``, the report
(:func:`audit_output`) holds, matching within a trajectory (SPEC §1.1):

* **Theorem 1's premise** (``THM1``, SPEC §1.5): every deleted row has a retained witness within
  δ in its trajectory (rule of SPEC §2.1, ``sq <= 2 - 2t`` in float64). Violators are listed with
  their nearest retained row. With π, each declared representative is also checked (it must
  be retained, in the same trajectory and within δ).
* **δ̂**: the largest distance from a deleted row to its nearest retained row (the best any map
  onto this kept set can do; above δ exactly when the premise fails; rows of a trajectory with
  nothing retained have no nearest row and are listed as violations) and, with π, the given map's own δ̂ (SPEC §1.5).
* whether the output **equals Algorithm 2's** π (SPEC §5.1, exhaustive), and the first row where
  it differs;
* on small trajectories (at most ``max_exact`` rows, default 60) the **exact optimum** ``N(S, δ)``
  (SPEC §11.1, ``scipy.optimize.milp``) and the kept set's gap to it.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from .covering import covering_number
from .geometry import (
    LamValueError,
    delta_from_t,
    delta_sq,
    sq_dist_rows,
    validate_embeddings,
    validate_threshold,
)
from .substitution import substitute

__all__ = ["MAX_EXACT", "SCHEMA", "audit_output"]

#: The report's schema (``lam_ref/schemas/lam_ref.audit.report.schema.json``, :mod:`lam_ref.schemas`).
SCHEMA = "lam_ref.audit.report"

#: Trajectories up to this many rows get the exact optimum by default (milp; tens of points).
MAX_EXACT = 60
#: float64 Gram distances of unit rows are within about 1e-15 of the exact ones; anything within
#: this margin of δ² is decided by the exact rule (SPEC §2.1).
_GRAM_MARGIN = 1e-9


def _nearest_retained(e64: np.ndarray, rows: np.ndarray, kept: np.ndarray, d2: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per row of ``rows``: nearest row of ``kept`` (float64 Gram), its exact ``sq``, and whether
    some retained row is within δ by the exact rule (rows within the margin are confirmed exactly)."""
    near = np.full(rows.size, -1, np.int64)
    near_sq = np.full(rows.size, np.inf)
    ok = np.zeros(rows.size, bool)
    if rows.size == 0 or kept.size == 0:
        return near, near_sq, ok
    b = e64[kept]
    nb = (b * b).sum(axis=1)
    for s in range(0, rows.size, 512):
        a = e64[rows[s : s + 512]]
        approx = (a * a).sum(axis=1)[:, None] + nb[None, :] - 2.0 * (a @ b.T)
        arg = np.argmin(approx, axis=1)
        near[s : s + 512] = kept[arg]
        near_sq[s : s + 512] = sq_dist_rows(e64, rows[s : s + 512], e64[kept[arg]])
        for k, cand in enumerate(approx <= d2 + _GRAM_MARGIN):
            idx = kept[np.flatnonzero(cand)]
            if idx.size:
                i = rows[s + k]
                ok[s + k] = bool(np.any(sq_dist_rows(e64, np.full(idx.size, i), e64[idx]) <= d2))
    return near, near_sq, ok


def audit_output(embeddings: Any, t: float, *, kept: Any = None, pi: Any = None,
                 boundaries: list[tuple[int, int]] | None = None, max_exact: int = MAX_EXACT) -> dict[str, Any]:
    """The audit report of one compactor output (module docstring) as a JSON-ready dict.

    ``kept`` (row positions, or a boolean mask) or ``pi`` (``int[N]`` of row positions) must be
    given, not both; ``boundaries`` are ``(start, stop)`` row ranges, one per trajectory.
    """
    t = validate_threshold(t)
    e = validate_embeddings(embeddings)
    n = e.shape[0]
    d2 = delta_sq(t)
    segs = boundaries or [(0, n)]
    traj_of = np.zeros(n, np.int64)
    for k, (a, b) in enumerate(segs):
        traj_of[a:b] = k
    if (kept is None) == (pi is None):
        raise LamValueError("give the kept set or the map π, not both and not neither")
    map_violations: list[dict[str, Any]] = []
    given_pi = None
    if pi is not None:
        given_pi = np.asarray(pi, dtype=np.int64)
        if given_pi.shape != (n,):
            raise LamValueError(f"π must have one entry per row: {given_pi.shape[0]} entries for N = {n}")
        if n and (given_pi.min() < 0 or given_pi.max() >= n):
            bad = int(np.flatnonzero((given_pi < 0) | (given_pi >= n))[0])
            raise LamValueError(f"π[{bad}] = {int(given_pi[bad])} is not a row of the {n} embeddings")
        mask = given_pi == np.arange(n)
    else:
        k = np.asarray(kept)
        if k.dtype == bool:
            if k.shape != (n,):
                raise LamValueError(f"a boolean kept mask needs one entry per row: {k.shape} for N = {n}")
            mask = k.copy()
        else:
            k = k.astype(np.int64).reshape(-1)
            if k.size and (k.min() < 0 or k.max() >= n):
                bad = int(k[(k < 0) | (k >= n)][0])
                raise LamValueError(f"the kept set names row {bad}, not a row of the {n} embeddings")
            mask = np.zeros(n, bool)
            mask[k] = True
    e64 = e.astype(np.float64)
    deleted = np.flatnonzero(~mask)
    near = np.full(n, -1, np.int64)
    near_sq = np.full(n, np.nan)
    covered = np.ones(n, bool)
    for a, b in segs:
        rows = deleted[(deleted >= a) & (deleted < b)]
        kept_rows = np.flatnonzero(mask[a:b]) + a
        nr, ns, ok = _nearest_retained(e64, rows, kept_rows, d2)
        near[rows], near_sq[rows], covered[rows] = nr, ns, ok
    violators = deleted[~covered[deleted]]
    violations = [{"row": int(i), "trajectory": int(traj_of[i]),
                   "nearest_retained": int(near[i]) if near[i] >= 0 else None,
                   "distance": math.sqrt(near_sq[i]) if near[i] >= 0 else None} for i in violators.tolist()]
    has_near = deleted[near[deleted] >= 0]
    delta_hat_cover = float(np.sqrt(near_sq[has_near].max())) if has_near.size else 0.0
    delta_hat_pi = None
    if given_pi is not None:
        reps = given_pi[deleted]
        sq = sq_dist_rows(e64, deleted, e64[reps]) if deleted.size else np.zeros(0)
        for i, r, s in zip(deleted.tolist(), reps.tolist(), sq.tolist()):
            why = ("representative is not retained" if not mask[r] else
                   "representative is in another trajectory" if traj_of[r] != traj_of[i] else
                   "representative is farther than δ" if s > d2 else None)
            if why:
                map_violations.append({"row": i, "representative": r, "distance": math.sqrt(s), "why": why})
        delta_hat_pi = float(np.sqrt(sq.max())) if sq.size else 0.0
    # Algorithm 2 (exhaustive: equals the oracle, SPEC §5), per trajectory
    alg2 = np.arange(n, dtype=np.int64)
    per_traj = []
    for k, (a, b) in enumerate(segs):
        if b > a:
            alg2[a:b] = substitute(e[a:b], t, exhaustive=True).pi + a
        entry: dict[str, Any] = {"trajectory": k, "rows": b - a, "kept": int(mask[a:b].sum()),
                                 "algorithm2_kept": int((alg2[a:b] == np.arange(a, b)).sum()), "optimum": None}
        if 0 < b - a <= max_exact:
            res = covering_number(e[a:b], t)
            entry["optimum"] = int(round(res.value)) if res.optimal else None
        per_traj.append(entry)
    alg2_mask = alg2 == np.arange(n)
    first = None
    if given_pi is not None and not np.array_equal(given_pi, alg2):
        i = int(np.flatnonzero(given_pi != alg2)[0])
        first = {"row": i, "trajectory": int(traj_of[i]), "output": int(given_pi[i]), "algorithm2": int(alg2[i])}
    elif given_pi is None and not np.array_equal(mask, alg2_mask):
        i = int(np.flatnonzero(mask != alg2_mask)[0])
        first = {"row": i, "trajectory": int(traj_of[i]), "output": "kept" if mask[i] else "deleted",
                 "algorithm2": "kept" if alg2_mask[i] else f"deleted (represented by {int(alg2[i])})"}
    exact = [p for p in per_traj if p["optimum"] is not None]
    return {
        "schema": SCHEMA, "schema_version": 1,
        "n": n, "dim": int(e.shape[1]), "trajectories": len(segs), "t": t, "delta": delta_from_t(t),
        "input": "pi" if given_pi is not None else "kept",
        "kept": int(mask.sum()), "deleted": int(deleted.size),
        "premise_holds": not violations and not map_violations,
        "violations": violations,
        "map_violations": map_violations,
        "delta_hat_nearest": delta_hat_cover,
        "delta_hat_pi": delta_hat_pi,
        "equals_algorithm2": first is None,
        "first_difference": first,
        "algorithm2_kept": int(alg2_mask.sum()),
        "exact": {"trajectories": len(exact), "optimum": sum(p["optimum"] for p in exact),
                  "kept": sum(p["kept"] for p in exact), "algorithm2_kept": sum(p["algorithm2_kept"] for p in exact),
                  "max_rows": max_exact} if exact else None,
        "per_trajectory": per_traj,
    }
