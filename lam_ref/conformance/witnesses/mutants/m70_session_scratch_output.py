"""Mutant: each session writes a turn's π into one scratch buffer and returns a view of it, so the next
admit overwrites the previous turn's π in the caller's hands (issue 21: fresh arrays the caller
owns)."""

from __future__ import annotations

import numpy as np

from ._base2 import Base2, export

BUG = "admit returns a view of the session's scratch buffer"
VIOLATES = 'ONLINE'
CLASS = 'aliasing'
IDIOM = 'C++: std::vector<int64_t> scratch_; return span(scratch_)'
NEEDS = 'aliasing across admits of one session'
CAUGHT_BY: tuple[str, ...] = ('online.equals_batch', 'online.sessions_independent', 'validation.online')


class Scratch(Base2):
    def emit(self, s, pi):
        buf = getattr(s, "scratch", None)
        if buf is None or buf.size < pi.size:
            buf = s.scratch = np.zeros(max(64, pi.size), dtype=np.int64)
        buf[: pi.size] = pi
        return buf[: pi.size]


export(Scratch(), globals())
