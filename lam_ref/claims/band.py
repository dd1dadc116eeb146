r"""BAND: Banded candidate generation is sound at any (r, rel)."""

from __future__ import annotations

from ._base import Claim

CLAIM = Claim(
    "BAND",
    "Banded candidate generation is sound at any (r, rel)",
    r"\pi_{\mathrm{band}}\ \text{is a}\ \delta\text{-substitution for every}\ (r,\mathrm{rel});\ \pi_{\mathrm{band}}=\pi_{\mathrm{oracle}}\ \text{when recall}=1",
    "§2.2 (L1), App. K.2; SPEC §5",
    ("lam_ref.bands.band_keys", "lam_ref.bands.band_recall", "lam_ref.substitution.substitute"),
    origin="SPEC",
)
