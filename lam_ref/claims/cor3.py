r"""COR3: Measured bracket on the rate and the δ-entropy."""

from __future__ import annotations

from ._base import Claim

CLAIM = Claim(
    "COR3",
    "Measured bracket on the rate and the δ-entropy",
    r"\log_2|R_{\mathrm{greedy}}(2\delta)|\le\sup_P R^{\mathrm{as}}_P(\delta)\le H_\delta(S)=\log_2N(S,\delta)\le\log_2|R_{\mathrm{greedy}}(\delta)|",
    "App. C.2, Corollary 3, eq. (4); eq. (5) for T(δ); proof App. I",
    ("lam_ref.covering.bracket_bits", "lam_ref.covering.covering_number", "lam_ref.covering.token_weighted_optimum"),
)
