"""lam_ref's own SPEC §15 adapter, exhaustive mode: the default implementation under test.

``substitute`` and ``OnlineSession`` run lam_ref's exhaustive candidate generator, which equals
the oracle of SPEC §5 exactly, so this adapter declares ``COMPLETE = True`` and is held to
``π == oracle``. lam_ref's default *banded* mode can miss pairs (its recall is not always full),
so it is checked separately through :mod:`lam_ref.conformance.adapter_banded`
(``COMPLETE = False``: soundness only). The optional parts are wired to lam_ref's modules when
they are present: ``dedup_lines``/``STUB_PREFIX`` from :mod:`lam_ref.text.lines` (L0, SPEC §7)
and ``codec_encode``/``codec_decode`` from :mod:`lam_ref.codec` (L2, SPEC §9).
"""

from __future__ import annotations

import importlib
import importlib.util
from typing import Any

import numpy as np

from .. import __version__
from ..online import OnlineSession as _Session
from ..substitution import substitute as _substitute

NAME = "lam_ref (exhaustive)"
COMPLETE = True
EXHAUSTIVE = True
#: Every profile of SPEC §15.4: lam_ref is the reference for the byte-exact formats too.
PROFILES = {"core", "online", "l0", "l0-stubs", "codec-bound", "codec-v1", "codec-v2", "session-v1"}

__all__ = ["COMPLETE", "NAME", "OnlineSession", "PROFILES", "session_load", "session_save", "substitute", "__version__"]


def substitute(embeddings: Any, t: float) -> np.ndarray:
    """Algorithm 2 in exhaustive mode: exactly the oracle's π (SPEC §5, claim ``DEF1``)."""
    return _substitute(embeddings, t, exhaustive=EXHAUSTIVE).pi


class OnlineSession:
    """Algorithm 1 (SPEC §6, claim ``ONLINE``): ``admit`` returns the turn's π entries (global ids)."""

    exhaustive = EXHAUSTIVE

    def __init__(self, t: float) -> None:
        self._session = _Session(t, exhaustive=self.exhaustive)

    def admit(self, embeddings: Any) -> np.ndarray:
        return self._session.admit(embeddings).pi


def session_save(session: OnlineSession, path: Any) -> None:
    """Save ``session`` in lam_ref's session format v1 (SPEC §6.3, profile ``session-v1``)."""
    session._session.save(path)


def session_load(path: Any, t: float) -> OnlineSession:
    """Restore a session saved in format v1 (SPEC §6.3); a corrupt file raises ``SessionFileError`` (a ValueError)."""
    restored = OnlineSession.__new__(OnlineSession)
    restored._session = _Session.load(path, t=t)
    return restored


def _optional(module: str) -> Any:
    """Import ``module`` if it exists (errors inside it propagate: a broken part must not vanish)."""
    try:
        found = importlib.util.find_spec(module)
    except ModuleNotFoundError:
        return None
    return importlib.import_module(module) if found is not None else None


_lines = _optional("lam_ref.text.lines")
if _lines is not None:
    dedup_lines = _lines.dedup_lines
    STUB_PREFIX: str = _lines.STUB_PREFIX
    __all__ += ["STUB_PREFIX", "dedup_lines"]

_codec = _optional("lam_ref.codec")
if _codec is not None:
    codec_encode = _codec.codec_encode
    codec_decode = _codec.codec_decode
    __all__ += ["codec_decode", "codec_encode"]
