"""An opt-in on-disk embedding cache shared by runs (SPEC §4.6; issue 37 §3).

:class:`EncodingCache` (SPEC §4.4) reuses a window's row inside one run. ``--embedding-cache DIR``
(or ``$LAM_REF_EMBEDDING_CACHE``) keeps the rows on disk, so a second ``compact``, ``sweep`` or
``pairs`` over the same corpus reads them instead of encoding:

* **Key.** One entry per window text, under a folder named by the model key: the encoder's weights
  digest (SHA-256 of its model files), backend, precision, device and dimension; the file is named
  by the text's XXH3-128 digest (:func:`~lam_ref.text.reuse.text_key`). The entry repeats its whole
  key in its header.
* **Written atomically.** A temporary file in the entry's folder, then ``os.replace``: a reader sees
  the old entry, the new one or none, never part of one.
* **Never trusted.** An entry is read only when its magic, its key (model and text), its dtype and
  shape, its length and its XXH3-64 checksum all match and its row is finite and unit-norm;
  anything else (a corrupted, truncated or foreign entry) is *refused*, counted, encoded again and
  overwritten.
* **Bounded.** At most :data:`DEFAULT_MAX_BYTES` of entries (``--embedding-cache-max-mb``); past it
  the least recently used entries (by modification time, which a hit refreshes) are deleted.

A hit returns the row a previous run encoded, possibly in another batch: the same rule as reuse
inside a run (SPEC §4.4: equal up to the batch jitter, which the determinism certificate covers).
"""

from __future__ import annotations

import hashlib
import json
import os
import struct
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import xxhash

from ..geometry import LamValueError, validate_positive_int
from .encoders import Encoder
from .reuse import text_key

__all__ = ["DEFAULT_MAX_BYTES", "ENV", "EmbeddingCache", "DiskCachedEncoder", "check_cache_dir", "model_key"]

#: The environment variable naming the cache folder when ``--embedding-cache`` is not given.
ENV = "LAM_REF_EMBEDDING_CACHE"
#: The default bound on the entries' bytes (1 GiB: about 650,000 rows of D = 384).
DEFAULT_MAX_BYTES = 1 << 30
_MAGIC = b"LAMEMB1\n"
_SUFFIX = ".emb"


def check_cache_dir(path: str) -> Path:
    """``path`` usable as a cache folder, proven by writing there: the folder (created when missing,
    as a cache's own folder is) takes a temporary file. :class:`LamValueError` naming it else."""
    p = Path(path)
    try:
        p.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=p, prefix=".tmp-probe-")
        os.close(fd)
        os.unlink(tmp)
    except OSError as exc:
        raise LamValueError(f"{path!r}: cannot write there ({exc.strerror or exc})") from None
    return p


def model_key(encoder: Encoder) -> dict[str, Any]:
    """What an entry's row depends on besides its text: the encoder's name and weights digest, its
    backend, precision, device and dimension. :class:`LamValueError` when the weights cannot be
    digested (no local folder)."""
    from .auto_backend import encoder_weights
    from .backends import get_backend

    if encoder.kind == "hashing":
        weights, precision = encoder.name, "float64"  # the algorithm is the weights
    else:
        weights = encoder_weights(encoder)
        if weights is None:
            raise LamValueError(f"--embedding-cache: encoder {encoder.name!r} has no local weights folder to digest")
        precision = get_backend(encoder.backend).precision or _torch_precision(encoder)
    return {"encoder": encoder.name, "weights_sha256": weights, "backend": encoder.backend,
            "precision": precision, "device": str(encoder.device).split(":")[0], "dim": int(encoder.dim)}


def _torch_precision(encoder: Any) -> str:
    try:
        return str(next(encoder.model.parameters()).dtype).removeprefix("torch.")
    except (AttributeError, StopIteration):
        return "float32"


