"""semhash: similarities are float32 cosines, so a pair whose exact distance is a hair beyond the
threshold (sq = 2 - 2t + 6.5e-9 in float64) can be merged. LAM's exact profile decides such pairs
with the float64 rule sq <= 2 - 2t; its float32-cosine profile (SPEC §2.2) accepts either answer
within about 2 (γ_D + u) of the threshold.

Standalone: imports only numpy and semhash. Exit 0 when a merge beyond the exact threshold is reproduced.
"""

import sys

import numpy as np
from semhash import SemHash
from vicinity import Backend


class Unused:
    def encode(self, sentences, **kwargs):
        raise AssertionError("not used")


t = 0.5
rng = np.random.default_rng(0)
for _attempt in range(20000):
    a = rng.standard_normal(16)
    a /= np.linalg.norm(a)
    v = rng.standard_normal(16)
    v -= (v @ a) * a
    v /= np.linalg.norm(v)
    b = (t * a + np.sqrt(1 - t * t) * v).astype(np.float32)  # cosine exactly t before rounding
    a32 = a.astype(np.float32)
    sq = float(np.sum((a32.astype(np.float64) - b.astype(np.float64)) ** 2))
    if sq > 2 - 2 * t and a32 @ b >= np.float32(t) and abs(np.linalg.norm(b.astype(np.float64)) - 1) < 1e-6:
        break
else:
    print("NOT REPRODUCED: no float32 pair found")
    sys.exit(1)
result = SemHash.from_embeddings(np.stack([a32, b]), ["0", "1"], model=Unused(), ann_backend=Backend.BASIC).self_deduplicate(threshold=t)
print(f"sq = {sq!r} > δ² = {2 - 2 * t!r}; selected {sorted(result.selected)}")
if sorted(result.selected) == ["0"]:
    print("REPRODUCED: merged a pair beyond the exact threshold (precision at the threshold)")
    sys.exit(0)
print("NOT REPRODUCED")
sys.exit(1)
