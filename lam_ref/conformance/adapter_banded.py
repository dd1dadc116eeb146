"""lam_ref's SPEC §15 adapter in its default *banded* mode (``r = 4``, ``rel = 0.2``): ``COMPLETE = False``.

Band hashing proposes candidates and every proposal is verified with the exact rule, so banded
search is sound at any setting but equals the oracle only when band recall is full (SPEC §5,
claim ``BAND``). It therefore declares ``COMPLETE = False`` and the suite holds it to soundness
(every merge within δ, π a valid δ-substitution, online ≡ its own batch). The optional parts are
the same objects as in :mod:`lam_ref.conformance.adapter`.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .. import __version__
from ..substitution import substitute as _substitute
from . import adapter as _exhaustive

NAME = "lam_ref (banded r=4, rel=0.2)"
COMPLETE = False
PROFILES = {"core", "online", "l0", "l0-stubs", "codec-bound", "codec-v1"}

__all__ = ["COMPLETE", "NAME", "OnlineSession", "PROFILES", "substitute", "__version__"]


def substitute(embeddings: Any, t: float) -> np.ndarray:
    """Algorithm 2 with band candidates (sound; complete only at full recall)."""
    return _substitute(embeddings, t, exhaustive=False).pi


class OnlineSession(_exhaustive.OnlineSession):
    """Algorithm 1 with band candidates."""

    exhaustive = False


for _name in ("dedup_lines", "STUB_PREFIX", "codec_encode", "codec_decode"):
    if hasattr(_exhaustive, _name):
        globals()[_name] = getattr(_exhaustive, _name)
        __all__.append(_name)
