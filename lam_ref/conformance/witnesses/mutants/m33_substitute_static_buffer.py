"""Mutant: ``substitute`` returns a view of a module-level ``static int64_t out[...]`` buffer,
so the next call overwrites the previous caller's π (SPEC §2.4: the caller owns the result)."""

from __future__ import annotations

from typing import Any

import numpy as np

from ._base import Base, export

BUG = "substitute returns a view of a static output buffer"
VIOLATES = "DEF1"

_OUT = np.zeros(1 << 17, dtype=np.int64)


class StaticBuffer(Base):
    def substitute(self, embeddings: Any, t: float) -> np.ndarray:
        pi = super().substitute(embeddings, t)
        if pi.size > _OUT.size:
            return pi
        _OUT[: pi.size] = pi
        return _OUT[: pi.size]


export(StaticBuffer(), globals())
