"""Mutant: a Fortran-ordered (column-major) array is read in memory order as if it were row-major, so
its rows come out transposed and scrambled (SPEC §15: any float32[N, D] array)."""

from __future__ import annotations

import numpy as np

from ._base2 import Base2, export

BUG = 'F-ordered embeddings read in memory order as C order'
VIOLATES = 'VALID'
CLASS = 'memory layout'
IDIOM = 'C++/Eigen: Map<Matrix<float, Dynamic, Dynamic, RowMajor>> over a column-major buffer'
NEEDS = 'Fortran-ordered embeddings'
CAUGHT_BY: tuple[str, ...] = ('substitute.layouts',)


class FortranAsC(Base2):
    def raw_rows(self, embeddings):
        arr = np.asarray(embeddings)
        if arr.ndim == 2 and arr.shape[0] > 1 and arr.shape[1] > 1 and arr.flags.f_contiguous and not arr.flags.c_contiguous:
            return arr.ravel(order="K").reshape(arr.shape)
        return arr


export(FortranAsC(), globals())
