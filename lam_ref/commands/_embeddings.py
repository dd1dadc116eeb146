"""Embeddings in and out of a command: loading an ``.npy``/``.npz`` (``audit``, ``substitute``,
``bands``, ``verify``), and ``--save-embeddings``: the encoded windows of a run with their ids."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np

from .._io import InputError, atomic_write, atomic_write_text, load_npy_input
from ..geometry import LamValueError


def load_embeddings(path: str, name: str = "embeddings") -> np.ndarray:
    """Load an ``.npy`` (or the first array of an ``.npz``) file; errors name the path."""
    p = Path(path)
    if not p.exists():
        raise LamValueError(f"{name} path {path!r} does not exist")
    try:  # the one input-opening path: no FIFO, device or file past the limit (issue 39 §3)
        arr = load_npy_input(p)
    except InputError as exc:
        raise LamValueError(f"{name} path {path!r}: {exc.problem}") from None
    except Exception as exc:
        raise LamValueError(f"{name} path {path!r} is not a readable .npy/.npz file: {exc}") from exc
    if isinstance(arr, np.lib.npyio.NpzFile):
        keys = list(arr.keys())
        if not keys:
            raise LamValueError(f"{name} path {path!r} is an empty .npz")
        arr = arr[keys[0]]
    return arr


def embeddings_ids_path(path: str | Path) -> Path:
    """``OUT.ids.json`` for ``OUT.npy``: where :class:`EmbeddingSaver` writes the row ids (and
    ``verify`` reads them)."""
    path = Path(path)
    name = path.name[:-4] if path.name.endswith(".npy") else path.name
    return path.with_name(name + ".ids.json")


class EmbeddingSaver:
    """``--save-embeddings OUT.npy``: the encoded windows of every trajectory in corpus order, as one
    float32 ``.npy`` (rows = global window ids), and ``OUT.ids.json`` beside it naming each row's
    trajectory, window id within the trajectory, record index and turn. Both written atomically."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self.blocks: list[np.ndarray] = []
        self.ids: list[list[Any]] = []

    @property
    def ids_path(self) -> Path:
        return embeddings_ids_path(self.path)

    def add(self, traj_id: str, encoded: Any) -> None:
        """``encoded``: a :class:`lam_ref.text.pipeline.Encoded` (its chunks and embeddings)."""
        e = np.asarray(encoded.embeddings, dtype=np.float32)
        if e.shape[0] == 0:
            return
        self.blocks.append(e)
        self.ids.extend([traj_id, int(c.id), int(c.record), int(c.turn)] for c in encoded.chunks)

    def array(self) -> np.ndarray:
        if not self.blocks:
            return np.zeros((0, 0), dtype=np.float32)
        return np.concatenate(self.blocks, axis=0)

    def save(self) -> None:
        arr = self.array()
        atomic_write(self.path, lambda fh: np.save(fh, arr, allow_pickle=False))
        obj = {"columns": ["trajectory", "window", "record", "turn"], "rows": self.ids}
        text = json.dumps(obj, ensure_ascii=False)
        try:
            text.encode("utf-8")
        except UnicodeEncodeError:  # an id with a lone surrogate (a non-UTF-8 file name): ASCII escapes
            text = json.dumps(obj)
        atomic_write_text(self.ids_path, text + "\n")

    def describe(self) -> dict[str, Any]:
        arr_rows = sum(b.shape[0] for b in self.blocks)
        dim = self.blocks[0].shape[1] if self.blocks else 0
        return {"path": str(self.path), "ids": str(self.ids_path), "rows": arr_rows, "dim": dim}
