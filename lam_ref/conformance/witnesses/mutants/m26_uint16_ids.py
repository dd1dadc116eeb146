"""Mutant: chunk ids are stored as ``uint16_t``, so a representative past id 65,535 wraps
(65,541 becomes 5; SPEC §1.2: ids are int64)."""

from __future__ import annotations

import numpy as np

from ._base import Base, BaseSession, export

BUG = "ids stored as uint16: representatives past 65,535 wrap around"
VIOLATES = "DEF1"


class Uint16Ids(Base):
    def admit_turn(self, state: BaseSession, turn: np.ndarray) -> np.ndarray:
        return super().admit_turn(state, turn).astype(np.uint16).astype(np.int64)


export(Uint16Ids(), globals())
