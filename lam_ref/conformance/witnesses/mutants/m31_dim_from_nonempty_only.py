"""Mutant: a session takes its dimension from the first *non-empty* turn, so after an empty
(0, 3) turn a (2, 4) turn is accepted (SPEC §6.1: the first accepted turn, even empty, fixes D)."""

from __future__ import annotations

from typing import Any

import numpy as np

from ._base import Base, BaseSession, export

BUG = "an empty first turn does not fix the session's dimension"
VIOLATES = "ONLINE"


class NonEmptyDim(BaseSession):
    def admit(self, embeddings: Any) -> np.ndarray:
        e = self.owner.check_rows(embeddings, "embeddings", dim=self.dim)
        if e.shape[0]:
            self.dim = e.shape[1]
        return self.owner.admit_turn(self, e)


class DimFromNonEmpty(Base):
    Session = NonEmptyDim


export(DimFromNonEmpty(), globals())
