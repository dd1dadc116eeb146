r"""CCT-COR2: Selection is subset-encoding communication."""

from __future__ import annotations

from ._base import Claim

CLAIM = Claim(
    "CCT-COR2",
    "Selection is subset-encoding communication",
    r"\mathrm{SELECT}_B=\{(A,B):\ A(X)\ \text{names}\ S\subseteq X,\ \textstyle\sum_{x\in S}s(x)\le B,\ B(\cdot)=f(\{x_i\}_{i\in S},q)\}",
    "Context Compaction Theory §4.2, Corollary 2",
    ("lam_ref.cct.games.play_select", "lam_ref.cct.solvers.select_distributional_optimum", "lam_ref.cct.solvers.select_options"),
    origin="peer: Context Compaction Theory",
    note="Every SELECT algorithm played in the game equals, on every input, the protocol that sends the index of its retained multiset; the SELECT optimum by exhaustive play equals the assignment MILP.",
)
