"""Mutant under ``core``: decides ``fl32(â·b̂) >= t`` on rows normalized in float32 (a typical cosine
library). The same code is allowed under the ``core-f32`` profile (SPEC §2.2,
``controls.c16_cosine_f32``); under ``core`` it fails at t = 1 on near copies of generic rows
(sq from 1e-8 to 1e-6, beyond the exact profile's tie band), whose float32 cosine rounds to 1."""

from __future__ import annotations

from ._cosine import Cosine, export_cosine

BUG = "float32 cosine >= t instead of the float64 rule sq <= 2 - 2t"
VIOLATES = "EQ1"

export_cosine(Cosine(), globals())
