"""Mutant: the norm check compares the *squared* norm with 1 (``|‖e‖² - 1| > 1e-4``), which
refuses rows the rule accepts (‖e‖ = 1 + 7e-5; SPEC §2.3: the tolerance is on ‖e‖)."""

from __future__ import annotations

from typing import Any

import numpy as np

from ....geometry import LamValueError
from ._base import Base, export

BUG = "norm tolerance applied to the squared norm"
VIOLATES = "VALID"


class NormSquared(Base):
    def check_rows(self, embeddings: Any, name: str, dim: int | None = None) -> np.ndarray:
        arr = np.asarray(embeddings)
        if arr.ndim == 2 and arr.size and arr.dtype.kind == "f":
            sq = (arr.astype(np.float64) ** 2).sum(axis=1)
            bad = np.flatnonzero(np.abs(sq - 1.0) > 1e-4)
            if bad.size:
                raise LamValueError(f"{name} row {bad[0]} has squared norm {sq[bad[0]]}, not 1 within 1e-4")
        return super().check_rows(arr, name, dim)


export(NormSquared(), globals())
