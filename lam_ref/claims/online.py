r"""ONLINE: Online ≡ batch."""

from __future__ import annotations

from ._base import Claim

CLAIM = Claim(
    "ONLINE",
    "Online ≡ batch",
    r"\mathrm{concat}_{\text{turns}}\ \pi_{\mathrm{Alg.1}}=\pi_{\mathrm{Alg.2}}\ \text{for every split into turns};\ \hat\delta_{\mathrm{run}}=\max_{\text{turns}}\hat\delta",
    "§2.3, Algorithm 1; §3.3 (600/600 byte-identical); SPEC §6",
    ("lam_ref.online.OnlineSession", "lam_ref.substitution.Matcher"),
    origin="SPEC",
)
