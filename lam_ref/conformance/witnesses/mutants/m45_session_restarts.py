"""Mutant: ``session_load`` checks the save file but returns a new, empty session (it forgets to
restore the arrays), so a restored session starts over at id 0 (SPEC §6.3)."""

from __future__ import annotations

from typing import Any

from .... import online as _online
from ... import adapter as _adapter

BUG = "a restored session starts over instead of continuing"
VIOLATES = "ONLINE"
PROFILES = {"core", "online", "session-v1"}

substitute = _adapter.substitute
OnlineSession = _adapter.OnlineSession
session_save = _adapter.session_save


def session_load(path: Any, t: float) -> Any:
    _online.OnlineSession.load(path, t=t)  # checks the file ...
    return OnlineSession(t)  # ... and returns a fresh session
