"""Mutant under ``core-f32``: a float32 cosine deduplicator that names the most similar kept row as
the witness, not the lowest id within δ (SPEC §5): wrong outside the tie band too."""

from __future__ import annotations

import numpy as np

from ._cosine import Cosine, export_cosine

BUG = "witness = most similar kept row (argmax cosine) instead of the lowest id"
VIOLATES = "DEF1"
PROFILES = {"core-f32"}


class Nearest(Cosine):
    def choose(self, kept, cos, hit):
        return kept[int(hit[np.argmax(cos[hit])])]


export_cosine(Nearest(), globals())
