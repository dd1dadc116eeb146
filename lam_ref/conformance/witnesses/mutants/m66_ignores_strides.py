"""Mutant: the rows are read from the array's data pointer with C-contiguous strides, ignoring the real
strides, so a non-contiguous view (every other row, a column slice) is read as the wrong numbers
(SPEC §15: any float32[N, D] array)."""

from __future__ import annotations

import numpy as np

from ._base2 import Base2, export

BUG = 'embeddings read from the data pointer with assumed C strides'
VIOLATES = 'VALID'
CLASS = 'memory layout'
IDIOM = 'C: float *p = PyArray_DATA(a); p[i*D + j] without PyArray_STRIDES'
NEEDS = 'non-contiguous (strided) embeddings'
CAUGHT_BY: tuple[str, ...] = ('substitute.layouts', 'online.fresh_results')


class IgnoresStrides(Base2):
    def raw_rows(self, embeddings):
        arr = np.asarray(embeddings)
        if arr.ndim == 2 and arr.size and not arr.flags.c_contiguous and not arr.flags.f_contiguous and min(arr.strides) > 0:
            step = arr.itemsize
            return np.lib.stride_tricks.as_strided(arr, shape=arr.shape, strides=(arr.shape[1] * step, step))
        return arr


export(IgnoresStrides(), globals())
