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

:func:`native_records` reads such a file back as residual records for
:meth:`~lam_ref.text.audit.AuditStore.restore_records` (``lam-ref restore --residual-format
native``): the records the loader reads, each ``source`` mapped back to the place in the input
file it was compacted from.
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

__all__ = ["native_records", "native_suffix", "parse_json_path", "write_native"]

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


def write_native(base: str | Path, traj: Trajectory, residual_texts: Sequence[str], *, tag: str = ".native") -> Path:
    """Write ``traj``'s residual in its input format to ``base`` + ``tag`` + the format's suffix.

    Args:
        base: output path without suffix (a folder and the trajectory's file name).
        traj: the loaded trajectory (its ``path``, ``format`` and the records' ``source``).
        residual_texts: the text of every record after compaction (``CompactionResult.residual_texts``);
            ``lam-ref restore`` passes the restored originals of a native residual
            (``tag=".original.native"``).
        tag: the part of the name between ``base`` and the suffix.

    Returns:
        The path written (atomically).

    Raises:
        LamValueError: the input file changed since it was loaded, or a record's place is not found.
    """
    if len(residual_texts) != len(traj.records):
        raise LamValueError(f"residual_texts has {len(residual_texts)} entries for {len(traj.records)} records")
    src = Path(traj.path)
    out = Path(str(base) + tag + native_suffix(traj.path, traj.format))
    try:
        raw = src.read_text(encoding="utf-8-sig")
    except (OSError, UnicodeDecodeError) as exc:
        raise LamValueError(f"{traj.path}: cannot be re-read to write the file in its own format: {exc}") from exc
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


_SAMPLE = re.compile(r"\$\[0\]")


def _same_place(native_where: str, original_source: str, fmt: str) -> bool:
    """Whether a record's place in a native residual (``native_where``, its JSON path or JSONL line)
    is the place ``original_source`` names in the input file: the same path, or for LoCoMo the same
    path inside the conversation, which the one-conversation residual holds as sample 0."""
    if fmt != "locomo":
        return original_source.endswith(":" + native_where)
    m = _SAMPLE.match(native_where)
    return bool(m) and re.search(r":\$\[\d+\]" + re.escape(native_where[m.end():]) + r"\Z", original_source) is not None


def native_records(path: str | Path, sources: Sequence[str] | None = None) -> tuple[Trajectory, list[dict[str, Any]]]:
    """A native residual file read back as residual records (``lam-ref restore``; SPEC §8).

    The file is loaded by the loader of its format (detected as for any input), which gives the
    residual records in order. Each record's ``source`` names the native file; where ``sources``
    (the audit store's record of the input's sources) names the same place in the input file, the
    record takes that source, so the audit store's field check compares like with like. A record
    at another place keeps its own source, and the audit store refuses it.

    Args:
        path: a ``<name>.native.<suffix>`` file written by ``lam-ref compact --residual-format native``.
        sources: the original ``source`` of every record (``AuditStore.meta``), or ``None``.

    Returns:
        The loaded trajectory and its records as dicts (``role``, ``text``, ``turn``, ``source``, ``name``).

    Raises:
        LamValueError: the file cannot be read or parsed by its loader
            (:class:`~lam_ref.text.records.TrajectoryFormatError`), or holds more than one trajectory.
    """
    from .loaders import load_file

    trajs = load_file(path)
    if len(trajs) != 1:
        raise LamValueError(f"{path}: a native residual holds one trajectory, this file holds {len(trajs)}")
    traj = trajs[0]
    prefix = f"{traj.path}:"
    out = []
    for i, rec in enumerate(traj.records):
        d = rec.to_json()
        if sources is not None and i < len(sources) and rec.source.startswith(prefix):
            if _same_place(rec.source[len(prefix):], str(sources[i]), traj.format):
                d["source"] = str(sources[i])
        out.append(d)
    return traj, out
