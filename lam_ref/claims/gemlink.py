r"""GEMLINK: A δ-substitution captures GEM's energy (beyond the paper; links seed 002, GEM eq. 3).

Measured on a set: the captured energy of the retained rows is at least ``1 - (|D|/n)·δ̂²``,
which is at least ``1 - (|D|/n)·δ²``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..geometry import LamValueError
from ._base import Claim, Measurement, fmt

__all__ = ["CLAIM", "captured_energy", "gem_energy_bound"]


def captured_energy(embeddings: Any, kept: Any) -> float:
    """GEM's captured energy (seed 002, eq. 3): ``E(R) = (1/n) Σ_i ||Q_Rᵀ x_i||²`` with ``Q_R`` an
    orthonormal basis of ``span(R)`` (SVD, rank tolerance ``1e-10·σ_max``). Claim ``GEMLINK``.

    Raises:
        LamValueError: for an empty set.

    Examples:
        >>> round(captured_energy(np.array([[1.0, 0.0], [0.6, 0.8]]), [True, False]), 6)
        0.68
    """
    e = np.asarray(embeddings, dtype=np.float64)
    k = np.asarray(kept, dtype=bool)
    n = e.shape[0]
    if n == 0:
        raise LamValueError("embeddings is empty: captured energy needs n >= 1")
    r = e[k]
    if r.shape[0] == 0:
        return 0.0
    u, s, vt = np.linalg.svd(r, full_matrices=False)
    basis = vt[s > 1e-10 * s[0]]
    proj = e @ basis.T
    return float(np.einsum("ij,ij->", proj, proj) / n)


def gem_energy_bound(n: int, n_deleted: int, delta: float) -> float:
    """``1 - (|D|/n)·δ²``: the energy every δ-substitution captures (claim ``GEMLINK``).

    Proof: a retained ``x`` lies in ``span(R)``; a deleted ``x`` has ``dist(x, span R)² <=
    ||x - π(x)||² <= δ²``, so ``||Q_Rᵀ x||² >= 1 - δ²`` for unit ``x``.

    Raises:
        LamValueError: for ``n < 1``.

    Examples:
        >>> gem_energy_bound(4, 1, 0.5)
        0.9375
    """
    if n <= 0:
        raise LamValueError(f"n must be >= 1, got {n!r}")
    return 1.0 - (n_deleted / n) * delta * delta


def measure(ctx) -> Measurement:
    """The captured energy against both bounds; the slack is the rows' norm error."""
    n_del = ctx.n - ctx.result.kept_count
    energy = captured_energy(ctx.e, ctx.kept)
    e64 = ctx.e.astype(np.float64)
    norms_sq = np.einsum("ij,ij->i", e64, e64)
    bound_hat = gem_energy_bound(ctx.n, n_del, ctx.check.delta_hat)
    values = {
        "energy": energy,
        "bound_delta_hat": bound_hat,
        "bound_delta": gem_energy_bound(ctx.n, n_del, ctx.delta),
        "min_margin": energy - bound_hat,
        "norm_slack": float(np.abs(norms_sq - 1.0).max()) + 1e-12,
    }
    return Measurement(values)


def holds(m: dict[str, Any]) -> bool:
    """``E(R) >= 1 - |D|/n·δ̂² - slack`` and ``1 - |D|/n·δ̂² >= 1 - |D|/n·δ²``."""
    return bool(m["energy"] >= m["bound_delta_hat"] - m["norm_slack"] and m["bound_delta_hat"] >= m["bound_delta"])


AGGREGATION = {"energy": "min", "bound_delta_hat": "min", "bound_delta": "min", "min_margin": "min", "norm_slack": "max"}


def describe(m: dict[str, Any]) -> tuple[str, str]:
    return f"E(R) = {fmt(m['energy'])}", f">= 1 - |D|/n·δ̂² = {fmt(m['bound_delta_hat'])} >= {fmt(m['bound_delta'])}"


CLAIM = Claim(
    "GEMLINK",
    "A δ-substitution captures GEM's energy",
    r"E(R)=\frac1n\sum_{i=1}^n\|Q_R^\top x_i\|_2^2\ \ge\ 1-\frac{|D|}{n}\,\hat\delta^2\ \ge\ 1-\frac{|D|}{n}\,\delta^2",
    "beyond the paper (links seed 002, GEM eq. 3)",
    ("lam_ref.claims.gemlink.captured_energy", "lam_ref.claims.gemlink.gem_energy_bound"),
    origin="beyond the paper",
    measure=measure,
    holds=holds,
    aggregation=AGGREGATION,
    describe=describe,
)
