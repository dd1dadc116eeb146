"""semhash with its default approximate backend (usearch HNSW): ``COMPLETE = False``, held to
soundness (SPEC §15.1); otherwise as :mod:`lam_ref.conformance.adapters.semhash`."""

from __future__ import annotations

from typing import Any

from . import require
from .semhash import __version__, kept_with

require("usearch", "usearch", "semhash")

NAME = "semhash (approximate backend: usearch)"
COMPLETE = False
PROFILES = {"kept-set", "kept-set-f32"}

__all__ = ["COMPLETE", "NAME", "PROFILES", "__version__", "kept"]


def kept(embeddings: Any, t: float) -> Any:
    """SPEC §15.5 kept-set form over semhash's usearch index."""
    k, witness = kept_with(embeddings, t, "usearch")
    return k if witness is None else (k, witness)
