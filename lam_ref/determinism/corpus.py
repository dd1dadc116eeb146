"""The probe's input: the observation windows of trajectories in corpus order, and the input identity (SPEC §3)."""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..geometry import LamValueError, validate_positive_int

__all__ = ["SCOPES", "WINDOW_FITS", "Corpus", "load_corpus"]

#: Matching scopes (``--scope``): within a trajectory (SPEC §1) or across the whole corpus.
SCOPES = ("trajectory", "corpus")
#: How the windows were cut (a report's ``input.window_fit``; ``compact``'s ``window_fit``):
#: ``encoder``, each window ends where the encoder stops reading (SPEC §3.4); ``none``, the paper's
#: fixed ``window``-token windows.
WINDOW_FITS = ("encoder", "none")


@dataclass(frozen=True)
class Corpus:
    """The observation windows of some trajectories, in corpus order (global ids), and their groups."""

    texts: list[str]
    groups: list[tuple[int, int]]
    trajectories: list[str]
    paths: list[str]
    window: int
    tokenizer: str
    scope: str
    window_fit: str = "none"

    @property
    def input_sha256(self) -> str:
        """SHA-256 over the chunk texts in order (each as 8-byte little-endian length + UTF-8) and
        the group boundaries (``scope``: decisions never cross a group)."""
        h = hashlib.sha256()
        for a, b in self.groups:
            h.update(b"G" + (b - a).to_bytes(8, "little"))
            for t in self.texts[a:b]:
                data = t.encode("utf-8", errors="surrogatepass")
                h.update(len(data).to_bytes(8, "little") + data)
        return h.hexdigest()


def _shown_path(path: str, roots: Sequence[str]) -> str:
    """``path`` relative to the folder argument holding it, prefixed by that folder's name (no
    machine-specific absolute paths in reports)."""
    p = Path(path).resolve()
    for r in roots:
        root = Path(r).resolve()
        if root.is_dir() and p.is_relative_to(root):
            return (Path(root.name) / p.relative_to(root)).as_posix()
    return p.name


def load_corpus(paths: Sequence[str], *, window: int = 512, tokenizer: str = "cl100k_base", fmt: str | None = None,
                scope: str = "trajectory", horizon: Any = None) -> Corpus:
    """Chunk the observation records of every trajectory under ``paths`` (SPEC §3); with a
    ``horizon`` (an encoder) each window ends where it stops reading (SPEC §3.4), as ``compact`` cuts.

    A file that fails to load is an error (a probe over part of its input would compare unlike
    with like); so is an input without any window.
    """
    from ..text.chunking import chunk_records, get_tokenizer
    from ..text.loaders import LoadFailure, iter_trajectories

    if scope not in SCOPES:
        raise LamValueError(f"scope must be one of {', '.join(SCOPES)}, got {scope!r}")
    window = validate_positive_int(window, "window")
    if not paths:
        raise LamValueError("paths: give at least one trajectory file or folder")
    for p in paths:
        if not Path(p).exists():
            raise LamValueError(f"path {p!r} does not exist")
    tok = get_tokenizer(tokenizer)
    texts: list[str] = []
    groups: list[tuple[int, int]] = []
    ids: list[str] = []
    files: list[str] = []
    for item in iter_trajectories(list(paths), fmt):
        if isinstance(item, LoadFailure):
            raise LamValueError(f"trajectory file {item.path!s}: {item.error}")
        recs = item.records
        chunks = chunk_records([(i, recs[i].turn, recs[i].text) for i in item.observation_indices], tok, window,
                               horizon=horizon)
        if not chunks:
            continue
        groups.append((len(texts), len(texts) + len(chunks)))
        texts += [c.text for c in chunks]
        ids.append(item.id)
        shown = _shown_path(item.path, paths)
        if shown not in files:
            files.append(shown)
    if not texts:
        raise LamValueError(f"paths {list(paths)!r}: no observation windows to encode")
    if scope == "corpus":
        groups = [(0, len(texts))]
    return Corpus(texts, groups, ids, files, window, tok.name, scope, "none" if horizon is None else "encoder")