@dataclass
class EmbeddingCache:
    """The entries under ``root`` (module docstring), bounded by ``max_bytes``. The counters say what
    this process did: ``hits``, ``written``, ``refused`` (entries present but not trusted), ``evicted``."""

    root: Path
    max_bytes: int = DEFAULT_MAX_BYTES
    hits: int = 0
    written: int = 0
    refused: int = 0
    evicted: int = 0
    _total: int | None = field(default=None, repr=False)

    def __post_init__(self) -> None:
        self.root = check_cache_dir(str(self.root))
        self.max_bytes = validate_positive_int(self.max_bytes, "max_bytes")

    def _path(self, model: str, text: str) -> Path:
        folder = hashlib.sha256(model.encode()).hexdigest()[:16]
        digest = text_key(text).hex()
        return self.root / folder / digest[:2] / (digest + _SUFFIX)

    @staticmethod
    def _header(model: str, text: str, dim: int) -> bytes:
        return json.dumps({"model": model, "text": text_key(text).hex(), "dtype": "<f4", "dim": dim},
                          sort_keys=True).encode()

    def get(self, model: str, text: str, dim: int) -> np.ndarray | None:
        """The row stored for (``model``, ``text``) if its entry is whole and its own; ``None`` when
        absent; a present entry that fails any check is counted in :attr:`refused`."""
        path = self._path(model, text)
        try:
            data = path.read_bytes()
        except OSError:
            return None
        row = self._parse(data, self._header(model, text, dim), dim)
        if row is None:
            self.refused += 1
            return None
        try:
            os.utime(path)  # least recently used = oldest modification time
        except OSError:
            pass
        self.hits += 1
        return row

    @staticmethod
    def _parse(data: bytes, header: bytes, dim: int) -> np.ndarray | None:
        n = len(_MAGIC) + 4 + len(header) + 4 * dim + 8
        if len(data) != n or not data.startswith(_MAGIC):
            return None
        (hlen,) = struct.unpack_from("<I", data, len(_MAGIC))
        start = len(_MAGIC) + 4
        if hlen != len(header) or data[start:start + hlen] != header:
            return None
        (check,) = struct.unpack_from("<Q", data, n - 8)
        if check != xxhash.xxh3_64_intdigest(data[: n - 8]):
            return None
        row = np.frombuffer(data, dtype="<f4", count=dim, offset=start + hlen).astype(np.float32)
        if not np.all(np.isfinite(row)) or abs(float(np.dot(row.astype(np.float64), row)) - 1.0) > 1e-3:
            return None
        return row

    def put(self, model: str, text: str, row: np.ndarray) -> None:
        """Write the entry of (``model``, ``text``) atomically, then evict past the bound."""
        row = np.ascontiguousarray(row, dtype="<f4")
        header = self._header(model, text, int(row.size))
        body = _MAGIC + struct.pack("<I", len(header)) + header + row.tobytes()
        data = body + struct.pack("<Q", xxhash.xxh3_64_intdigest(body))
        path = self._path(model, text)
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-", suffix=_SUFFIX)
        try:
            with os.fdopen(fd, "wb") as fh:
                fh.write(data)
            os.replace(tmp, path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
        self.written += 1
        self._total = (self.size() if self._total is None else self._total) + len(data)

    def _entries(self) -> list[tuple[int, int, Path]]:
        out = []
        for dirpath, _dirs, files in os.walk(self.root):
            for f in files:
                if f.endswith(_SUFFIX) and not f.startswith(".tmp-"):
                    p = Path(dirpath, f)
                    try:
                        st = p.stat()
                    except OSError:
                        continue
                    out.append((st.st_mtime_ns, st.st_size, p))
        return out

    def size(self) -> int:
        """The bytes of every entry under the root (all models)."""
        return sum(s for _, s, _ in self._entries())

    def evict(self) -> None:
        """Delete the least recently used entries until the total is within :attr:`max_bytes`."""
        if self._total is None or self._total <= self.max_bytes:
            return
        entries = sorted(self._entries(), key=lambda e: (e[0], str(e[2])))
        total = sum(s for _, s, _ in entries)
        for _, s, p in entries:
            if total <= self.max_bytes:
                break
            try:
                p.unlink()
            except OSError:
                continue
            total -= s
            self.evicted += 1
        self._total = total

    def describe(self) -> dict[str, Any]:
        return {"folder": str(self.root), "max_bytes": self.max_bytes, "hits": self.hits, "written": self.written,
                "refused": self.refused, "evicted": self.evicted}


class DiskCachedEncoder(Encoder):
    """``inner`` with its rows kept in an :class:`EmbeddingCache`: each text's row is read from the
    cache when a trusted entry exists, else encoded by ``inner`` (in its own batches) and written."""

    reports_batches = True

    def __init__(self, inner: Encoder, cache: EmbeddingCache) -> None:
        self.inner, self.cache = inner, cache
        self.name, self.dim, self.max_tokens = inner.name, inner.dim, inner.max_tokens
        self.device, self.kind, self.backend = inner.device, inner.kind, inner.backend
        self.backend_choice = inner.backend_choice
        self._model = json.dumps(model_key(inner), sort_keys=True)

    def _encode(self, texts: list[str], batch_size: int, progress: bool) -> np.ndarray:
        out = np.empty((len(texts), self.dim), dtype=np.float32)
        missing: list[int] = []
        for i, t in enumerate(texts):
            row = self.cache.get(self._model, t, self.dim)
            if row is None:
                missing.append(i)
            else:
                out[i] = row
        if self._on_batch is not None and len(texts) > len(missing):
            self._on_batch(len(texts) - len(missing))
        if missing:
            fresh = self.inner.encode([texts[i] for i in missing], batch_size=batch_size, progress=progress,
                                      on_batch=self._on_batch)
            for i, row in zip(missing, fresh):
                out[i] = row
                self.cache.put(self._model, texts[i], row)
            self.cache.evict()
        return out

    def token_lengths(self, texts: Sequence[str]) -> list[int] | None:
        return self.inner.token_lengths(texts)

    def piece_spans(self, text: str) -> list[tuple[int, int]] | None:
        return self.inner.piece_spans(text)

    def describe(self) -> dict[str, Any]:
        return {**self.inner.describe(), "embedding_cache": self.cache.describe()}
