r"""COR1: Top-k δ-cover."""

from __future__ import annotations

from ._base import Claim

CLAIM = Claim(
    "COR1",
    "Top-k δ-cover",
    r"\forall q,k,\ \forall x\in\mathrm{top}_k(S,q):\ \pi(x)\in R,\ \|x-\pi(x)\|_2\le\delta,\ |q\cdot x-q\cdot\pi(x)|\le\delta",
    "App. C.2, Corollary 1",
    ("lam_ref.verify.top_k_cover",),
)
