r"""EQ1: Merge threshold and substitution bound fix each other (paper §2.1, eq. 1).

Measured on a set: ``sq = 2 - 2a·b`` up to the rows' norm error on every (sampled) pair, and the
merge rule ``sq <= δ²`` agrees with ``cos >= t`` outside that slack.
"""

from __future__ import annotations

from typing import Any

from ..theory import eq1_residuals
from ._base import Claim, Measurement, fmt

__all__ = ["CLAIM"]


def measure(ctx) -> Measurement:
    """EQ1 on the set's pairs (:func:`eq1_residuals`)."""
    return Measurement(eq1_residuals(ctx.e, ctx.t, seed=ctx.seed))


def holds(m: dict[str, Any]) -> bool:
    """No decision differs outside the slack band, and every residual is within the slack."""
    return m["disagreements"] == 0 and bool(m["within_slack"])


AGGREGATION = {"pairs": "sum", "max_residual": "max", "slack": "max", "disagreements": "sum", "within_slack": "all"}


def describe(m: dict[str, Any]) -> tuple[str, str]:
    return (f"max |sq-(2-2a·b)| {fmt(m['max_residual'])} over {m['pairs']} pairs, {m['disagreements']} decisions differ",
            f"<= norm slack {fmt(m['slack'])}")


CLAIM = Claim(
    "EQ1",
    "Merge threshold and substitution bound fix each other",
    r"\|a-b\|_2^2 = 2 - 2\cos(a,b)\ \text{for unit } a,b,\qquad \cos(a,b)\ge t \iff \|a-b\|_2\le\delta=\sqrt{2-2t}",
    "§2.1, eq. (1)",
    ("lam_ref.geometry.delta_from_t", "lam_ref.geometry.delta_sq", "lam_ref.geometry.merges", "lam_ref.theory.eq1_residuals"),
    measure=measure,
    holds=holds,
    aggregation=AGGREGATION,
    describe=describe,
    rank=10,
)
