"""The identity of a model folder's files (SPEC §4.5): the weights digest that keys the ONNX
export cache and names the encoder in determinism reports."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

__all__ = ["model_files_sha256"]

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

