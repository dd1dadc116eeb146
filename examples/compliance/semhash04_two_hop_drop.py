"""semhash 0.4: a record is dropped when any of its neighbours was seen in an earlier kept record's
neighbourhood, so a record two hops from a kept one is dropped although no kept record is within
the threshold of it (fixed in 0.5, which compares with the kept records directly).

a ~ b ~ c with a, c apart: a is kept, b is dropped (a's neighbour), c is dropped because its
neighbour b was seen. Standalone: imports only numpy and semhash (0.4.x). Exit 0 when reproduced.
"""

import math
import sys

import numpy as np
from semhash import SemHash


def unit(deg):
    return [math.cos(math.radians(deg)), math.sin(math.radians(deg))]


class Rows:
    """semhash 0.4 has no from_embeddings: an encoder that returns the fixed rows for their records."""

    ROWS = {"a": unit(0), "b": unit(20), "c": unit(40)}  # sim(a,b) = sim(b,c) = 0.940, sim(a,c) = 0.766

    def encode(self, sentences, **kwargs):
        return np.array([self.ROWS[s] for s in sentences], dtype=np.float32)


try:
    sh = SemHash.from_records(["a", "b", "c"], model=Rows(), ann_backend="basic")
except TypeError:
    sh = SemHash.from_records(["a", "b", "c"], model=Rows(), use_ann=False)
kept = sorted(sh.self_deduplicate(threshold=0.9).selected)
print(f"kept {kept}; sim(a, c) = {math.cos(math.radians(40)):.3f} < 0.9 (the greedy rule keeps ['a', 'c'])")
if kept == ["a"]:
    print("REPRODUCED: c was dropped with no kept record within the threshold")
    sys.exit(0)
print("NOT REPRODUCED")
sys.exit(1)
