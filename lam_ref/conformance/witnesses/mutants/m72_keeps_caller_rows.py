"""Mutant: the session keeps views of the caller's arrays as its retained rows instead of copies, so
when the caller reuses its buffer for the next turn the retained rows change under the session (SPEC
§6.1: a session's state is its own)."""

from __future__ import annotations

import numpy as np

from ._base2 import Base2, export

BUG = "retained rows alias the caller's input buffer (zero-copy)"
VIOLATES = 'ONLINE'
CLASS = 'aliasing'
IDIOM = "Rust/C++: storing &[f32] / float* into the caller's buffer"
NEEDS = 'a caller that reuses (overwrites) its input buffer between turns'
CAUGHT_BY: tuple[str, ...] = ('online.caller_buffer_reuse',)


class ZeroCopy(Base2):
    def admit2(self, s, embeddings):
        caller = np.asarray(embeddings)
        e = self.ingest(embeddings, s.dim)
        if not hasattr(s, "views"):
            s.views = []
        n = e.shape[0]
        pi = np.empty(n, dtype=np.int64)
        if s.dim is None:
            s.dim = e.shape[1]
        for k in range(n):
            cid = s.next_id + k
            rep = cid
            for rid, row in s.views:
                d = row.astype(np.float64) - e[k]
                if self.within(np.array([d @ d]), s.d2)[0]:
                    rep = rid
                    break
            if rep == cid:
                s.views.append((cid, caller[k]))
            pi[k] = rep
        s.next_id += n
        return pi


export(ZeroCopy(), globals())
