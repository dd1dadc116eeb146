r"""COR1: Top-k δ-cover (paper App. C.2, Corollary 1).

Measured on a set: for each of the first 64 random queries, every member of the true top-k is
retained or represented by a retained row within δ whose score differs by at most δ.
"""

from __future__ import annotations

from typing import Any

from ..theory import top_k_cover
from ._base import Claim, Measurement

__all__ = ["CLAIM", "QUERIES"]

#: Queries checked per set (the first ones of the set's random queries).
QUERIES = 64


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
    ("lam_ref.theory.top_k_cover",),
    measure=measure,
    holds=holds,
    aggregation=AGGREGATION,
    describe=describe,
    rank=50,
)
