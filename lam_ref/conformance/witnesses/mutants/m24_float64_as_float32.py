"""Mutant: the buffer is reinterpreted as float32 whatever its dtype (``(float *) PyArray_DATA``
without a dtype check), so float64 input is read as garbage (SPEC §2.4: float64 input is rounded
to float32, never reinterpreted)."""

from __future__ import annotations

from typing import Any

import numpy as np

from ._base import Base, export

BUG = "reinterprets float64 input bytes as float32"
VIOLATES = "DEF1"


class Float64AsFloat32(Base):
    def check_rows(self, embeddings: Any, name: str, dim: int | None = None) -> np.ndarray:
        arr = np.asarray(embeddings)
        if arr.dtype == np.float64 and arr.ndim == 2:
            arr = np.frombuffer(np.ascontiguousarray(arr).tobytes(), dtype=np.float32)[: arr.size].reshape(arr.shape)
        return super().check_rows(arr, name, dim)


export(Float64AsFloat32(), globals())
