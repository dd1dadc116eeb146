r"""THM2: Removal ceiling."""

from __future__ import annotations

from ._base import Claim

CLAIM = Claim(
    "THM2",
    "Removal ceiling",
    r"\rho^*(\delta)=1-\frac{N(S,\delta)}{|S|}\le\rho_{\mathrm{greedy}}(2\delta),\qquad \sqrt{2-2t'}=2\sqrt{2-2t}\iff t'=4t-3",
    "App. C.3, Theorem 2, eq. (6)–(7); Table 6",
    ("lam_ref.covering.greedy_ceiling", "lam_ref.geometry.t_prime", "lam_ref.covering.covering_number"),
)
