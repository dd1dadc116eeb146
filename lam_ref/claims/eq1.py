r"""EQ1: Merge threshold and substitution bound fix each other."""

from __future__ import annotations

from ._base import Claim

CLAIM = Claim(
    "EQ1",
    "Merge threshold and substitution bound fix each other",
    r"\|a-b\|_2^2 = 2 - 2\cos(a,b)\ \text{for unit } a,b,\qquad \cos(a,b)\ge t \iff \|a-b\|_2\le\delta=\sqrt{2-2t}",
    "§2.1, eq. (1)",
    ("lam_ref.geometry.delta_from_t", "lam_ref.geometry.delta_sq", "lam_ref.geometry.merges", "lam_ref.verify.eq1_residuals"),
)
