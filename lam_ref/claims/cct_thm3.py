r"""CCT-THM3: Selection needs n log2 n bits where generation needs n."""

from __future__ import annotations

from ._base import Claim

CLAIM = Claim(
    "CCT-THM3",
    "Selection needs n log2 n bits where generation needs n",
    r"n=2^k,\ k\ge2:\ B^{\mathrm{GEN}}_0=n,\ B^{\mathrm{SEL}}_0=n\log_2 n;\ \ \mathrm{err}^{\mathrm{GEN}}_B=\max(0,1-\tfrac{2^{B+1}-1}{2^n}),\ \mathrm{err}^{\mathrm{SEL}}_B=1-\tfrac{\sum_{i\le\lfloor B/\log_2 n\rfloor}\binom ni}{2^n}",
    "Context Compaction Theory §4.2, Theorem 3 (the ε > 0 forms are ours)",
    ("lam_ref.cct.theorems.thm3_gen_budget", "lam_ref.cct.theorems.thm3_select_budget", "lam_ref.cct.theorems.thm3_gen_error", "lam_ref.cct.theorems.thm3_select_error", "lam_ref.cct.solvers.min_select_budget", "lam_ref.cct.solvers.identity_worst_case"),
    origin="peer: Context Compaction Theory",
    note="Zero error exhaustively for n = 4 and 8 (distinct rows, bipartite matching); the ε > 0 closed forms against the matching LP for every budget at n = 4 and n = 8.",
)
