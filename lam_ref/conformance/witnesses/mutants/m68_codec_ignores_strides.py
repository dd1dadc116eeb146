"""Mutant: codec_encode reads x from its data pointer as if contiguous, so a strided view (x[::2]) is
encoded from the wrong values (SPEC §15: x float32[n])."""

from __future__ import annotations

import numpy as np

from ._base2 import Base2, export

BUG = 'codec input read with assumed unit stride'
VIOLATES = 'L2'
CLASS = 'memory layout'
IDIOM = 'C: const float *x = PyArray_DATA(a); for (i < n) x[i]'
NEEDS = 'non-contiguous codec input'
CAUGHT_BY: tuple[str, ...] = ('codec.input_forms',)


class CodecStrides(Base2):
    def read_vector(self, x):
        arr = np.asarray(x)
        if arr.ndim == 1 and arr.size and not arr.flags.c_contiguous and arr.strides[0] > 0:
            arr = np.lib.stride_tricks.as_strided(arr, shape=arr.shape, strides=(arr.itemsize,))
        return super().read_vector(arr)


export(CodecStrides(), globals())
