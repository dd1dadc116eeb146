r"""COR3: Measured bracket on the rate and the δ-entropy (paper App. C.2, Corollary 3, eq. 4–5).

Measured on a set: ``log2|R_greedy(2δ)| <= H_δ(S) = log2 N(δ) <= log2|R_greedy(δ)|``, and with
token weights the exact ``T(δ)`` of eq. 5 is at most the tokens greedy keeps.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..covering import token_weighted_optimum
from ._base import Claim, Measurement, fmt

__all__ = ["CLAIM", "bits"]

#: Round-off allowed in a sum of token weights.
TOKEN_TOL = 1e-9


def bits(m: dict[str, Any]) -> None:
    """Corollary 3's bits from the counts ``kept_2delta``, ``R``, ``N`` and ``n`` (in place; also
    the ``finish`` of the aggregation: the bits of a union are log2 of the summed counts).

    Examples:
        >>> m = {"n": 8, "kept_2delta": 2, "R": 4, "N": None}
        >>> bits(m); m["lower_bits"], m["upper_bits"], m["exact_bits"], m["lossless_bits"]
        (1.0, 2.0, None, 3.0)
    """
    m["lower_bits"] = math.log2(m["kept_2delta"])
    m["upper_bits"] = math.log2(m["R"])
    m["exact_bits"] = None if m["N"] is None else math.log2(m["N"])
    m["lossless_bits"] = math.log2(m["n"])


def measure(ctx) -> Measurement:
    """Counts and bits of the bracket; ``T(δ)`` by MILP when weights are given and exact."""
    values: dict[str, Any] = {"n": ctx.n, "kept_2delta": ctx.kept_2delta, "R": ctx.greedy.kept_count, "N": ctx.n_opt}
    bits(values)
    if ctx.weights is not None and ctx.exact:
        tw = token_weighted_optimum(ctx.e, ctx.t, weights=ctx.weights, time_limit=ctx.time_limit)
        w = np.asarray(ctx.weights, dtype=np.float64)
        values.update({"T_opt": tw.value if tw.optimal else None, "T_greedy": float(w[ctx.greedy.kept].sum()),
                       "T_all": float(w.sum())})
    return Measurement(values)


def holds(m: dict[str, Any]) -> bool:
    """``|R(2δ)| <= N <= |R(δ)|`` (``N`` when solved) and ``T(δ) <= T_greedy`` (when solved)."""
    ok = m["kept_2delta"] <= m["R"] and (m["N"] is None or m["kept_2delta"] <= m["N"] <= m["R"])
    if m.get("T_opt") is not None:
        ok &= m["T_opt"] <= m["T_greedy"] + TOKEN_TOL
    return bool(ok)


AGGREGATION = {"n": "sum", "kept_2delta": "sum", "R": "sum", "N": "sum", "T_opt": "sum", "T_greedy": "sum", "T_all": "sum",
               # derived: recomputed from the summed counts by ``bits``
               "lower_bits": "max", "upper_bits": "max", "exact_bits": "max", "lossless_bits": "max"}


def describe(m: dict[str, Any]) -> tuple[str, str]:
    extra = ""
    if "T_opt" in m:
        t_opt = "—" if m["T_opt"] is None else f"{m['T_opt']:.0f}"
        extra = f"; T(δ) = {t_opt} vs greedy {m['T_greedy']:.0f} of {m['T_all']:.0f} tokens"
    return (f"[{fmt(m['lower_bits'])}, {fmt(m['upper_bits'])}] bits, H_δ = {fmt(m['exact_bits'])}{extra}",
            f"lossless {fmt(m['lossless_bits'])} bits")


CLAIM = Claim(
    "COR3",
    "Measured bracket on the rate and the δ-entropy",
    r"\log_2|R_{\mathrm{greedy}}(2\delta)|\le\sup_P R^{\mathrm{as}}_P(\delta)\le H_\delta(S)=\log_2N(S,\delta)\le\log_2|R_{\mathrm{greedy}}(\delta)|",
    "App. C.2, Corollary 3, eq. (4); eq. (5) for T(δ); proof App. I",
    ("lam_ref.covering.bracket_bits", "lam_ref.covering.covering_number", "lam_ref.covering.token_weighted_optimum"),
    measure=measure,
    holds=holds,
    aggregation=AGGREGATION,
    finish=bits,
    describe=describe,
    rank=100,
)
