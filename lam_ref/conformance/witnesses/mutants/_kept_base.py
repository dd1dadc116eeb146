"""The correct kept-set skeleton (SPEC §15.5) the kept-form mutants share: greedy Algorithm 2 over
float64 ``sq``, returning the kept indices and, when ``WITNESS``, the witness map."""

from __future__ import annotations

from typing import Any

import numpy as np

from ....geometry import delta_sq, sq_dist_rows, validate_embeddings, validate_threshold

__all__ = ["KeptBase", "export_kept"]


class KeptBase:
    """Greedy over the kept rows in arrival order; one hook per decision a mutant may get wrong."""

    COMPLETE = True
    WITNESS = True

    def within(self, sq: np.ndarray, d2: float) -> np.ndarray:
        return sq <= d2

    def choose(self, cands: np.ndarray, sq: np.ndarray, ok: np.ndarray) -> int:
        """The witness among the kept candidates within δ: the lowest id."""
        return int(cands[np.flatnonzero(ok)[0]])

    def candidates(self, kept: list[int], i: int) -> np.ndarray:
        return np.asarray(kept, dtype=np.int64)

    def order(self, n: int) -> range:
        return range(n)

    def output(self, kept: list[int], witness: np.ndarray) -> Any:
        idx = np.asarray(sorted(kept), dtype=np.int64)
        return (idx, witness) if self.WITNESS else idx

    def kept(self, embeddings: Any, t: float) -> Any:
        e = validate_embeddings(embeddings)
        d2 = delta_sq(validate_threshold(t))
        kept: list[int] = []
        seen: list[int] = []
        witness = np.arange(e.shape[0], dtype=np.int64)
        for i in self.order(e.shape[0]):
            cands = self.candidates(kept, i) if seen else np.zeros(0, np.int64)
            cands = cands[cands != i]
            if cands.size:
                sq = sq_dist_rows(e, cands, np.broadcast_to(e[i], (cands.size, e.shape[1])))
                ok = self.within(sq, d2)
                if ok.any():
                    witness[i] = self.choose(cands, sq, ok)
                    seen.append(i)
                    continue
            kept.append(i)
            seen.append(i)
        return self.output(kept, witness)


def export_kept(impl: KeptBase, namespace: dict[str, Any]) -> None:
    """Expose ``kept``, ``COMPLETE`` and ``PROFILES`` at module level."""
    namespace["kept"] = impl.kept
    namespace["COMPLETE"] = impl.COMPLETE
    namespace.setdefault("PROFILES", {"kept-set", "kept-set-f32"})
