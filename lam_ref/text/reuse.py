"""Each distinct window text encoded once per run (SPEC §4.4; issue 26 §1).

Real corpora repeat whole window texts: an empty-output observation, a re-printed file, a replayed
demonstration. :class:`EncodingCache` keeps, for one run and one encoder, the embedding of every
window text it has encoded, keyed by the text's 128-bit XXH3 digest (of its UTF-8 bytes), never by
its position; :meth:`EncodingCache.encode` encodes only the texts whose digest it has not seen (each
once, in their first-occurrence order, in the encoder's own length-sorted batches) and gathers the
rest.

An embedding is a function of its text up to the encoder's *batch jitter*: the same text encoded in
another batch (other neighbours, another padded length) can differ in the last float32 bits
(measured here: at most 9e-8 per coordinate for all-MiniLM-L6-v2 on the CPU). The deletion set is a
function of the embeddings; the determinism probe (``lam-ref determinism probe``) shows that the
jitter does not move it on the shared trajectories, and its certificate names the decisions whose
margin is below the jitter (the only ones it could move). Reuse only changes *which* batch a text is
encoded in, so it is covered by the same rule: digests equal to a run that encodes every window
(``--no-reuse``), bits equal up to the jitter. The cache is bounded (:data:`DEFAULT_MAX_BYTES`, least
recently used rows evicted first), so a corpus of any size runs in bounded memory.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

import numpy as np
import xxhash

from ..geometry import LamValueError, validate_positive_int

if TYPE_CHECKING:  # pragma: no cover
    from .encoders import Encoder

__all__ = ["DEFAULT_MAX_BYTES", "EncodingCache", "distinct_texts", "text_key"]

#: Upper bound on the cached rows' bytes (64 MiB: 43,690 rows of D = 384 float32).
DEFAULT_MAX_BYTES = 64 * 2**20


def text_key(text: str) -> bytes:
    """The cache key of a window text: XXH3-128 of its UTF-8 bytes (lone surrogates kept as such)."""
    return xxhash.xxh3_128_digest(text.encode("utf-8", "surrogatepass"))


def distinct_texts(texts: Sequence[str]) -> tuple[list[str], np.ndarray]:
    """``(distinct, inverse)``: the distinct texts (by :func:`text_key`) in first-occurrence order,
    and for each text the index of its copy among them (``texts[i] == distinct[inverse[i]]``); the
    determinism probe encodes ``distinct`` once per batch size and gathers ``rows[inverse]``."""
    first: dict[bytes, int] = {}
    inverse = np.fromiter((first.setdefault(text_key(t), len(first)) for t in texts), dtype=np.int64,
                          count=len(texts))
    distinct = [""] * len(first)
    for i, j in enumerate(inverse.tolist()):
        if not distinct[j]:
            distinct[j] = texts[i]
    return distinct, inverse


class EncodingCache:
    """Embeddings of the window texts one run has encoded, by text digest (SPEC §4.4).

    ``enabled=False`` encodes every text it is given (no reuse, not even inside one call): the
    baseline ``--no-reuse`` runs and the benchmarks compare against. :attr:`encoded` and
    :attr:`reused` count the windows over the cache's life.
    """

    def __init__(self, *, enabled: bool = True, max_bytes: int = DEFAULT_MAX_BYTES) -> None:
        self.enabled = bool(enabled)
        self.max_bytes = validate_positive_int(max_bytes, "max_bytes")
        self._rows: OrderedDict[bytes, np.ndarray] = OrderedDict()
        self._bytes = 0
        self._encoder: object | None = None
        self.encoded = 0
        self.reused = 0

    def __len__(self) -> int:
        return len(self._rows)

    def encode(self, encoder: Encoder, texts: Sequence[str], *, batch_size: int, progress: bool = False,
               on_batch: Callable[[int], None] | None = None) -> tuple[np.ndarray, int, int]:
        """``(embeddings, encoded, reused)`` for ``texts`` in order: rows ``(len(texts), dim)``,
        how many texts went through ``encoder`` in this call and how many rows were reused.
        ``on_batch``: :meth:`Encoder.encode`'s progress callback (texts encoded so far)."""
        if self._encoder is None:
            self._encoder = encoder
        elif self._encoder is not encoder:
            raise LamValueError(f"this EncodingCache holds embeddings of encoder {getattr(self._encoder, 'name', '?')!r}; "
                                f"got encoder {getattr(encoder, 'name', '?')!r} (one cache per encoder and run)")
        texts = list(texts)
        if not self.enabled:
            emb = encoder.encode(texts, batch_size=batch_size, progress=progress, on_batch=on_batch)
            self.encoded += len(texts)
            return emb, len(texts), 0
        keys = [text_key(t) for t in texts]
        missing: dict[bytes, int] = {}  # digest -> position of its first occurrence among the new texts
        for i, k in enumerate(keys):
            if k not in self._rows and k not in missing:
                missing[k] = i
        fresh = encoder.encode([texts[i] for i in missing.values()], batch_size=batch_size, progress=progress,
                               on_batch=on_batch)
        new = dict(zip(missing, fresh))
        out = np.empty((len(texts), encoder.dim), dtype=np.float32)
        for i, k in enumerate(keys):
            row = new.get(k)
            if row is None:
                row = self._rows[k]
                self._rows.move_to_end(k)
            out[i] = row
        for k, row in new.items():
            self._store(k, row)
        encoded = len(missing)
        self.encoded += encoded
        self.reused += len(texts) - encoded
        return out, encoded, len(texts) - encoded

    def _store(self, key: bytes, row: np.ndarray) -> None:
        row = np.array(row, dtype=np.float32, copy=True)
        self._rows[key] = row
        self._bytes += row.nbytes
        while self._bytes > self.max_bytes and self._rows:
            _, old = self._rows.popitem(last=False)
            self._bytes -= old.nbytes
