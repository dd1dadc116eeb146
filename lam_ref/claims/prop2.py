r"""PROP2: Greedy is simultaneously a cover and a packing (paper App. C.3, Proposition 2).

Measured on a set: greedy's retained rows (the exhaustive oracle) are a δ-packing (checked
directly with the exact within-δ kernel) and, when the set is small enough for the MILPs,
``N(δ) <= |R| <= M(δ) <= N(δ/2)`` holds between the solvers' certified bounds.
"""

from __future__ import annotations

from typing import Any

from ..theory import is_packing
from ._base import Claim, Measurement, fmt

__all__ = ["CLAIM"]


def measure(ctx) -> Measurement:
    """Packing of greedy's ``R``; exact ``N``, ``M``, ``N(δ/2)`` with their bounds when exact."""
    kept_d = ctx.greedy.kept_count
    packing_ok = is_packing(ctx.e[ctx.greedy.kept], ctx.d2)
    values: dict[str, Any] = {"R": kept_d, "R_is_packing": packing_ok}
    if ctx.exact:
        cov, pack, half = ctx.covering, ctx.packing, ctx.covering_half
        values.update({
            "N": int(cov.value) if cov.optimal else None,
            "M": int(pack.value) if pack.optimal else None,
            "N_half": int(half.value) if half.optimal else None,
            "N_lower": cov.lower, "M_upper": pack.upper, "M_lower": pack.lower, "N_half_upper": half.upper,
        })
    return Measurement(values, "" if ctx.exact else f"n > {ctx.exact_limit}: exact N, M skipped")


def holds(m: dict[str, Any]) -> bool:
    """``R`` is a δ-packing and, when solved, ``N <= |R| <= M`` and ``M <= N(δ/2)`` between the
    certified lower and upper bounds."""
    ok = bool(m["R_is_packing"])
    if "N_lower" in m:
        ok &= m["N_lower"] <= m["R"] <= m["M_upper"] and m["M_lower"] <= m["N_half_upper"]
    return bool(ok)


AGGREGATION = {"R": "sum", "R_is_packing": "all", "N": "sum", "M": "sum", "N_half": "sum", "N_lower": "sum",
               "M_upper": "sum", "M_lower": "sum", "N_half_upper": "sum"}


def describe(m: dict[str, Any]) -> tuple[str, str]:
    if "N" in m:
        return (f"N = {fmt(m['N'])} <= |R| = {m['R']} <= M = {fmt(m['M'])} <= N(δ/2) = {fmt(m['N_half'])}",
                f"R is a δ-packing: {fmt(m['R_is_packing'])}")
    return f"|R| = {m['R']}", f"R is a δ-packing: {fmt(m['R_is_packing'])}"


CLAIM = Claim(
    "PROP2",
    "Greedy is simultaneously a cover and a packing",
    r"N(S,\delta)\le|R_{\mathrm{greedy}}(\delta)|\le M(S,\delta)\le N(S,\delta/2)",
    "App. C.3, Proposition 2",
    ("lam_ref.covering.covering_number", "lam_ref.covering.packing_number", "lam_ref.covering.greedy_kept", "lam_ref.covering.t_half",
     "lam_ref.theory.is_packing"),
    note="The packing half needs complete candidate generation (SPEC §5); see BAND.",
    measure=measure,
    holds=holds,
    aggregation=AGGREGATION,
    describe=describe,
    rank=80,
)
