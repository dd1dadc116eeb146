r"""CCT-COVER: Covering number as the zero-error budget of reconstruction within δ."""

from __future__ import annotations

from ._base import Claim

CLAIM = Claim(
    "CCT-COVER",
    "Covering number as the zero-error budget of reconstruction within δ",
    r"\min\{m\}=N(S,\delta)\ \Rightarrow\ B_0=\lceil\log_2(N(S,\delta)+1)\rceil-1\ (\lceil\log_2N\rceil\ \text{fixed});\qquad M(S,2\delta)\le N(S,\delta)\ \text{(fooling set)}",
    "beyond the paper (links LAM App. C.3 to Context Compaction Theory Theorem 1)",
    ("lam_ref.cct.links.reconstruct_game", "lam_ref.cct.solvers.zero_error_budget", "lam_ref.covering.covering_number", "lam_ref.covering.packing_number"),
    origin="peer: Context Compaction Theory",
    note="The exact N and M of lam_ref.covering against an exhaustive partition search of the game.",
)
