r"""GEMLINK: A δ-substitution captures GEM's energy (beyond the paper; links seed 002, GEM eq. 3).

Measured on a set: the captured energy of the retained rows is at least ``1 - (|D|/n)·δ̂²``,
which is at least ``1 - (|D|/n)·δ²``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..theory import captured_energy, gem_energy_bound
from ._base import Claim, Measurement, fmt

__all__ = ["CLAIM"]


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
    ("lam_ref.theory.captured_energy", "lam_ref.theory.gem_energy_bound"),
    origin="beyond the paper",
    measure=measure,
    holds=holds,
    aggregation=AGGREGATION,
    describe=describe,
    rank=130,
)
