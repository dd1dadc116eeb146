r"""PROP2: Greedy is simultaneously a cover and a packing."""

from __future__ import annotations

from ._base import Claim

CLAIM = Claim(
    "PROP2",
    "Greedy is simultaneously a cover and a packing",
    r"N(S,\delta)\le|R_{\mathrm{greedy}}(\delta)|\le M(S,\delta)\le N(S,\delta/2)",
    "App. C.3, Proposition 2",
    ("lam_ref.covering.covering_number", "lam_ref.covering.packing_number", "lam_ref.covering.greedy_kept", "lam_ref.covering.t_half"),
    note="The packing half needs complete candidate generation (SPEC §5); see BAND.",
)
