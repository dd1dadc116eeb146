"""Mutant: ``admit`` validates and admits row by row, so a turn with a bad row raises *after* the
rows before it were admitted — a partial result (SPEC §2: never a partial result)."""

from __future__ import annotations

from typing import Any

import numpy as np

from ._base import Base, BaseSession, export

BUG = "a rejected turn leaves its valid leading rows admitted"
VIOLATES = "VALID"


class PartialSession(BaseSession):
    def admit(self, embeddings: Any) -> np.ndarray:
        arr = np.asarray(embeddings)
        if arr.ndim != 2:
            return super().admit(arr)
        out = [super(PartialSession, self).admit(arr[k : k + 1]) for k in range(arr.shape[0])]
        return np.concatenate(out) if out else np.zeros(0, np.int64)


class PartialTurn(Base):
    Session = PartialSession


export(PartialTurn(), globals())
