"""The identity of a model folder's files (SPEC §4.5): the weights digest that keys the ONNX
export cache and names the encoder in determinism reports."""

from __future__ import annotations

import functools
import hashlib
from pathlib import Path
from typing import Any

__all__ = ["model_files_sha256", "weights_sha256"]

_WEIGHT_FILES_SKIPPED = {"README.md", ".gitattributes", "LAM_WEIGHTS.json"}


def model_files_sha256(folder: Path) -> tuple[list[dict[str, Any]], str]:
    """SHA-256 of every file of a model folder (weights, config, tokenizer; not README,
    .gitattributes, LAM_WEIGHTS.json) and one SHA-256 over ``"<file> <sha256>"`` lines."""
    files = []
    for f in sorted(p for p in Path(folder).rglob("*") if p.is_file() and p.name not in _WEIGHT_FILES_SKIPPED):
        h = hashlib.sha256()
        with open(f, "rb") as fh:
            for block in iter(lambda: fh.read(1 << 20), b""):
                h.update(block)
        files.append({"file": f.relative_to(folder).as_posix(), "bytes": f.stat().st_size, "sha256": h.hexdigest()})
    total = hashlib.sha256("\n".join(f"{x['file']} {x['sha256']}" for x in files).encode()).hexdigest()
    return files, total



@functools.lru_cache(maxsize=8)
def _folder_sha256(folder: str, stamp: tuple[tuple[str, int, int], ...]) -> str:
    return model_files_sha256(Path(folder))[1]


def weights_sha256(folder: Path) -> str:
    """:func:`model_files_sha256`'s one digest of ``folder``, computed once per process while no
    file's size or modification time changes (the self-check of ``--encoder-backend auto`` and the
    on-disk embedding cache key by it; SPEC §4.5, §4.6)."""
    folder = Path(folder)
    stamp = tuple((p.relative_to(folder).as_posix(), p.stat().st_size, p.stat().st_mtime_ns)
                  for p in sorted(folder.rglob("*")) if p.is_file() and p.name not in _WEIGHT_FILES_SKIPPED)
    return _folder_sha256(str(folder.resolve()), stamp)
