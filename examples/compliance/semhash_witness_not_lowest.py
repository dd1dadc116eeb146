"""semhash >= 0.5: the kept set is the greedy rule's, but a dropped record names the MOST SIMILAR
kept record, not the earliest one within the threshold (LAM SPEC §5 names the lowest id).

Rows 0 and 1 are far apart (both kept); row 2 is within the threshold of both and closer to row 1.
The greedy rule represents row 2 by row 0 (the earliest kept row within the threshold); semhash
names row 1. Standalone: imports only numpy and semhash. Exit 0 when the deviation is reproduced.
"""

import sys

import numpy as np
from semhash import SemHash
from vicinity import Backend


class Unused:
    """semhash's Encoder protocol; never called here (the embeddings are precomputed)."""

    def encode(self, sentences, **kwargs):
        raise AssertionError("not used")


t = 0.5
x0 = np.array([1.0, 0.0, 0.0], dtype=np.float32)
x1 = np.array([0.0, 1.0, 0.0], dtype=np.float32)
x2 = np.array([0.6, 0.8, 0.0], dtype=np.float32)  # cos to x0 = 0.6 >= t, to x1 = 0.8 >= t
emb = np.stack([x0, x1, x2])
result = SemHash.from_embeddings(emb, ["0", "1", "2"], model=Unused(), ann_backend=Backend.BASIC).self_deduplicate(threshold=t)
selected = sorted(result.selected)
witness = {d.record: d.duplicate_of for d in result.filtered}
print(f"selected {selected}; row 2 -> {witness.get('2')} (the greedy rule names row 0)")
if selected == ["0", "1"] and witness.get("2") == "1":
    print("REPRODUCED: kept set equal to the greedy rule's, witness differs")
    sys.exit(0)
print("NOT REPRODUCED")
sys.exit(1)
