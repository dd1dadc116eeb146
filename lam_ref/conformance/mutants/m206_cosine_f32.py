"""Mutant under ``core``: decides ``fl32(â·b̂) >= t`` on rows normalized in float32 (a typical cosine
library). The same code is allowed under the ``core-f32`` profile (SPEC §2.2,
``controls.c15_cosine_f32``); under ``core`` it fails on generic identical rows at t = 1, whose
float32 self-similarity can round below 1."""

from __future__ import annotations

from ._cosine import Cosine, export_cosine

BUG = "float32 cosine >= t instead of the float64 rule sq <= 2 - 2t"
VIOLATES = "EQ1"

export_cosine(Cosine(), globals())
