r"""CCT-LAM: LAM is an online SELECT strategy plus a stub side channel."""

from __future__ import annotations

from ._base import Claim

CLAIM = Claim(
    "CCT-LAM",
    "LAM is an online SELECT strategy plus a stub side channel",
    r"\text{Alg. 1 decides }x_i\text{ from }x_{\le i};\ \ \mathrm{LAM}\in\mathrm{SELECT};\ \ \mathrm{LAM}+\text{stubs}\in\mathrm{GEN}\setminus\mathrm{SELECT}\text{ answers }|X|",
    "beyond the paper (LAM §2.3, SPEC §8, in the games of Context Compaction Theory §3)",
    ("lam_ref.cct.links.lam_select", "lam_ref.cct.links.lam_with_stubs"),
    origin="peer: Context Compaction Theory",
    note="Stubs answer the count (multiplicity) query, which any selection that drops a near-duplicate cannot.",
)
