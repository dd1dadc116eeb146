r"""THM1: Score deficit (paper §2.4, Theorem 1; proof App. C.2; δ̂ in App. C.5).

Measured on a set: the score deficit ``max_S q·x - max_R q·z`` over random unit queries, the
adversarial query of every deleted row and the HULL maximiser lies in ``[0, δ̂] ⊆ [0, δ]``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..geometry import LamValueError, kept_mask, validate_map
from ._base import FP_TOL, Claim, Measurement, fmt

__all__ = ["CLAIM", "adversarial_queries", "random_queries", "score_deficits"]


def random_queries(dim: int, n: int, seed: int = 0) -> np.ndarray:
    """``n`` unit queries uniform on the sphere of ``R^dim`` (float64).

    Examples:
        >>> q = random_queries(3, 4, seed=1)
        >>> q.shape, bool(np.allclose(np.linalg.norm(q, axis=1), 1.0))
        ((4, 3), True)
    """
    rng = np.random.default_rng(seed)
    q = rng.standard_normal((n, dim))
    return q / np.linalg.norm(q, axis=1, keepdims=True)


def adversarial_queries(embeddings: Any, pi: Any) -> np.ndarray:
    """``q = normalize(x - π(x))`` for every deleted ``x`` (float64): the direction in which the
    substitution of ``x`` loses most (Theorem 1's tightness witness generalised).

    Examples:
        >>> adversarial_queries(np.array([[1.0, 0.0], [0.6, 0.8]]), [0, 0]).round(3).tolist()
        [[-0.447, 0.894]]
    """
    e = np.asarray(embeddings, dtype=np.float64)
    p = validate_map(pi, e.shape[0], structure=False)
    deleted = np.flatnonzero(~kept_mask(p))
    diff = e[deleted] - e[p[deleted]]
    norms = np.linalg.norm(diff, axis=1)
    ok = norms > 0
    return diff[ok] / norms[ok, None]


def score_deficits(embeddings: Any, kept: Any, queries: Any) -> np.ndarray:
    """``max_{x∈S} q·x - max_{z∈R} q·z`` for each query row (Theorem 1's quantity; float64).

    Args:
        embeddings: ``(N, D)`` rows ``S``.
        kept: boolean mask of the retained rows ``R`` (non-empty).
        queries: one query or a ``(Q, D)`` array of queries.

    Returns:
        float64 array of ``Q`` deficits.

    Raises:
        LamValueError: when ``kept`` is not a non-empty mask of shape ``(N,)``.

    Examples:
        >>> score_deficits(np.array([[1.0, 0.0], [0.6, 0.8]]), [True, False], [0.0, 1.0]).tolist()
        [0.8]
    """
    e = np.asarray(embeddings, dtype=np.float64)
    k = np.asarray(kept, dtype=bool)
    if k.shape != (e.shape[0],) or not k.any():
        raise LamValueError(
            f"kept must be a non-empty boolean mask of shape ({e.shape[0]},), got shape {k.shape} with {int(k.sum())} retained"
        )
    q = np.atleast_2d(np.asarray(queries, dtype=np.float64))
    scores = q @ e.T
    return scores.max(axis=1) - scores[:, k].max(axis=1)


def measure(ctx) -> Measurement:
    """Deficits over the sampled, adversarial and HULL queries (shared with ``HULL``)."""
    defs, d_rand, d_adv = ctx.deficits
    values = {
        "max_deficit_sampled": float(d_rand.max(initial=0.0)),
        "max_deficit_adversarial": float(d_adv.max(initial=0.0)),
        "delta_hat": ctx.check.delta_hat,
        "delta": ctx.delta,
        "queries": int(defs.size),
        "min_deficit": float(defs.min()) if defs.size else 0.0,
        "max_deficit_all": float(defs.max()) if defs.size else 0.0,
    }
    return Measurement(values)


def holds(m: dict[str, Any]) -> bool:
    """``0 <= deficit <= δ̂ <= δ`` for every query (``FP_TOL`` for round-off)."""
    return bool(m["min_deficit"] >= -FP_TOL and m["max_deficit_all"] <= m["delta_hat"] + FP_TOL and m["delta_hat"] <= m["delta"])


AGGREGATION = {"max_deficit_sampled": "max", "max_deficit_adversarial": "max", "delta_hat": "max", "delta": "same",
               "queries": "sum", "min_deficit": "min", "max_deficit_all": "max"}


def describe(m: dict[str, Any]) -> tuple[str, str]:
    return (f"max deficit: sampled {fmt(m['max_deficit_sampled'])}, adversarial {fmt(m['max_deficit_adversarial'])} ({m['queries']} queries)",
            f"[0, δ̂ = {fmt(m['delta_hat'])}] ⊆ [0, δ = {fmt(m['delta'])}]")


CLAIM = Claim(
    "THM1",
    "Score deficit",
    r"0\le\max_{x\in S}q\cdot x-\max_{z\in R}q\cdot z\le\hat\delta\le\delta\ \ \forall\,\|q\|_2=1,\ \text{both ends tight}",
    "§2.4, Theorem 1; proof App. C.2; δ̂ in App. C.5",
    ("lam_ref.claims.thm1.score_deficits", "lam_ref.claims.thm1.adversarial_queries", "lam_ref.substitution.SubstitutionResult"),
    measure=measure,
    holds=holds,
    aggregation=AGGREGATION,
    describe=describe,
)
