r"""COR2: Distribution-free rate–distortion bound."""

from __future__ import annotations

from ._base import Claim

CLAIM = Claim(
    "COR2",
    "Distribution-free rate–distortion bound",
    r"R_P(\delta)\le I(X;\pi(X))=H(\pi(X))\le\log_2|R|\ \ \text{for every}\ P\ \text{on}\ S",
    "App. C.2, Corollary 2, eq. (3); proof App. I",
    ("lam_ref.verify.map_entropy",),
)
