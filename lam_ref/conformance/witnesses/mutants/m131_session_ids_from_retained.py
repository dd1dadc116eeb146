"""Mutant: ``session_load`` restores the retained rows and their ids but sets the next arrival's id
to the number of retained rows, as a loader that never stored the admitted count would (SPEC §6.3:
a restored session continues exactly where the saved one stopped; ids keep counting every arrival)."""

from __future__ import annotations

from typing import Any

from ... import adapter as _ref

BUG = "a restored session numbers new arrivals from |R| instead of from the number admitted"
VIOLATES = "ONLINE"
CLASS = "stale cache"
IDIOM = "C: s->next_id = s->n_retained;  /* after reading the retained block of the file */"
NEEDS = "a saved session whose retained set is smaller than its arrivals, then a row that is retained after loading"
CAUGHT_BY: tuple[str, ...] = ("session.v1_roundtrip", "vectors.session-v1")
PROFILES = {"core", "online", "session-v1"}
NAME = "mutant m131 (session ids from |R|)"
COMPLETE = True
substitute = _ref.substitute
OnlineSession = _ref.OnlineSession
session_save = _ref.session_save


def session_load(path: Any, t: float) -> _ref.OnlineSession:
    restored = _ref.session_load(path, t)
    matcher = restored._session._matcher
    if matcher is not None:
        matcher.next_id = int(matcher.n_retained)
    return restored
