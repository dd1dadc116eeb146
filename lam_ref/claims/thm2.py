r"""THM2: Removal ceiling (paper App. C.3, Theorem 2, eq. 6–7; Table 6).

Measured on a set: the removal rate attained by the compactor under test is at most the exact
optimum ``ρ* = 1 - N(δ)/n`` (when solved), which is at most greedy's rate at radius ``2δ``.
"""

from __future__ import annotations

from typing import Any

from ..geometry import t_prime
from ..tables import pct
from ._base import Claim, Measurement, fmt

__all__ = ["CLAIM", "rates"]

#: Round-off allowed between rates computed from integer counts.
RATE_TOL = 1e-15


def rates(m: dict[str, Any]) -> None:
    """Removal rates of THM2 from the integer counts ``n``, ``kept``, ``kept_2delta``, ``N``
    (in place; also the ``finish`` of the aggregation: rates of a union come from summed counts).

    Examples:
        >>> m = {"n": 10, "kept": 4, "kept_2delta": 2, "N": 3}
        >>> rates(m); m["attained"], m["optimum"], m["ceiling"]
        (0.6, 0.7, 0.8)
    """
    n = m["n"]
    m["attained"] = 1.0 - m["kept"] / n
    m["ceiling"] = 1.0 - m["kept_2delta"] / n
    m["attained_of_ceiling"] = m["attained"] / m["ceiling"] if m["ceiling"] > 0 else None
    if m["N"] is None:
        m["optimum"] = m["attained_of_optimum"] = None
    else:
        m["optimum"] = 1.0 - m["N"] / n
        m["attained_of_optimum"] = m["attained"] / m["optimum"] if m["optimum"] > 0 else None


def measure(ctx) -> Measurement:
    """Counts of the compactor under test, greedy at ``2δ`` and the exact ``N``; rates from them."""
    values: dict[str, Any] = {"t_prime": t_prime(ctx.t), "n": ctx.n, "kept": ctx.result.kept_count,
                              "kept_2delta": ctx.kept_2delta, "N": ctx.n_opt}
    rates(values)
    if ctx.n_opt is not None:
        note = ""
    elif not ctx.exact:
        note = f"n > {ctx.exact_limit}: exact N skipped"
    else:
        note = "the covering ILP was not solved to optimality: exact N unknown"
    return Measurement(values, note)


def holds(m: dict[str, Any]) -> bool:
    """``attained <= ρ* <= ceiling`` (``attained <= ceiling`` when ``N`` is unknown)."""
    ok = m["attained"] <= m["ceiling"] + RATE_TOL
    if m["N"] is not None:
        ok &= m["attained"] <= m["optimum"] + RATE_TOL <= m["ceiling"] + 2 * RATE_TOL
    return bool(ok)


AGGREGATION = {"t_prime": "same", "n": "sum", "kept": "sum", "kept_2delta": "sum", "N": "sum",
               # derived: recomputed from the summed counts by ``rates``
               "attained": "max", "ceiling": "max", "attained_of_ceiling": "max", "optimum": "max", "attained_of_optimum": "max"}


def describe(m: dict[str, Any]) -> tuple[str, str]:
    return (f"removed {pct(m['attained'])}; optimum ρ* {pct(m['optimum'])} (N = {fmt(m['N'])}); "
            f"{pct(m['attained_of_optimum'])} of optimum, {pct(m['attained_of_ceiling'])} of ceiling",
            f"ρ* <= ceiling ρ_greedy(2δ) = {pct(m['ceiling'])} (t' = {fmt(m['t_prime'])})")


CLAIM = Claim(
    "THM2",
    "Removal ceiling",
    r"\rho^*(\delta)=1-\frac{N(S,\delta)}{|S|}\le\rho_{\mathrm{greedy}}(2\delta),\qquad \sqrt{2-2t'}=2\sqrt{2-2t}\iff t'=4t-3",
    "App. C.3, Theorem 2, eq. (6)–(7); Table 6",
    ("lam_ref.covering.greedy_ceiling", "lam_ref.geometry.t_prime", "lam_ref.covering.covering_number"),
    measure=measure,
    holds=holds,
    aggregation=AGGREGATION,
    finish=rates,
    describe=describe,
    rank=90,
)
