"""Control (must pass): stores the retained rows as float32 (the input's own precision) and widens them
to float64 only for the distance: lossless for float32 input, so decisions are the same (SPEC §2.1
reads float64(a) of the float32 rows)."""

from __future__ import annotations

import numpy as np

from ..mutants._base2 import Base2, export

CONTROL = True
ALLOWED = 'retained rows stored as float32'


class F32Store(Base2):
    def sq_to(self, x, rows):
        diff = rows.astype(np.float32).astype(np.float64) - x
        return np.einsum("ij,ij->i", diff, diff)


export(F32Store(), globals())
