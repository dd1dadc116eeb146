"""Mutant: ``substitute`` takes the first row before the loop (``first = e[0]``, "the first chunk is
always retained"), so an empty (0, D) input raises instead of returning int64[0] (SPEC §2.3: N = 0 is valid)."""

from __future__ import annotations

from typing import Any

import numpy as np

from ._base import Base, export

BUG = "substitute reads row 0 before the loop: N = 0 raises IndexError"
VIOLATES = "DEF1"


class EmptyCrash(Base):
    def substitute(self, embeddings: Any, t: float) -> np.ndarray:
        first = np.asarray(embeddings)[0]  # the first chunk is always retained
        assert first is not None
        return super().substitute(embeddings, t)


export(EmptyCrash(), globals())
