r"""DEF1: δ-substitution (paper §2.4, Definition 1).

Measured on a set: the map of the compactor under test is a δ-substitution by the exact rule,
every representative has a smaller id (SPEC §1), and the ``δ̂`` it reports is the measured one.
"""

from __future__ import annotations

import math
from typing import Any

from ._base import Claim, Measurement, fmt

__all__ = ["CLAIM"]


def measure(ctx) -> Measurement:
    """Definition 1 on the map under test, and the ``δ̂`` the compactor reported."""
    chk = ctx.check
    values = {"delta": ctx.delta, "delta_hat": chk.delta_hat, "kept": chk.kept, "n": chk.n,
              "valid": chk.valid, "ordered": chk.ordered, "delta_hat_reported": ctx.result.delta_hat}
    return Measurement(values, "; ".join(chk.problems))


def holds(m: dict[str, Any]) -> bool:
    """A valid, ordered δ-substitution whose reported ``δ̂`` is the measured one (to 1e-15)."""
    return bool(m["valid"] and m["ordered"] and math.isclose(m["delta_hat"], m["delta_hat_reported"], rel_tol=0, abs_tol=1e-15))


AGGREGATION = {"delta": "same", "delta_hat": "max", "kept": "sum", "n": "sum", "valid": "all", "ordered": "all",
               "delta_hat_reported": "max"}


def describe(m: dict[str, Any]) -> tuple[str, str]:
    return f"δ̂ = {fmt(m['delta_hat'])}, |R| = {m['kept']} of {m['n']}", f"δ = {fmt(m['delta'])}"


CLAIM = Claim(
    "DEF1",
    "δ-substitution",
    r"(R,\pi)\ \text{with}\ R\subseteq S,\ \pi:S\to R,\ \pi|_R=\mathrm{id},\ \|x-\pi(x)\|_2\le\delta\ \ \forall x\in S",
    "§2.4, Definition 1",
    ("lam_ref.substitution.oracle", "lam_ref.substitution.substitute", "lam_ref.theory.measure_substitution"),
    measure=measure,
    holds=holds,
    aggregation=AGGREGATION,
    describe=describe,
    rank=20,
)
