r"""EQ1: Merge threshold and substitution bound fix each other (paper §2.1, eq. 1).

Measured on a set: ``sq = 2 - 2a·b`` up to the rows' norm error on every (sampled) pair, and the
merge rule ``sq <= δ²`` agrees with ``cos >= t`` outside that slack.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..geometry import delta_sq, sq_dist_rows, validate_embeddings, validate_threshold
from ._base import Claim, Measurement, fmt

__all__ = ["CLAIM", "eq1_residuals"]


def eq1_residuals(embeddings: Any, t: float, *, max_pairs: int = 100_000, seed: int = 0) -> dict[str, Any]:
    """Claim ``EQ1`` on data: ``sq = 2 - 2 a·b`` up to the rows' norm error, and the merge rule
    ``sq <= δ²`` agrees with ``cos >= t`` on every sampled pair outside that slack.

    Args:
        embeddings: ``(N, D)`` unit rows.
        t: cosine threshold in ``[-1, 1]``.
        max_pairs: all pairs when there are at most this many, else this many random pairs.
        seed: seed of the pair sample.

    Returns:
        ``pairs``, ``max_residual`` (``max |sq - (2 - 2a·b)|``), ``slack`` (``|‖a‖²-1| +
        |‖b‖²-1|`` max plus the float64 round-off bound ``8(D+2)·eps``), ``within_slack`` and
        ``disagreements`` (pairs outside the slack band decided differently).

    Raises:
        LamValueError: for rows that are not unit vectors or a threshold outside ``[-1, 1]``.

    Examples:
        >>> e = np.array([[1, 0], [0.6, 0.8]], dtype=np.float32)
        >>> r = eq1_residuals(e, 0.5)
        >>> r["pairs"], r["disagreements"], r["within_slack"]
        (1, 0, True)
    """
    e = validate_embeddings(embeddings)
    t = validate_threshold(t)
    n = e.shape[0]
    if n < 2:
        return {"pairs": 0, "max_residual": 0.0, "slack": 0.0, "disagreements": 0, "within_slack": True}
    rng = np.random.default_rng(seed)
    total = n * (n - 1) // 2
    if total <= max_pairs:
        i, j = np.triu_indices(n, k=1)
    else:
        i = rng.integers(0, n, size=max_pairs)
        j = rng.integers(0, n, size=max_pairs)
        keep = i != j
        i, j = i[keep], j[keep]
    e64 = e.astype(np.float64)
    sq = sq_dist_rows(e, i, e[j])
    dot = np.einsum("ij,ij->i", e64[i], e64[j])
    norms_sq = np.einsum("ij,ij->i", e64, e64)
    # norm error of the rows plus float64 summation round-off over D terms (|terms| sum to <= 8)
    roundoff = 8.0 * (e.shape[1] + 2) * np.finfo(np.float64).eps
    slack_pair = np.abs(norms_sq[i] - 1.0) + np.abs(norms_sq[j] - 1.0) + roundoff
    residual = np.abs(sq - (2.0 - 2.0 * dot))
    d2 = delta_sq(t)
    cos = dot / np.sqrt(norms_sq[i] * norms_sq[j])
    clear = np.abs(sq - d2) > 2 * slack_pair + 4 * np.abs(1 - np.sqrt(norms_sq[i] * norms_sq[j]))
    disagree = ((sq <= d2) != (cos >= t)) & clear
    return {
        "pairs": int(i.size),
        "max_residual": float(residual.max()),
        "slack": float(slack_pair.max()),
        "disagreements": int(disagree.sum()),
        "within_slack": bool(np.all(residual <= slack_pair)),
    }


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
    ("lam_ref.geometry.delta_from_t", "lam_ref.geometry.delta_sq", "lam_ref.geometry.merges", "lam_ref.claims.eq1.eq1_residuals"),
    measure=measure,
    holds=holds,
    aggregation=AGGREGATION,
    describe=describe,
)
