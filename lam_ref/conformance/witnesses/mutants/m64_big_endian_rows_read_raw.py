"""Mutant: the caller's rows are read from their raw bytes as native little-endian float32, so a
big-endian ('>f4') array is read byte-swapped (SPEC §15: a float32[N, D] array, whatever its byte
order)."""

from __future__ import annotations

import numpy as np

from ._base2 import Base2, export

BUG = 'embeddings read as raw little-endian bytes (ignores dtype byte order)'
VIOLATES = 'VALID'
CLASS = 'byte order'
IDIOM = 'C extension: (float *)PyArray_DATA(arr) without checking PyArray_ISNOTSWAPPED'
NEEDS = 'big-endian float32 embeddings'
CAUGHT_BY: tuple[str, ...] = ('substitute.byte_order',)


class RawLE(Base2):
    def raw_rows(self, embeddings):
        arr = np.asarray(embeddings)
        if arr.ndim == 2 and arr.dtype.kind == "f" and arr.dtype.itemsize == 4 and arr.dtype.byteorder == ">":
            return np.frombuffer(np.ascontiguousarray(arr).tobytes(), dtype="<f4").reshape(arr.shape)
        return arr


export(RawLE(), globals())
