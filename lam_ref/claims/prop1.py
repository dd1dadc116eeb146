r"""PROP1: Rank-wise deficit."""

from __future__ import annotations

from ._base import Claim

CLAIM = Claim(
    "PROP1",
    "Rank-wise deficit",
    r"\pi\ \text{injective on}\ \mathrm{top}_k\Rightarrow 0\le s_j-r_j\le\delta\ (j\le k);\ \text{else}\ \pi(x)=\pi(y)\Rightarrow\|x-y\|_2\le2\delta",
    "App. C.2, Proposition 1",
    ("lam_ref.verify.rank_deficits",),
)
