r"""C4: Connected components are not a δ-substitution."""

from __future__ import annotations

from ._base import Claim

CLAIM = Claim(
    "C4",
    "Connected components are not a δ-substitution",
    r"\exists\,a\sim b,\ b\sim c,\ a\not\sim c:\ \text{one representative per component violates}\ \|x-\pi(x)\|_2\le\delta",
    "App. C.4, Figure 5",
    ("lam_ref.covering.connected_components_map",),
)
