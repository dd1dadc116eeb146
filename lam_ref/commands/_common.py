"""Shared helpers of the command modules: JSON output, tables, loading embeddings."""

from __future__ import annotations

import json
import os
import sys
import warnings
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

import numpy as np

from .._io import atomic_write, write_json  # noqa: F401  (write_json: re-exported for the commands)
from ..geometry import LamValueError


def check_output_file(path: str, name: str) -> None:
    """Refuse, before any work, an output file path that cannot be written: a folder, a file
    inside something that is not a folder, or a folder without write permission."""
    p = Path(path)
    if p.is_dir():
        raise LamValueError(f"{name} {path!r} is a directory; give a file path")
    parent = p.parent
    while not parent.exists() and parent != parent.parent:
        parent = parent.parent  # the nearest existing ancestor: missing folders are created
    if not parent.is_dir():
        raise LamValueError(f"{name} {path!r}: {str(parent)!r} is not a directory")
    if not os.access(parent, os.W_OK | os.X_OK):
        raise LamValueError(f"{name} {path!r}: directory {str(parent)!r} is not writable")


def check_output_dir(path: str, name: str) -> None:
    """Refuse, before any work, an output folder that exists as something else or cannot be written."""
    p = Path(path)
    if p.exists() and not p.is_dir():
        raise LamValueError(f"{name} {path!r} exists and is not a directory")
    if not p.exists():
        check_output_file(str(p / "_"), name)  # its nearest existing ancestor must be a writable folder
    elif not os.access(p, os.W_OK | os.X_OK):
        raise LamValueError(f"{name} {path!r} is not writable")


def write_jsonl(path: str | Path, rows: Iterable[dict[str, Any]]) -> Path:
    """Write one JSON object per line (UTF-8, non-ASCII kept), atomically."""
    data = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows).encode("utf-8", errors="surrogatepass")
    return atomic_write(path, lambda fh: fh.write(data))


def table(rows: list[list[Any]], header: list[str]) -> str:
    """A plain aligned text table."""
    cells = [header] + [[_cell(c) for c in row] for row in rows]
    widths = [max(len(r[i]) for r in cells) for i in range(len(header))]
    lines = ["  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip() for r in cells]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines)


def _cell(c: Any) -> str:
    if isinstance(c, float):
        return f"{c:.6g}"
    return str(c)


def load_embeddings(path: str, name: str = "embeddings") -> np.ndarray:
    """Load an ``.npy`` (or the first array of an ``.npz``) file; errors name the path."""
    p = Path(path)
    if not p.exists():
        raise LamValueError(f"{name} path {path!r} does not exist")
    try:
        arr = np.load(p, allow_pickle=False)
    except Exception as exc:
        raise LamValueError(f"{name} path {path!r} is not a readable .npy/.npz file: {exc}") from exc
    if isinstance(arr, np.lib.npyio.NpzFile):
        keys = list(arr.keys())
        if not keys:
            raise LamValueError(f"{name} path {path!r} is an empty .npz")
        arr = arr[keys[0]]
    return arr


def loaded_trajectories(paths: list[str], fmt: str | None, command: str, failures: list, *, show_warnings: bool = True) -> Iterator:
    """Trajectories of ``paths`` one at a time (streaming); each file that fails to load is reported
    on stderr as ``lam-ref COMMAND: failed: ...`` and appended to ``failures``, and the rest go on."""
    from ..text.loaders import LoadFailure, MalformedEvidenceWarning, iter_trajectories

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", MalformedEvidenceWarning)
        for item in iter_trajectories(paths, fmt):
            if isinstance(item, LoadFailure):
                failures.append(item)
                print(f"lam-ref {command}: failed: {item.error}", file=sys.stderr)
                continue
            if show_warnings:
                for w in item.warnings:
                    print(f"lam-ref {command}: warning: {w}", file=sys.stderr)
            yield item
