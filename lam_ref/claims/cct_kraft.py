r"""CCT-KRAFT: Kraft generalization of Theorem 3's lower bound."""

from __future__ import annotations

from ._base import Claim

CLAIM = Claim(
    "CCT-KRAFT",
    "Kraft generalization of Theorem 3's lower bound",
    r"\textstyle\sum_i 2^{-s(x_i)}\le1\ \Rightarrow\ B^{\mathrm{SEL}}_0=\sum_i s(x_i)\ge n\log_2 n\quad(\text{any }n),\qquad B^{\mathrm{GEN}}_0=n",
    "beyond the paper (generalizes Theorem 3, §4.2)",
    ("lam_ref.cct.theorems.kraft_sum", "lam_ref.cct.theorems.kraft_lower_bound", "lam_ref.cct.solvers.min_select_budget"),
    origin="peer: Context Compaction Theory",
    note="Sizes that a uniquely decodable item code can have; the gap holds for every n >= 3, not only powers of two.",
)
