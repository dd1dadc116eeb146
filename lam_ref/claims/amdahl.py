r"""AMDAHL: Amdahl ceiling of context reduction."""

from __future__ import annotations

from ._base import Claim

CLAIM = Claim(
    "AMDAHL",
    "Amdahl ceiling of context reduction",
    r"\text{speedup}\le\frac{1}{1-\varphi},\ \varphi=\text{context-scaling share of turn latency}",
    "§2.6, App. E.1, Table 7",
    ("lam_ref.costmodel.phi", "lam_ref.costmodel.amdahl_ceiling", "lam_ref.costmodel.table7"),
    note="Checked symbolically against Table 7 (proofs/test_amdahl_sympy.py) and numerically by "
    "tests/test_costmodel.py (φ within a point of every Table 7 cell).",
)
