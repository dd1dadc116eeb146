"""Control (must pass): the kept-set form (SPEC §15.5) of the greedy rule, returning the kept
indices and the lowest witness, declared as ``kept-set`` and ``kept-set-f32``."""

from __future__ import annotations

from ..mutants._kept_base import KeptBase, export_kept

CONTROL = True
ALLOWED = "kept-set form: kept indices and witnesses instead of π"
PROFILES = {"kept-set", "kept-set-f32"}

export_kept(KeptBase(), globals())
