r"""GEM-A: GEM's Appendix A identities (seed 002): residual scores, captured energy, incremental updates."""

from __future__ import annotations

from ._base import Claim

CLAIM = Claim(
    "GEM-A",
    "GEM's residual-greedy completion identities",
    r"r_i(B)=\|(I-P_B)x_i\|_2^2=1-\|Q_B^\top x_i\|_2^2,\quad E(B)=\tfrac1n\|XQ_B\|_F^2,\quad "
    r"r_i(B\cup\{j\})=r_i(B)-(q^\top x_i)^2,\quad \mathcal P_t\subseteq B_t\subseteq S_t",
    "seed 002 (GEM), Appendix A, Propositions A.1–A.3",
    ("lam_ref.peers.gem.residuals", "lam_ref.peers.gem.captured_energy", "lam_ref.peers.gem.mgs_extend",
     "lam_ref.peers.gem.greedy_completion"),
    origin="peer (seed 002)",
    note="The selection order is checked against scipy.linalg.qr(..., pivoting=True) on the residuals.",
)
