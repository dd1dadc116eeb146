"""A typical cosine deduplicator (SPEC §2.2, profile ``core-f32``): rows normalized in a float type,
``cos(a, b) >= t`` over the kept rows, witness the lowest id. The f32 mutants vary one hook."""

from __future__ import annotations

from typing import Any

import numpy as np

from ....geometry import validate_embeddings, validate_threshold

__all__ = ["Cosine", "export_cosine"]


class Cosine:
    DTYPE: Any = np.float32
    COMPLETE = True

    def choose(self, kept: list[int], cos: np.ndarray, hit: np.ndarray) -> int:
        return kept[int(hit[0])]

    def substitute(self, embeddings: Any, t: float) -> np.ndarray:
        e = validate_embeddings(embeddings)
        tt = self.DTYPE(validate_threshold(t))
        u = e.astype(self.DTYPE)
        u = u / np.linalg.norm(u.astype(np.float32), axis=1, keepdims=True).astype(self.DTYPE)
        pi = np.arange(e.shape[0], dtype=np.int64)
        kept: list[int] = []
        for i in range(e.shape[0]):
            if kept:
                cos = u[kept] @ u[i]
                hit = np.flatnonzero(cos >= tt)
                if hit.size:
                    pi[i] = self.choose(kept, cos, hit)
                    continue
            kept.append(i)
        return pi


def export_cosine(impl: Cosine, namespace: dict[str, Any]) -> None:
    namespace["substitute"] = impl.substitute
    namespace["COMPLETE"] = impl.COMPLETE
