"""Control (must pass): batch substitute in blocks of 7 arrivals: a float64 Gram filter of each block
against the rows retained before it, every candidate confirmed exactly, arrivals inside a block
compared one by one (a different internal block size and batching, SPEC §5.1's result)."""

from __future__ import annotations

import numpy as np

from ..mutants._base2 import Base2, export

CONTROL = True
ALLOWED = 'blocked batch with internal block size 7'


class Blocked7(Base2):
    ROWS = 7

    def substitute(self, embeddings, t):
        d2 = self.threshold(self.check_t(t))
        e = self.ingest(embeddings, None)
        n = e.shape[0]
        pi = np.empty(n, dtype=np.int64)
        kept = np.zeros(0, dtype=np.int64)
        nrm = (e * e).sum(axis=1)
        for lo in range(0, n, self.ROWS):
            hi = min(n, lo + self.ROWS)
            approx = nrm[lo:hi, None] + nrm[kept][None, :] - 2.0 * (e[lo:hi] @ e[kept].T)
            new = []
            for k in range(hi - lo):
                i = lo + k
                cand = np.concatenate([kept[approx[k] <= d2 + 1e-6], np.asarray(new, dtype=np.int64)])
                ok = self.within(self.sq_to(e[i], e[cand]), d2) if cand.size else np.zeros(0, bool)
                if ok.any():
                    pi[i] = cand[int(np.argmax(ok))]
                else:
                    pi[i] = i
                    new.append(i)
            kept = np.concatenate([kept, np.asarray(new, dtype=np.int64)])
        return pi


export(Blocked7(), globals())
