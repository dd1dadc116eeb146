"""Embedding shards on disk: memory-mapped ``.npy`` files with checksums, and the manifest that
orders them (the corpus-scope greedy of paper §2.4 over all chunks of all trajectories).

The global order is the manifest's order: shard ``k`` holds global rows
``offsets[k] .. offsets[k+1]-1`` where ``offsets`` is the prefix sum of the shards' row counts
(``offsets[0] = 0``). For ``lam-ref compact --scope corpus`` the shards are the trajectories in the
order the serial command reads them (arguments in order, folders sorted), each trajectory's
windows in arrival order (SPEC §1, §3); for ``lam-ref substitute X.npy`` they are consecutive
row ranges of ``X``.

Every shard's XXH3-128 checksum is recorded when it is written and checked whenever a task opens
the shard (a :class:`ShardReader` checks each shard once and is used by one task): a corrupt,
truncated or missing shard raises :class:`ShardError` naming the file, and is never used.
The same checksum binds every other file a run folder holds for later (the corpus map, the staged
residual and audit files): :func:`file_problem` / :func:`check_file` are the one check
(issue 39 §4; ``docs/reliability.md``).
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import xxhash

from .._io import atomic_write, atomic_write_text, load_npy
from ..geometry import LamValueError

__all__ = ["ShardError", "ShardReader", "ShardSet", "check_file", "checksum_file", "file_problem", "write_shard",
           "write_shards"]


class ShardError(LamValueError):
    """A shard (or another run-folder file bound to a checksum) that is missing, unreadable, or whose
    checksum differs from the one recorded when it was written."""


def checksum_file(path: str | os.PathLike[str]) -> str:
    """XXH3-128 (hex) of a file's bytes."""
    h = xxhash.xxh3_128()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 22), b""):
            h.update(block)
    return h.hexdigest()


def file_problem(path: str | os.PathLike[str], expected: str) -> str | None:
    """Why the file at ``path`` is not the one whose XXH3-128 ``expected`` was recorded when it was
    written (``"cannot be read: ..."``, ``"is corrupt: checksum ... differs from the recorded ..."``),
    or ``None`` when it is."""
    try:
        got = checksum_file(path)
    except OSError as exc:
        return f"cannot be read: {exc.strerror or exc}"
    return None if got == expected else f"is corrupt: checksum {got} differs from the recorded {expected}"


def check_file(path: str | os.PathLike[str], expected: str, what: str) -> None:
    """Refuse the file at ``path`` unless it is the one written with XXH3-128 ``expected``.

    Raises:
        ShardError: one line, ``<what> '<path>' <problem>`` (:func:`file_problem`).
    """
    problem = file_problem(path, expected)
    if problem is not None:
        raise ShardError(f"{what} {str(path)!r} {problem}")


def write_shard(path: str | os.PathLike[str], rows: np.ndarray) -> dict[str, Any]:
    """Write ``rows`` (float32, C order) as ``.npy`` atomically; return its manifest entry."""
    arr = np.ascontiguousarray(rows, dtype=np.float32)
    p = atomic_write(path, lambda fh: np.save(fh, arr, allow_pickle=False))
    return {"file": p.name, "rows": int(arr.shape[0]), "dim": int(arr.shape[1]) if arr.ndim == 2 else 0,
            "xxh3_128": checksum_file(p)}


def write_shards(embeddings: np.ndarray, directory: str | os.PathLike[str], rows_per_shard: int) -> ShardSet:
    """Split ``embeddings`` into consecutive shards of ``rows_per_shard`` rows under ``directory``."""
    d = Path(directory)
    d.mkdir(parents=True, exist_ok=True)
    n = embeddings.shape[0]
    entries = [write_shard(d / f"rows-{k:06d}.npy", embeddings[s : s + rows_per_shard])
               for k, s in enumerate(range(0, n, rows_per_shard))]
    return ShardSet.create(d, entries, int(embeddings.shape[1]))


