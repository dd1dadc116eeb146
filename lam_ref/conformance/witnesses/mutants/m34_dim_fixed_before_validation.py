"""Mutant: ``admit`` records the session's dimension from the turn's shape *before* validating its
rows, so a rejected first turn still fixes D (SPEC §6.1: a rejected turn changes nothing)."""

from __future__ import annotations

from typing import Any

import numpy as np

from ._base import Base, BaseSession, export

BUG = "a rejected first turn fixes the session's dimension"
VIOLATES = "VALID"


class EarlyDim(BaseSession):
    def admit(self, embeddings: Any) -> np.ndarray:
        arr = np.asarray(embeddings)
        if self.dim is None and arr.ndim == 2:
            self.dim = arr.shape[1]
        return super().admit(arr)


class DimBeforeValidation(Base):
    Session = EarlyDim


export(DimBeforeValidation(), globals())
