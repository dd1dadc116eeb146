r"""COR1: Top-k δ-cover (paper App. C.2, Corollary 1).

Measured on a set: for each of the first 64 random queries, every member of the true top-k is
retained or represented by a retained row within δ whose score differs by at most δ.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..geometry import delta_from_t, kept_mask, validate_map
from ._base import FP_TOL, Claim, Measurement

__all__ = ["CLAIM", "QUERIES", "top_k_cover"]

#: Queries checked per set (the first ones of the set's random queries).
QUERIES = 64


def top_k_cover(embeddings: Any, pi: Any, query: Any, k: int, t: float) -> bool:
    """Corollary 1 (claim ``COR1``) for one query: every member ``x`` of the true top-``k`` is
    retained or has ``π(x)`` retained within δ, and ``|q·x - q·π(x)| <= δ``.

    Args:
        embeddings: ``(N, D)`` rows.
        pi: the map.
        query: one query vector.
        k: size of the top list.
        t: cosine threshold (``δ = sqrt(2 - 2t)``).

    Returns:
        Whether the top-``k`` is covered.

    Examples:
        >>> e = np.array([[1.0, 0.0], [0.6, 0.8]])
        >>> top_k_cover(e, [0, 0], [0.0, 1.0], 2, 0.5), top_k_cover(e, [0, 0], [0.0, 1.0], 2, 0.9)
        (True, False)
    """
    e = np.asarray(embeddings, dtype=np.float64)
    p = validate_map(pi, e.shape[0], structure=False)
    q = np.asarray(query, dtype=np.float64)
    scores = e @ q
    top = np.argsort(-scores, kind="stable")[:k]
    delta = delta_from_t(t)
    kept = kept_mask(p)
    for x in top:
        r = int(p[x])
        if not kept[r]:
            return False
        if float(np.linalg.norm(e[x] - e[r])) > delta + FP_TOL:
            return False
        if abs(scores[x] - scores[r]) > delta + FP_TOL:
            return False
    return True


def measure(ctx) -> Measurement:
    """Corollary 1 on the first :data:`QUERIES` random queries."""
    queries = ctx.random_queries[:QUERIES]
    covered = sum(top_k_cover(ctx.e, ctx.pi, q, ctx.top_k, ctx.t) for q in queries)
    return Measurement({"k": ctx.top_k, "queries": int(queries.shape[0]), "covered": int(covered)})


def holds(m: dict[str, Any]) -> bool:
    """Every query's top-k is covered."""
    return m["covered"] == m["queries"]


AGGREGATION = {"k": "same", "queries": "sum", "covered": "sum"}


def describe(m: dict[str, Any]) -> tuple[str, str]:
    return f"top-{m['k']} covered for {m['covered']} of {m['queries']} queries", "each member within δ of π(x) ∈ R"


CLAIM = Claim(
    "COR1",
    "Top-k δ-cover",
    r"\forall q,k,\ \forall x\in\mathrm{top}_k(S,q):\ \pi(x)\in R,\ \|x-\pi(x)\|_2\le\delta,\ |q\cdot x-q\cdot\pi(x)|\le\delta",
    "App. C.2, Corollary 1",
    ("lam_ref.claims.cor1.top_k_cover",),
    measure=measure,
    holds=holds,
    aggregation=AGGREGATION,
    describe=describe,
)
