"""Mutant: substitute renormalises the caller's rows in place before use (to be safe), changing the
caller's array by an ulp or more (SPEC §15 / conformance: the input is left untouched)."""

from __future__ import annotations

import numpy as np

from ._base2 import Base2, export

BUG = 'renormalises the input array in place'
VIOLATES = 'DEF1'
CLASS = 'aliasing'
IDIOM = 'NumPy: np.divide(e, norms, out=e)'
NEEDS = 'input left untouched'
CAUGHT_BY: tuple[str, ...] = ('substitute.contract', 'substitute.sound')


class InPlace(Base2):
    def raw_rows(self, embeddings):
        arr = np.asarray(embeddings)
        if arr.ndim == 2 and arr.dtype == np.float32 and arr.flags.writeable and arr.size:
            nrm = np.sqrt((arr.astype(np.float64) ** 2).sum(axis=1, keepdims=True))
            ok = (nrm > 0) & np.isfinite(nrm) & (np.abs(nrm - 1.0) <= 1e-4)
            arr[:] = np.where(ok, arr / np.where(ok, nrm, 1.0), arr).astype(np.float32)
        return arr


export(InPlace(), globals())
