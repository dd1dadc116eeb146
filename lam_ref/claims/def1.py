r"""DEF1: δ-substitution."""

from __future__ import annotations

from ._base import Claim

CLAIM = Claim(
    "DEF1",
    "δ-substitution",
    r"(R,\pi)\ \text{with}\ R\subseteq S,\ \pi:S\to R,\ \pi|_R=\mathrm{id},\ \|x-\pi(x)\|_2\le\delta\ \ \forall x\in S",
    "§2.4, Definition 1",
    ("lam_ref.substitution.oracle", "lam_ref.substitution.substitute", "lam_ref.verify.check_substitution"),
)
