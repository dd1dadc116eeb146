"""Mutant: the input is read through its data pointer as if it were C-contiguous (a C extension
that takes ``float *`` and ignores the strides), so Fortran-ordered or strided views decide on the
wrong numbers (SPEC §2.4: every layout gives the same π)."""

from __future__ import annotations

from typing import Any

import numpy as np

from ._base import Base, export

BUG = "reads the data pointer as C-contiguous float32, ignoring strides"
VIOLATES = "DEF1"


class IgnoresStrides(Base):
    def check_rows(self, embeddings: Any, name: str, dim: int | None = None) -> np.ndarray:
        arr = np.asarray(embeddings)
        if arr.ndim == 2 and arr.dtype == np.float32 and arr.size and all(s > 0 for s in arr.strides):
            arr = np.lib.stride_tricks.as_strided(arr, arr.shape, (arr.shape[1] * 4, 4))  # "float *data"
        return super().check_rows(np.array(arr), name, dim)


export(IgnoresStrides(), globals())
