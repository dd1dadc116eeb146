r"""HULL: The exact worst-case deficit is the distance to the hull (beyond the paper).

Measured on a set: one QP per deleted row gives ``max_x dist(x, conv R)``; no query found does
better, it is at most ``δ̂``, and the QP's certified lower bound closes the gap.
"""

from __future__ import annotations

from typing import Any

from ..theory import FP_TOL
from ._base import Claim, Measurement, fmt

__all__ = ["CLAIM", "HULL_TOL"]

#: Tolerance of the QP: the best query found may exceed the solved supremum, and the supremum
#: its certified lower bound, by at most this (the solver's own accuracy).
HULL_TOL = 1e-9


def measure(ctx) -> Measurement:
    """The solved supremum against the deficits of every query (shared with ``THM1``)."""
    hull = ctx.hull
    defs, d_rand, _ = ctx.deficits
    values = {
        "sup_deficit": hull.value,
        "max_deficit_sampled": float(d_rand.max(initial=0.0)),
        "max_deficit_all": float(defs.max()) if defs.size else 0.0,
        "delta_hat": ctx.check.delta_hat,
        "complete": hull.complete,
        "certificate_gap": hull.value - hull.lower,
    }
    return Measurement(values, "" if hull.complete else f"solved the {hull.solved} deleted rows farthest from R: a lower bound")


def holds(m: dict[str, Any]) -> bool:
    """No query beats the supremum, the supremum is at most ``δ̂``, and it is certified."""
    return bool(
        m["max_deficit_all"] <= m["sup_deficit"] + HULL_TOL
        and m["sup_deficit"] <= m["delta_hat"] + FP_TOL
        and m["certificate_gap"] <= HULL_TOL
    )


AGGREGATION = {"sup_deficit": "max", "max_deficit_sampled": "max", "max_deficit_all": "max", "delta_hat": "max",
               "complete": "all", "certificate_gap": "max"}


def describe(m: dict[str, Any]) -> tuple[str, str]:
    return (f"sup deficit (QP) {fmt(m['sup_deficit'])}; best query found {fmt(m['max_deficit_all'])}, sampled {fmt(m['max_deficit_sampled'])}",
            f"= max dist(x, conv R) <= δ̂ = {fmt(m['delta_hat'])}")


CLAIM = Claim(
    "HULL",
    "The exact worst-case deficit is the distance to the hull",
    r"\sup_{\|q\|_2=1}\Big(\max_{x\in S}q\cdot x-\max_{z\in R}q\cdot z\Big)=\max_{x\in S}\operatorname{dist}(x,\operatorname{conv}R)",
    "beyond the paper (refines Theorem 1)",
    ("lam_ref.theory.hull_deficit", "lam_ref.covering.hull_distance"),
    origin="beyond the paper",
    note="So a δ-cover is sufficient, not necessary: three unit vectors at ±30° around a middle one "
    "lose 1 − cos 30° ≈ 0.134 < 0.316 when the middle one goes, although ρ*(0.316) = 0.",
    measure=measure,
    holds=holds,
    aggregation=AGGREGATION,
    describe=describe,
    rank=40,
)
