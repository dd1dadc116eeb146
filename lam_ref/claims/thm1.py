r"""THM1: Score deficit."""

from __future__ import annotations

from ._base import Claim

CLAIM = Claim(
    "THM1",
    "Score deficit",
    r"0\le\max_{x\in S}q\cdot x-\max_{z\in R}q\cdot z\le\hat\delta\le\delta\ \ \forall\,\|q\|_2=1,\ \text{both ends tight}",
    "§2.4, Theorem 1; proof App. C.2; δ̂ in App. C.5",
    ("lam_ref.verify.score_deficits", "lam_ref.verify.adversarial_queries", "lam_ref.substitution.SubstitutionResult"),
)
