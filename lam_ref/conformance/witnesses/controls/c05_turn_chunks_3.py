"""Control (must pass): admit splits every turn internally into chunks of 3 rows and admits them one
after the other (different batching; SPEC §6.2 makes the split irrelevant)."""

from __future__ import annotations

import numpy as np

from ..mutants._base2 import Base2, export

CONTROL = True
ALLOWED = 'turns processed internally in chunks of 3 rows'


class Chunks3(Base2):
    def admit2(self, s, embeddings):
        e = self.ingest(embeddings, s.dim)
        if e.shape[0] <= 3:
            return super().admit2(s, e)
        return np.concatenate([super(Chunks3, self).admit2(s, e[k : k + 3]) for k in range(0, e.shape[0], 3)])


export(Chunks3(), globals())
