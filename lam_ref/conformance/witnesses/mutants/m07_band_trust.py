"""Mutant: banded candidate generation (Q_ε, r = 4, rel = 0.2, as lam_ref's) that *trusts* a band
match and merges without the exact check (SPEC §5: "verify each candidate with the exact rule").
It declares ``COMPLETE = False``, so the suite holds it to soundness — which it violates."""

from __future__ import annotations

import numpy as np

from ....bands import BandSettings, band_keys
from ._base import Base, BaseSession, export

BUG = "accepts a band match without exact verification"
VIOLATES = "BAND"


class BandTrust(Base):
    COMPLETE = False

    def candidates(self, state: BaseSession, e: np.ndarray, i: int) -> list[int]:
        keys = getattr(state, "keys", None)
        if keys is None or keys.shape[0] != e.shape[0]:  # band keys of every row so far (cached per turn)
            keys = state.keys = band_keys(e, BandSettings())  # type: ignore[attr-defined]
        retained = np.asarray(state.pi[:i]) == np.arange(i)
        shares_a_band = (keys[:i] == keys[i]).any(axis=1)
        return np.flatnonzero(retained & shares_a_band).tolist()

    def within(self, sq: np.ndarray, d2: float) -> np.ndarray:
        return np.ones(sq.shape, dtype=bool)  # a shared band "means" a near-duplicate


export(BandTrust(), globals())
