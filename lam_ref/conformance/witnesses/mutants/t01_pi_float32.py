"""Mutant, run on request only (not an ``mNN`` module: its exposing input is 2²⁴ + 3 rows, the
``Ids2To24`` vector of online.json): lam_ref's adapter whose sessions hand their π back through a
float32 buffer (a JavaScript ``Float32Array``), so ids past 2²⁴ come back rounded (SPEC §1.2: every
id up to 2⁶³ - 1 exactly). ``tests/conformance/test_vectors.py`` shows the vector rejects it (slow)."""

from __future__ import annotations

import numpy as np

from ... import adapter

BUG = "π returned through a float32 buffer: ids past 2^24 rounded"
VIOLATES = "ONLINE"
PROFILES = {"core", "online"}


def substitute(embeddings, t):
    return adapter.substitute(embeddings, t).astype(np.float32).astype(np.int64)


class OnlineSession:
    def __init__(self, t):
        self._inner = adapter.OnlineSession(t)

    def admit(self, embeddings):
        return np.asarray(self._inner.admit(embeddings)).astype(np.float32).astype(np.int64)
