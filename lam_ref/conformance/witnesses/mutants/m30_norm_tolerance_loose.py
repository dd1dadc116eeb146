"""Mutant: the norm tolerance is 1e-3 instead of 1e-4, so rows just outside the rule (‖e‖ = 1 +
1.02e-4, 1 + 2e-4) are accepted (SPEC §2.3)."""

from __future__ import annotations

from typing import Any

import numpy as np

from ....geometry import LamValueError, validate_embeddings
from ._base import Base, export

BUG = "norm tolerance 1e-3 instead of 1e-4"
VIOLATES = "VALID"


class NormLoose(Base):
    def check_rows(self, embeddings: Any, name: str, dim: int | None = None) -> np.ndarray:
        arr = np.asarray(embeddings)
        validate_embeddings(arr, name=name, dim=dim, normalize=True)  # shape, finiteness, zero rows
        norms = np.sqrt((arr.astype(np.float64) ** 2).sum(axis=1))
        bad = np.flatnonzero(np.abs(norms - 1.0) > 1e-3)
        if bad.size:
            raise LamValueError(f"{name} row {bad[0]} has norm {norms[bad[0]]}, not 1 within 1e-3")
        return np.ascontiguousarray(arr, dtype=np.float32)


export(NormLoose(), globals())
