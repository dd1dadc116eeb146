"""Mutant: the input goes through a writable typed buffer (Cython ``float[:, ::1]``), so a
read-only array is refused with "buffer source array is read-only" (SPEC §2.4: read-only input is valid)."""

from __future__ import annotations

from typing import Any

import numpy as np

from ._base import Base, export

BUG = "refuses read-only arrays (writable typed memoryview)"
VIOLATES = "DEF1"


class ReadonlyRefused(Base):
    def check_rows(self, embeddings: Any, name: str, dim: int | None = None) -> np.ndarray:
        arr = np.asarray(embeddings)
        if not arr.flags.writeable:
            raise ValueError("buffer source array is read-only")
        return super().check_rows(arr, name, dim)


export(ReadonlyRefused(), globals())
