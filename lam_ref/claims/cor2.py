r"""COR2: Distribution-free rate–distortion bound (paper App. C.2, Corollary 2, eq. 3; App. I).

Measured on a set: under the uniform source, four Dirichlet(0.3) sources and a point mass,
``I(X; π(X)) = H(π(X)) <= log2|R|`` (the mutual information computed from the joint law).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..theory import map_entropy
from ._base import Claim, Measurement, fmt

__all__ = ["CLAIM", "BITS_TOL", "sources"]

#: Round-off allowed in an identity or inequality between entropies (bits).
BITS_TOL = 1e-9


def sources(n: int, count: int, rng: np.random.Generator) -> list[np.ndarray]:
    """The sources of :func:`measure`: uniform, ``count`` Dirichlet(0.3) draws, one point mass."""
    out = [np.full(n, 1.0 / n)]
    for _ in range(count):
        out.append(rng.dirichlet(np.full(n, 0.3)))
    point = np.zeros(n)
    point[int(rng.integers(n))] = 1.0
    out.append(point)
    return out


def measure(ctx) -> Measurement:
    """Corollary 2 under the :func:`sources` drawn from the set's seed."""
    cor2 = [map_entropy(ctx.pi, p) for p in sources(ctx.n, 4, np.random.default_rng(ctx.seed))]
    values = {
        "H_pi_uniform": cor2[0]["H_pi"],
        "log2_R": cor2[0]["log2_R"],
        "min_slack_bits": min(c["log2_R"] - c["H_pi"] for c in cor2),
        "sources": len(cor2),
        "max_identity_error": max(abs(c["I"] - c["H_pi"]) for c in cor2),
    }
    return Measurement(values)


def holds(m: dict[str, Any]) -> bool:
    """``H(π(X)) <= log2|R|`` and ``I = H(π(X))`` under every source, to :data:`BITS_TOL`."""
    return bool(m["min_slack_bits"] >= -BITS_TOL and m["max_identity_error"] <= BITS_TOL)


AGGREGATION = {"H_pi_uniform": "max", "log2_R": "max", "min_slack_bits": "min", "sources": "sum", "max_identity_error": "max"}


def describe(m: dict[str, Any]) -> tuple[str, str]:
    slack = m["min_slack_bits"]
    slack = 0.0 if -BITS_TOL < slack < 0 else slack  # round-off of an equality (|R| = 1, point mass)
    return (f"per set: H(π(X)) under uniform X up to {fmt(m['H_pi_uniform'])} bits; least log2|R| - H(π(X)) "
            f"{fmt(slack)} over {m['sources']} sources", f"<= log2|R| (up to {fmt(m['log2_R'])} bits)")


CLAIM = Claim(
    "COR2",
    "Distribution-free rate–distortion bound",
    r"R_P(\delta)\le I(X;\pi(X))=H(\pi(X))\le\log_2|R|\ \ \text{for every}\ P\ \text{on}\ S",
    "App. C.2, Corollary 2, eq. (3); proof App. I",
    ("lam_ref.theory.map_entropy",),
    measure=measure,
    holds=holds,
    aggregation=AGGREGATION,
    describe=describe,
    rank=70,
)