@dataclass(frozen=True)
class ShardSet:
    """The manifest: shard files in global order, their row counts, checksums and prefix sums."""

    directory: str
    files: tuple[str, ...]
    rows: tuple[int, ...]
    checksums: tuple[str, ...]
    dim: int

    @classmethod
    def create(cls, directory: str | os.PathLike[str], entries: list[dict[str, Any]], dim: int) -> ShardSet:
        return cls(str(directory), tuple(e["file"] for e in entries), tuple(int(e["rows"]) for e in entries),
                   tuple(e["xxh3_128"] for e in entries), int(dim))

    @property
    def offsets(self) -> np.ndarray:
        """Prefix sums of the row counts: shard ``k`` holds global rows ``offsets[k]:offsets[k+1]``."""
        return np.concatenate([[0], np.cumsum(np.asarray(self.rows, dtype=np.int64))]).astype(np.int64)

    @property
    def n(self) -> int:
        return int(sum(self.rows))

    def to_json(self) -> dict[str, Any]:
        return {"directory": self.directory, "dim": self.dim, "offsets": self.offsets.tolist(),
                "shards": [{"file": f, "rows": r, "xxh3_128": c} for f, r, c in zip(self.files, self.rows, self.checksums)]}

    def save(self, path: str | os.PathLike[str]) -> None:
        atomic_write_text(path, json.dumps(self.to_json()))

    def reader(self) -> ShardReader:
        """A reader that checks each shard once, on first use (one per task)."""
        return ShardReader(self)

    def open(self, k: int) -> np.ndarray:
        """Shard ``k`` memory-mapped, after checking its checksum (see :meth:`ShardReader.open`)."""
        return self.reader().open(k)

    def read(self, ids: np.ndarray) -> np.ndarray:
        """Rows with global ids ``ids`` (any order); every shard touched is checked first."""
        return self.reader().read(ids)

    def read_range(self, start: int, stop: int) -> np.ndarray:
        """Global rows ``start .. stop-1``."""
        return self.read(np.arange(start, stop, dtype=np.int64))


class ShardReader:
    """Reads rows of a :class:`ShardSet`, checking each shard's checksum the first time it opens it."""

    def __init__(self, shards: ShardSet) -> None:
        self.shards = shards
        self._open: dict[int, np.ndarray] = {}
        self._offsets = shards.offsets

    def open(self, k: int) -> np.ndarray:
        """Shard ``k`` memory-mapped, after checking its checksum against the manifest.

        Raises:
            ShardError: the file is missing, unreadable, of the wrong shape, or its checksum differs.
        """
        hit = self._open.get(k)
        if hit is not None:
            return hit
        sh = self.shards
        path = Path(sh.directory) / sh.files[k]
        check_file(path, sh.checksums[k], "shard")
        arr = load_npy(path, mmap_mode="r", allow_pickle=False)
        if arr.dtype != np.float32 or arr.ndim != 2 or arr.shape[0] != sh.rows[k] or (arr.shape[0] and arr.shape[1] != sh.dim):
            raise ShardError(f"shard {str(path)!r} has shape {arr.shape} {arr.dtype}, expected ({sh.rows[k]}, {sh.dim}) float32")
        self._open[k] = arr
        return arr

    def read(self, ids: np.ndarray) -> np.ndarray:
        """Rows with global ids ``ids`` (any order) as a float32 ``(len(ids), D)`` array."""
        ids = np.asarray(ids, dtype=np.int64)
        out = np.empty((ids.size, self.shards.dim), dtype=np.float32)
        if ids.size == 0:
            return out
        off = self._offsets
        which = np.searchsorted(off, ids, side="right") - 1
        ks = np.unique(which)
        if ks.size == 1:
            k = int(ks[0])
            out[:] = self.open(k)[ids - off[k]]
            return out
        for k in ks.tolist():
            sel = np.flatnonzero(which == k)
            out[sel] = self.open(k)[ids[sel] - off[k]]
        return out
