r"""PROP1: Rank-wise deficit (paper App. C.2, Proposition 1).

Measured on a set: on the first 64 random queries, where π is injective on the top-k the j-th
scores differ by ``0 <= s_j - r_j <= δ``; top-k members sharing a representative lie within 2δ.
"""

from __future__ import annotations

from typing import Any

from ..theory import FP_TOL, rank_deficits
from ._base import Claim, Measurement, fmt
from .cor1 import QUERIES

__all__ = ["CLAIM"]


def measure(ctx) -> Measurement:
    """Proposition 1 on the first :data:`~lam_ref.claims.cor1.QUERIES` random queries."""
    inj = 0
    worst_gap = least_gap = worst_collapse = 0.0
    for q in ctx.random_queries[:QUERIES]:
        rd = rank_deficits(ctx.e, ctx.pi, q, ctx.top_k)
        worst_collapse = max(worst_collapse, rd.collapse)
        if rd.injective:
            inj += 1
            worst_gap = max(worst_gap, float(rd.gaps.max(initial=0.0)))
            least_gap = min(least_gap, float(rd.gaps.min(initial=0.0)))
    values = {"k": ctx.top_k, "injective_queries": inj, "max_gap_injective": worst_gap, "max_collapse": worst_collapse,
              "two_delta": 2 * ctx.delta, "min_gap_injective": least_gap}
    return Measurement(values)


def holds(m: dict[str, Any]) -> bool:
    """Gaps in ``[0, δ]`` where injective, collapse at most ``2δ`` (``FP_TOL`` for round-off)."""
    delta = m["two_delta"] / 2
    return bool(m["min_gap_injective"] >= -FP_TOL and m["max_gap_injective"] <= delta + FP_TOL
                and m["max_collapse"] <= m["two_delta"] + FP_TOL)


AGGREGATION = {"k": "same", "injective_queries": "sum", "max_gap_injective": "max", "max_collapse": "max",
               "two_delta": "same", "min_gap_injective": "min"}


def describe(m: dict[str, Any]) -> tuple[str, str]:
    return (f"injective on top-{m['k']}: {m['injective_queries']} queries, max gap {fmt(m['max_gap_injective'])}; max collapse {fmt(m['max_collapse'])}",
            f"gap <= δ; collapse <= 2δ = {fmt(m['two_delta'])}")


CLAIM = Claim(
    "PROP1",
    "Rank-wise deficit",
    r"\pi\ \text{injective on}\ \mathrm{top}_k\Rightarrow 0\le s_j-r_j\le\delta\ (j\le k);\ \text{else}\ \pi(x)=\pi(y)\Rightarrow\|x-y\|_2\le2\delta",
    "App. C.2, Proposition 1",
    ("lam_ref.theory.rank_deficits",),
    measure=measure,
    holds=holds,
    aggregation=AGGREGATION,
    describe=describe,
    rank=60,
)
