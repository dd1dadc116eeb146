"""Mutant under ``core-f32``: the cosine is computed in float16 (a GPU half-precision shortcut); its
error (about 1e-3) is far wider than the float32 tie band, so it merges pairs beyond δ (SPEC §2.2)."""

from __future__ import annotations

import numpy as np

from ._cosine import Cosine, export_cosine

BUG = "cosine in float16 instead of float32"
VIOLATES = "DEF1"
PROFILES = {"core-f32"}


class Half(Cosine):
    DTYPE = np.float16


export_cosine(Half(), globals())
