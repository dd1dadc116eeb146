r"""CCT-BLOOM: Bloom filter: optimal k and false-positive rate."""

from __future__ import annotations

from ._base import Claim

CLAIM = Claim(
    "CCT-BLOOM",
    "Bloom filter: optimal k and false-positive rate",
    r"f(k)=(1-e^{-kN/m})^k,\quad \arg\min_k f=\tfrac mN\ln2,\quad f_{\min}=2^{-\frac mN\ln 2}=e^{-(\ln2)^2 m/N}",
    "Context Compaction Theory App. A (Bloom 1970; Broder and Mitzenmacher)",
    ("lam_ref.cct.bloom.BloomFilter", "lam_ref.cct.bloom.bloom_fpr", "lam_ref.cct.bloom.bloom_fpr_exact", "lam_ref.cct.bloom.optimal_k"),
    origin="peer: Context Compaction Theory",
    note="The optimum by sympy; the formula against simulated filters (Wilson intervals).",
)
