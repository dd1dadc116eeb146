"""Control (must pass): a float32 cosine deduplicator, ``fl32(â·b̂) >= t`` over the kept rows, that
declares the ``core-f32`` profile: the tie band of SPEC §2.2 accepts its decisions near δ²."""

from __future__ import annotations

from ..mutants._cosine import Cosine, export_cosine

CONTROL = True
ALLOWED = "float32 cosine >= t, declared as profile core-f32"
PROFILES = {"core-f32"}

export_cosine(Cosine(), globals())
