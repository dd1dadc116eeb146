r"""CCT-APPA: Membership case study: compactors against the Bloom curve and the lower bound."""

from __future__ import annotations

from ._base import Claim

CLAIM = Claim(
    "CCT-APPA",
    "Membership case study: compactors against the Bloom curve and the lower bound",
    r"\mathrm{err}_{\mathrm{Bloom}}(B)=\tfrac12e^{-(\ln2)^2B/N},\qquad \mathrm{err}(B)\ge\tfrac12\,2^{-B/N}\ \text{(no false negatives)},\qquad \mathrm{err}_{\text{always-no}}=\tfrac12",
    "Context Compaction Theory App. A, Figure 2",
    ("lam_ref.cct.membership.run_case_study", "lam_ref.cct.membership.compact", "lam_ref.cct.bloom.bloom_error_curve", "lam_ref.cct.bloom.membership_lower_bound"),
    origin="peer: Context Compaction Theory",
    note="Run without an LLM on seeded URL-like strings; exact optima at toy scale by partitions and MILP.",
)
