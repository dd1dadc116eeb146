r"""ETA: Net reduction after repair turns."""

from __future__ import annotations

from ._base import Claim

CLAIM = Claim(
    "ETA",
    "Net reduction after repair turns",
    r"\eta(\kappa)=\rho-\frac{\text{repairs}\cdot\kappa\cdot\Delta}{T},\qquad \kappa_{\text{break-even}}=\frac{\rho_m-\rho_o}{(n_m-n_o)\,\Delta/T}",
    "App. F.5, eq. (9), Table 18",
    ("lam_ref.metrics.eta", "lam_ref.metrics.break_even_kappa"),
)
