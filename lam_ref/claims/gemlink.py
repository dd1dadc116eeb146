r"""GEMLINK: A δ-substitution captures GEM's energy."""

from __future__ import annotations

from ._base import Claim

CLAIM = Claim(
    "GEMLINK",
    "A δ-substitution captures GEM's energy",
    r"E(R)=\frac1n\sum_{i=1}^n\|Q_R^\top x_i\|_2^2\ \ge\ 1-\frac{|D|}{n}\,\hat\delta^2\ \ge\ 1-\frac{|D|}{n}\,\delta^2",
    "beyond the paper (links seed 002, GEM eq. 3)",
    ("lam_ref.verify.captured_energy", "lam_ref.verify.gem_energy_bound"),
    origin="beyond the paper",
)
