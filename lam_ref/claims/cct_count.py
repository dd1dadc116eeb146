r"""CCT-COUNT: The count query: SELECT keeps everything, GEN needs about log2 n bits."""

from __future__ import annotations

from ._base import Claim

CLAIM = Claim(
    "CCT-COUNT",
    "The count query: SELECT keeps everything, GEN needs about log2 n bits",
    r"q=|X|,\ X\subseteq Y,\ |Y|=n:\quad B^{\mathrm{GEN}}_0=\lceil\log_2(n+2)\rceil-1,\qquad B^{\mathrm{SEL}}_0=\textstyle\sum_{y\in Y}s(y)",
    "beyond the paper (a query from its §4 framework)",
    ("lam_ref.cct.games.count_game", "lam_ref.cct.theorems.count_gen_budget", "lam_ref.cct.solvers.min_select_budget", "lam_ref.cct.solvers.zero_error_budget"),
    origin="peer: Context Compaction Theory",
    note="Zero-error SELECT must retain every item on every input (induction on the input size); checked by the SELECT ILP for n <= 5 with random sizes.",
)
