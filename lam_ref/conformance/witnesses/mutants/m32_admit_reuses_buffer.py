"""Mutant: ``admit`` writes its result into one preallocated output buffer and returns a view of
it, so the next turn overwrites what an earlier call returned (SPEC §2.4: results are fresh arrays)."""

from __future__ import annotations

from typing import Any

import numpy as np

from ._base import Base, BaseSession, export

BUG = "admit returns a view of a reused output buffer"
VIOLATES = "ONLINE"


class BufferSession(BaseSession):
    def admit(self, embeddings: Any) -> np.ndarray:
        res = super().admit(embeddings)
        if not hasattr(self, "_out"):
            self._out = np.zeros(1 << 16, dtype=np.int64)
        self._out[: res.size] = res
        return self._out[: res.size]


class ReusesBuffer(Base):
    Session = BufferSession


export(ReusesBuffer(), globals())
