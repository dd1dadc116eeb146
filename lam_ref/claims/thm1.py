r"""THM1: Score deficit (paper §2.4, Theorem 1; proof App. C.2; δ̂ in App. C.5).

Measured on a set: the score deficit ``max_S q·x - max_R q·z`` over random unit queries, the
adversarial query of every deleted row and the HULL maximiser lies in ``[0, δ̂] ⊆ [0, δ]``.
"""

from __future__ import annotations

from typing import Any

from ..theory import FP_TOL
from ._base import Claim, Measurement, fmt

__all__ = ["CLAIM"]


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
    ("lam_ref.theory.score_deficits", "lam_ref.theory.adversarial_queries", "lam_ref.substitution.SubstitutionResult"),
    measure=measure,
    holds=holds,
    aggregation=AGGREGATION,
    describe=describe,
    rank=30,
)
