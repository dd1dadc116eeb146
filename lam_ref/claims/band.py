r"""BAND: Banded candidate generation is sound at any (r, rel) (paper §2.2, App. K.2; SPEC §5).

Measured on a set: the banded map is a δ-substitution (sound), and whether it equals the
exhaustive oracle's (complete recall on this set; informational).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ._base import Claim, Measurement, fmt

__all__ = ["CLAIM"]


def measure(ctx) -> Measurement:
    """Soundness (``DEF1`` of the banded map) and equality with the oracle."""
    if ctx.exhaustive:
        return Measurement({"mode": "exhaustive"}, "exhaustive mode: no band index in use")
    res = ctx.result
    equal = bool(np.array_equal(res.pi, ctx.greedy.pi))
    values = {"r": ctx.r, "rel": ctx.rel, "sound": ctx.check.valid, "equals_oracle": equal,
              "pairs_verified": res.pairs_verified, "total_pairs": res.total_pairs}
    return Measurement(values, "" if equal else "candidate recall incomplete: sound but fewer merges than the oracle")


def holds(m: dict[str, Any]) -> bool | None:
    """Sound (``None`` in exhaustive mode: no band index in use)."""
    return None if m.get("mode") == "exhaustive" else bool(m["sound"])


AGGREGATION = {"mode": "same", "r": "same", "rel": "same", "sound": "all", "equals_oracle": "all",
               "pairs_verified": "sum", "total_pairs": "sum"}


def describe(m: dict[str, Any]) -> tuple[str, str]:
    if m.get("mode") == "exhaustive":
        return "exhaustive mode", "—"
    return (f"r={m['r']} rel={m['rel']}: sound {fmt(m['sound'])}, equals oracle {fmt(m['equals_oracle'])}, "
            f"verified {m['pairs_verified']}/{m['total_pairs']} pairs", "DEF1 at any (r, rel)")


CLAIM = Claim(
    "BAND",
    "Banded candidate generation is sound at any (r, rel)",
    r"\pi_{\mathrm{band}}\ \text{is a}\ \delta\text{-substitution for every}\ (r,\mathrm{rel});\ \pi_{\mathrm{band}}=\pi_{\mathrm{oracle}}\ \text{when recall}=1",
    "§2.2 (L1), App. K.2; SPEC §5",
    ("lam_ref.bands.band_keys", "lam_ref.bands.band_recall", "lam_ref.substitution.substitute"),
    origin="SPEC",
    measure=measure,
    holds=holds,
    aggregation=AGGREGATION,
    describe=describe,
    rank=120,
)
