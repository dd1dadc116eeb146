r"""HULL: The exact worst-case deficit is the distance to the hull."""

from __future__ import annotations

from ._base import Claim

CLAIM = Claim(
    "HULL",
    "The exact worst-case deficit is the distance to the hull",
    r"\sup_{\|q\|_2=1}\Big(\max_{x\in S}q\cdot x-\max_{z\in R}q\cdot z\Big)=\max_{x\in S}\operatorname{dist}(x,\operatorname{conv}R)",
    "beyond the paper (refines Theorem 1)",
    ("lam_ref.verify.hull_deficit", "lam_ref.covering.hull_distance"),
    origin="beyond the paper",
    note="So a δ-cover is sufficient, not necessary: three unit vectors at ±30° around a middle one "
    "lose 1 − cos 30° ≈ 0.134 < 0.316 when the middle one goes, although ρ*(0.316) = 0.",
)
