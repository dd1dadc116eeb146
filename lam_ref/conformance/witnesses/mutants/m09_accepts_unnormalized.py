"""Mutant: silently rescales rows whose norm is not 1 instead of rejecting them (SPEC §2: a row
whose norm differs from 1 by more than 1e-4 is a ValueError unless the caller asks to normalize)."""

from __future__ import annotations

from typing import Any

import numpy as np

from ....geometry import validate_embeddings
from ._base import Base, export

BUG = "accepts non-normalized input silently"
VIOLATES = "VALID"


class AcceptsUnnormalized(Base):
    def check_rows(self, embeddings: Any, name: str, dim: int | None = None) -> np.ndarray:
        return validate_embeddings(embeddings, name=name, dim=dim, normalize=True)


export(AcceptsUnnormalized(), globals())
