"""Residual trajectories in the input's own format (``lam-ref compact --residual-format native``).

Every record the loaders make names where its text stands in the input (``Record.source`` =
``"<file>:<JSON path>"``, or ``"<file>:line N"`` for JSONL; SPEC §1). The native residual is the
input file re-read and written back with each observation's text replaced by its residual text
at that place, so the loader that read the original reads the residual back (same format, same
records, residual observations). Everything else in the file (metadata, actions, messages'
other keys) is kept as it was. A LoCoMo file holds several conversations; each residual file
holds the one conversation it was made from (a one-element sample list).

The residual of a record whose content was a list of parts (chat content parts, joined by ``\\n``
when loaded) is written as a plain string, which the loaders read the same way.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from .._io import atomic_write_text
from ..geometry import LamValueError
from .records import OBSERVATION, Trajectory

__all__ = ["native_suffix", "parse_json_path", "write_native"]

_TOKEN = re.compile(r"\.([A-Za-z_][A-Za-z0-9_]*)|\[(\d+)\]")


def parse_json_path(path: str) -> list[str | int]:
    """``"$.messages[3].content"`` → ``["messages", 3, "content"]`` (the loaders' JSON paths)."""
    if not path.startswith("$"):
        raise LamValueError(f"JSON path must start with '$', got {path!r}")
    out: list[str | int] = []
    pos = 1
    for m in _TOKEN.finditer(path, 1):
        if m.start() != pos:
            break
        out.append(m.group(1) if m.group(1) is not None else int(m.group(2)))
        pos = m.end()
    if pos != len(path):
        raise LamValueError(f"JSON path {path!r} cannot be followed (at {path[pos:]!r})")
    return out


def native_suffix(source_path: str, fmt: str) -> str:
    """The file suffix a loader recognises for ``fmt`` (``.traj``, ``.traj.json``, ``.json``, ``.jsonl``)."""
    name = Path(source_path).name.lower()
    if fmt == "jsonl":
        return ".jsonl"
    if fmt == "mini-swe-agent":
        return ".traj.json" if name.endswith(".traj.json") else ".json"
    if fmt == "swe-agent":
        return ".traj" if name.endswith(".traj") else ".json"
    return ".json"


def _split_source(source: str, path: str) -> str:
    prefix = f"{path}:"
    if not source.startswith(prefix):
        raise LamValueError(f"record source {source!r} does not name the file {path!r}")
    return source[len(prefix):]


def _set(data: Any, keys: list[str | int], value: str, where: str) -> None:
    node = data
    for k in keys[:-1]:
        try:
            node = node[k]
        except (KeyError, IndexError, TypeError) as exc:
            raise LamValueError(f"{where}: not found in the input file") from exc
    try:
        node[keys[-1]]  # noqa: B018 - the place must exist: never add keys the input did not have
    except (KeyError, IndexError, TypeError) as exc:
        raise LamValueError(f"{where}: not found in the input file") from exc
    node[keys[-1]] = value


def write_native(base: str | Path, traj: Trajectory, residual_texts: Sequence[str]) -> Path:
    """Write ``traj``'s residual in its input format to ``base`` + ``.native`` + the format's suffix.

    Args:
        base: output path without suffix (a folder and the trajectory's file name).
        traj: the loaded trajectory (its ``path``, ``format`` and the records' ``source``).
        residual_texts: the text of every record after compaction (``CompactionResult.residual_texts``).

    Returns:
        The path written (atomically).

    Raises:
        LamValueError: the input file changed since it was loaded, or a record's place is not found.
    """
    if len(residual_texts) != len(traj.records):
        raise LamValueError(f"residual_texts has {len(residual_texts)} entries for {len(traj.records)} records")
    src = Path(traj.path)
    out = Path(str(base) + ".native" + native_suffix(traj.path, traj.format))
    try:
        raw = src.read_text(encoding="utf-8-sig")
    except (OSError, UnicodeDecodeError) as exc:
        raise LamValueError(f"{traj.path}: cannot be re-read to write the native residual: {exc}") from exc
    changed = [(r, t) for r, t in zip(traj.records, residual_texts) if r.role == OBSERVATION and t != r.text]
    if traj.format == "jsonl":
        lines = raw.split("\n")
        for rec, text in changed:
            where = _split_source(rec.source, traj.path)
            m = re.fullmatch(r"line (\d+)", where)
            if not m:
                raise LamValueError(f"{rec.source}: not a JSONL line reference")
            n = int(m.group(1)) - 1
            obj = json.loads(lines[n])
            obj["text"] = text
            lines[n] = json.dumps(obj, ensure_ascii=False)
        atomic_write_text(out, "\n".join(lines))
        return out
    data = json.loads(raw)
    root = data
    offset: list[str | int] = []
    if traj.format == "locomo":
        first = _split_source(traj.records[0].source, traj.path) if traj.records else "$[0]"
        s = parse_json_path(first)[0]
        root = data[s]
        offset = [s]
    for rec, text in changed:
        where = _split_source(rec.source, traj.path)
        keys = parse_json_path(where)
        if offset and keys[: len(offset)] != offset:
            raise LamValueError(f"{rec.source}: outside the conversation {offset}")
        _set(root, keys[len(offset):], text, rec.source)
    body = [root] if traj.format == "locomo" else data
    atomic_write_text(out, json.dumps(body, ensure_ascii=False, indent=1) + "\n")
    return out
