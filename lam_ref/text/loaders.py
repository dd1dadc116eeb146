"""Trajectory loaders: SWE-agent ``.traj``, mini-swe-agent ``.traj.json``, LoCoMo, generic JSONL.

Each loader turns one file into :class:`~lam_ref.text.records.Trajectory` objects (SPEC §1) with
records ``(role, text, turn, source)``. Tool output becomes role ``"observation"``, the only role
LAM compacts (paper §2.2, App. B: "tool observations").

* **swe-agent** (0.x and 1.x): the observation of step ``i`` is ``trajectory[i]["observation"]``;
  the step's ``thought`` and ``action`` become records of the same turn; the messages of
  ``history`` before the first assistant message (system prompt, demonstrations, the issue) are
  turn-0 records. A file with ``history`` but no ``trajectory`` is read from ``history``: each
  assistant message opens a turn, ``tool`` messages and ``user`` messages typed ``observation``
  are its observations.
* **mini-swe-agent**: ``messages``; the system prompt and the first user message (the task) are
  turn-0 records, each assistant message opens a turn, and the ``user``/``tool`` messages after it
  (``<returncode>…</returncode><output>…</output>``) are its observations.
* **locomo** (``locomo10.json``): one trajectory per sample; every dialogue turn is one
  observation record and one turn (speaker in ``Record.name``); QA items are kept in
  ``meta["qa"]`` with their evidence resolved to record indices. LoCoMo's known malformed evidence
  ids (``"D8:6; D9:17"``, ``"D30:05"``, ids of turns that do not exist) are tolerated: they are
  repaired where unambiguous, else dropped, with a :class:`MalformedEvidenceWarning` each.
* **jsonl**: one JSON object per line, ``{"role": str, "text": str|null, "turn": int?, "name": str?}``.
  Without ``turn`` a record joins the previous record's turn, and a new turn starts after each
  observation. Turns must not decrease.

Malformed input raises :class:`~lam_ref.text.records.TrajectoryFormatError` naming the file, the
JSON path and the problem (bad JSON, non-UTF-8 bytes, empty file, missing fields, wrong types,
a directory with no trajectory files); never a partial result. :func:`iter_trajectories` reports
per-file failures as :class:`LoadFailure` items and goes on with the other files.
"""

from __future__ import annotations

import fnmatch
import json
import os
import re
import stat
import warnings
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .._io import MAX_INPUT_BYTES, InputError, file_kind, max_input_bytes, read_input_text
from .records import OBSERVATION, Record, Trajectory, TrajectoryFormatError

__all__ = [
    "FORMATS",
    "LoadFailure",
    "MalformedEvidenceWarning",
    "detect_format",
    "directory_ids",
    "is_own_output",
    "iter_trajectories",
    "iter_trajectory_files",
    "load_all",
    "load_file",
    "load_text",
    "parse_locomo_evidence",
    "shared_data_dir",
]

#: Loader names accepted by ``--format``.
FORMATS = ("swe-agent", "mini-swe-agent", "locomo", "jsonl")
#: The largest turn (agent step) index a JSONL record may give (turns are int64 downstream).
MAX_TURN = 2**31 - 1
#: The largest input file read (bytes; ``LAM_REF_MAX_FILE_BYTES`` overrides it): one file may not
#: cost unbounded memory (a larger file is a per-file failure naming the limit).
MAX_FILE_BYTES = MAX_INPUT_BYTES

#: Names of the files ``lam-ref`` itself writes (``compact --residual-dir``, ``restore --out``):
#: skipped, and counted, when a folder argument is scanned for trajectories (they are our output,
#: never input to read back).
OUTPUT_SUFFIXES = (".residual.jsonl", ".original.jsonl", ".audit.json")
_OUTPUT_TAGS = (".native.", ".original.native.")


def is_own_output(name: str) -> bool:
    """Whether a file name is one ``lam-ref compact``/``restore`` writes (:data:`OUTPUT_SUFFIXES`,
    ``<name>.native.<suffix>``).

    Examples:
        >>> is_own_output("task.residual.jsonl"), is_own_output("task.native.traj"), is_own_output("task.traj")
        (True, True, False)
    """
    low = name.lower()
    return low.endswith(OUTPUT_SUFFIXES) or any(tag in low and low.rsplit(tag, 1)[1] in
                                                ("traj", "traj.json", "json", "jsonl") for tag in _OUTPUT_TAGS)


def max_file_bytes() -> int:
    """:data:`MAX_FILE_BYTES`, or ``$LAM_REF_MAX_FILE_BYTES`` when set to a positive integer (the
    one limit of every input read, :func:`lam_ref._io.max_input_bytes`)."""
    return max_input_bytes()


#: File name patterns picked up when a directory is given, per format (``None``: auto-detect).
_DIR_PATTERNS: dict[str | None, tuple[str, ...]] = {
    None: ("*.traj", "*.traj.json", "*.jsonl", "locomo*.json"),
    "swe-agent": ("*.traj",),
    "mini-swe-agent": ("*.traj.json",),
    "locomo": ("*.json",),
    "jsonl": ("*.jsonl",),
}

class MalformedEvidenceWarning(UserWarning):
    """A LoCoMo evidence id that had to be repaired or dropped."""


@dataclass(frozen=True)
class LoadFailure:
    """A file (or path argument) that could not be loaded, and the error naming why."""

    exception: TrajectoryFormatError

    @property
    def path(self) -> str:
        return self.exception.path

    @property
    def error(self) -> str:
        return str(self.exception)

    def to_json(self) -> dict[str, str]:
        return {"path": self.path, "error": self.error}


# ----------------------------------------------------------------------------------------------
# reading


def _read_text(path: Path) -> str:
    """The file's text through the one input-opening path (:func:`lam_ref._io.read_input_text`:
    strict UTF-8, a leading BOM dropped, only a regular file, at most :func:`max_file_bytes`);
    an empty file is an error too."""
    try:
        text = read_input_text(path)
    except InputError as exc:
        raise TrajectoryFormatError(str(path), "$", exc.problem) from exc
    if not text.strip():
        raise TrajectoryFormatError(str(path), "$", "file is empty")
    return text


def _parse_json(path: Path, text: str, where: str = "$", *, one_line: bool = False) -> Any:
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        at = f"column {exc.colno}" if one_line else f"line {exc.lineno} column {exc.colno}"
        raise TrajectoryFormatError(str(path), where, f"invalid JSON at {at}: {exc.msg}") from exc
    except RecursionError as exc:
        raise TrajectoryFormatError(str(path), where, "invalid JSON: nested too deeply") from exc
    except ValueError as exc:  # parser limits: an integer of more than sys.get_int_max_str_digits() digits
        raise TrajectoryFormatError(str(path), where, f"JSON exceeds a parser limit: {exc}") from exc


def _type_name(value: Any) -> str:
    return {dict: "object", list: "array", str: "string", bool: "boolean", type(None): "null",
            int: "number", float: "number"}.get(type(value), type(value).__name__)


class _Ctx:
    """Helpers that raise errors naming the file and the JSON path."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def fail(self, where: str, problem: str) -> TrajectoryFormatError:
        return TrajectoryFormatError(str(self.path), where, problem)

    def obj(self, value: Any, where: str) -> dict[str, Any]:
        if not isinstance(value, dict):
            raise self.fail(where, f"expected an object, got {_type_name(value)}")
        return value

    def arr(self, value: Any, where: str) -> list[Any]:
        if not isinstance(value, list):
            raise self.fail(where, f"expected an array, got {_type_name(value)}")
        return value

    def text(self, value: Any, where: str, *, nullable: bool = True) -> str:
        """A record text: a string (``null`` → ``""`` when ``nullable``), valid Unicode."""
        if value is None and nullable:
            return ""
        if not isinstance(value, str):
            raise self.fail(where, f"expected a string{' or null' if nullable else ''}, got {_type_name(value)}")
        if not value.isascii():
            try:
                value.encode("utf-8")
            except UnicodeEncodeError as exc:
                raise self.fail(
                    where, f"string holds a lone surrogate \\u{ord(value[exc.start]):04x} at character {exc.start}"
                ) from exc
        return value

    def content(self, value: Any, where: str) -> str:
        """Chat content: a string, ``null``, or a list of parts whose ``text`` fields are joined by ``\\n``."""
        if value is None or isinstance(value, str):
            return self.text(value, where)
        if isinstance(value, list):
            parts = []
            for k, part in enumerate(value):
                w = f"{where}[{k}]"
                if isinstance(part, str):
                    parts.append(self.text(part, w))
                    continue
                part = self.obj(part, w)
                if "text" in part:
                    parts.append(self.text(part["text"], f"{w}.text"))
                elif part.get("type") not in (None, "text"):
                    continue  # images and other non-text parts carry no text
                else:
                    raise self.fail(w, "content part has no 'text' field")
            return "\n".join(parts)
        raise self.fail(where, f"expected a string, null or a list of content parts, got {_type_name(value)}")

    def role(self, msg: dict[str, Any], where: str) -> str:
        if "role" not in msg:
            raise self.fail(where, "missing key 'role'")
        role = msg["role"]
        if not isinstance(role, str) or not role:
            raise self.fail(f"{where}.role", f"expected a non-empty string, got {_type_name(role)} {role!r}")
        return role


def _src(path: Path, where: str) -> str:
    return f"{path}:{where}"


# ----------------------------------------------------------------------------------------------
# SWE-agent


def _swe_preamble(c: _Ctx, history: list[Any]) -> tuple[list[Record], int]:
    """History messages before the first assistant message that is not a demonstration
    (``is_demo``): system prompt, demonstrations, the issue."""
    out = []
    for j, msg in enumerate(history):
        where = f"$.history[{j}]"
        msg = c.obj(msg, where)
        role = c.role(msg, where)
        if role == "assistant" and msg.get("is_demo") is not True:
            return out, j
        out.append(Record(role, c.content(msg.get("content"), f"{where}.content"), 0, _src(c.path, f"{where}.content")))
    return out, len(history)


def _load_swe_agent(path: Path, data: Any, traj_id: str) -> list[Trajectory]:
    c = _Ctx(path)
    data = c.obj(data, "$")
    history = data.get("history")
    steps = data.get("trajectory")
    if steps is None and history is None:
        raise c.fail("$", "missing key 'trajectory' (and no 'history' to read steps from)")
    records: list[Record] = []
    start = 0
    if history is not None:
        history = c.arr(history, "$.history")
        pre, start = _swe_preamble(c, history)
        records.extend(pre)
    if steps is not None:
        steps = c.arr(steps, "$.trajectory")
        for i, step in enumerate(steps):
            where = f"$.trajectory[{i}]"
            step = c.obj(step, where)
            for key in ("thought", "action"):
                if step.get(key) is not None:
                    records.append(Record(key, c.text(step[key], f"{where}.{key}"), i, _src(path, f"{where}.{key}")))
            obs = c.text(step.get("observation"), f"{where}.observation")
            records.append(Record(OBSERVATION, obs, i, _src(path, f"{where}.observation")))
    else:
        turn = -1
        for j in range(start, len(history)):
            where = f"$.history[{j}]"
            msg = c.obj(history[j], where)
            role = c.role(msg, where)
            if role == "assistant":
                turn += 1
                emitted = False
                for key in ("thought", "action"):
                    if msg.get(key) is not None:
                        records.append(Record(key, c.text(msg[key], f"{where}.{key}"), turn, _src(path, f"{where}.{key}")))
                        emitted = True
                if not emitted:
                    text = c.content(msg.get("content"), f"{where}.content")
                    records.append(Record("assistant", text, turn, _src(path, f"{where}.content")))
            elif role == "tool" or (role == "user" and msg.get("message_type") == "observation"):
                text = c.content(msg.get("content"), f"{where}.content")
                records.append(Record(OBSERVATION, text, max(turn, 0), _src(path, f"{where}.content")))
            else:
                text = c.content(msg.get("content"), f"{where}.content")
                records.append(Record(role, text, max(turn, 0), _src(path, f"{where}.content")))
    return [Trajectory(traj_id, "swe-agent", str(path), tuple(records))]


# ----------------------------------------------------------------------------------------------
# mini-swe-agent


def _load_mini_swe_agent(path: Path, data: Any, traj_id: str) -> list[Trajectory]:
    c = _Ctx(path)
    data = c.obj(data, "$")
    if "messages" not in data:
        raise c.fail("$", "missing key 'messages'")
    messages = c.arr(data["messages"], "$.messages")
    records: list[Record] = []
    turn = -1
    for j, msg in enumerate(messages):
        where = f"$.messages[{j}]"
        msg = c.obj(msg, where)
        role = c.role(msg, where)
        text = c.content(msg.get("content"), f"{where}.content")
        src = _src(path, f"{where}.content")
        if role == "assistant":
            turn += 1
            records.append(Record("assistant", text, turn, src))
        elif turn >= 0 and role in ("user", "tool"):
            records.append(Record(OBSERVATION, text, turn, src))
        else:
            records.append(Record(role, text, max(turn, 0), src))
    meta = {}
    info = data.get("info")
    if isinstance(info, dict) and isinstance(info.get("exit_status"), str):
        meta["exit_status"] = info["exit_status"]
    return [Trajectory(traj_id, "mini-swe-agent", str(path), tuple(records), meta)]


# ----------------------------------------------------------------------------------------------
# LoCoMo

_EVIDENCE_STRICT = re.compile(r"D([1-9]\d*):([1-9]\d*)")
_EVIDENCE_LENIENT = re.compile(r"D\s*:?\s*(\d+)\s*:\s*(\d+)")
_SESSION = re.compile(r"session_(\d+)")


def parse_locomo_evidence(evidence: Any, known: dict[str, int]) -> tuple[list[int], list[str]]:
    """Record indices named by one LoCoMo evidence id, and the warnings it raised.

    A well-formed id is ``D<session>:<turn>`` naming an existing dialogue turn. Otherwise every
    ``D<s>:<t>`` found in the string (tolerating ``;``-joined lists, spaces, leading zeros and a
    stray ``:`` after ``D``) is read, kept if it names an existing turn, and a warning is returned;
    an id naming no turn is dropped with a warning.
    """
    if not isinstance(evidence, str):
        return [], [f"evidence id {evidence!r} is not a string; dropped"]
    if _EVIDENCE_STRICT.fullmatch(evidence) and evidence in known:
        return [known[evidence]], []
    found = [f"D{int(a)}:{int(b)}" for a, b in _EVIDENCE_LENIENT.findall(evidence)]
    if not found:
        return [], [f"evidence id {evidence!r} is malformed (no D<session>:<turn> in it); dropped"]
    idx, missing = [], []
    for ident in found:
        (idx if ident in known else missing).append(known.get(ident, ident))
    msgs = []
    if missing:
        msgs.append(f"evidence id {evidence!r} names no dialogue turn {', '.join(map(str, missing))}; dropped")
    if idx and (len(found) > 1 or found[0] != evidence):
        msgs.append(f"evidence id {evidence!r} is malformed; read as {', '.join(found[k] for k in range(len(found)) if found[k] in known)}")
    return [int(i) for i in idx], msgs


def _load_locomo(path: Path, data: Any, traj_id: str) -> list[Trajectory]:
    c = _Ctx(path)
    samples = c.arr(data, "$")
    if not samples:
        raise c.fail("$", "array is empty: no LoCoMo samples")
    out = []
    for s, sample in enumerate(samples):
        sw = f"$[{s}]"
        sample = c.obj(sample, sw)
        if "conversation" not in sample:
            raise c.fail(sw, "missing key 'conversation'")
        conv = c.obj(sample["conversation"], f"{sw}.conversation")
        sid = sample.get("sample_id", s)
        if not isinstance(sid, (str, int)) or isinstance(sid, bool):
            raise c.fail(f"{sw}.sample_id", f"expected a string or integer, got {_type_name(sid)}")
        sessions = []
        for key, value in conv.items():
            m = _SESSION.fullmatch(key)
            if m:
                sessions.append((int(m.group(1)), key, value))
        if not sessions:
            raise c.fail(f"{sw}.conversation", "no 'session_<n>' dialogue lists")
        sessions.sort()
        records: list[Record] = []
        known: dict[str, int] = {}
        dates = {}
        for _, key, turns in sessions:
            kw = f"{sw}.conversation.{key}"
            turns = c.arr(turns, kw)
            if isinstance(conv.get(f"{key}_date_time"), str):
                dates[key] = conv[f"{key}_date_time"]
            for k, turn in enumerate(turns):
                tw = f"{kw}[{k}]"
                turn = c.obj(turn, tw)
                for field_name in ("speaker", "dia_id", "text"):
                    if field_name not in turn:
                        raise c.fail(tw, f"missing key {field_name!r}")
                text = c.text(turn["text"], f"{tw}.text", nullable=False)
                speaker = c.text(turn["speaker"], f"{tw}.speaker", nullable=False)
                dia = c.text(turn["dia_id"], f"{tw}.dia_id", nullable=False)
                known.setdefault(dia.strip(), len(records))
                records.append(Record(OBSERVATION, text, len(records), _src(path, f"{tw}.text"), name=speaker))
        qa_items = []
        warns: list[str] = []
        qa = sample.get("qa", [])
        for q, item in enumerate(c.arr(qa, f"{sw}.qa")):
            qw = f"{sw}.qa[{q}]"
            item = c.obj(item, qw)
            if "question" not in item:
                raise c.fail(qw, "missing key 'question'")
            question = c.text(item["question"], f"{qw}.question", nullable=False)
            evidence = c.arr(item.get("evidence", []), f"{qw}.evidence")
            idx: list[int] = []
            for e, ev in enumerate(evidence):
                got, msgs = parse_locomo_evidence(ev, known)
                idx.extend(i for i in got if i not in idx)
                warns.extend(f"{path}:{qw}.evidence[{e}]: {m}" for m in msgs)
            answer = item.get("answer", item.get("adversarial_answer"))
            qa_items.append({
                "question": question,
                "answer": answer,
                "category": item.get("category"),
                "evidence": [str(x) for x in evidence],
                "evidence_records": idx,
            })
        for w in warns:
            warnings.warn(w, MalformedEvidenceWarning, stacklevel=3)
        meta = {"sample_id": sid, "qa": qa_items, "session_dates": dates}
        out.append(Trajectory(f"{traj_id}:{sid}", "locomo", str(path), tuple(records), meta, tuple(warns)))
    return out


# ----------------------------------------------------------------------------------------------
# generic JSONL


def _load_jsonl(path: Path, text: str, traj_id: str) -> list[Trajectory]:
    c = _Ctx(path)
    records: list[Record] = []
    turn = 0
    prev_obs = False
    for n, line in enumerate(text.split("\n"), start=1):
        if not line.strip():
            continue
        where = f"line {n} $"
        obj = c.obj(_parse_json(path, line, f"line {n}", one_line=True), where)
        role = c.role(obj, where)
        if "text" not in obj:
            raise c.fail(where, "missing key 'text'")
        body = c.text(obj["text"], f"{where}.text")
        if "turn" in obj and obj["turn"] is not None:
            t = obj["turn"]
            if isinstance(t, bool) or not isinstance(t, int) or not 0 <= t <= MAX_TURN:
                raise c.fail(f"{where}.turn", f"expected an integer in [0, {MAX_TURN}], got {_type_name(t)} {t!r}")
            if records and t < records[-1].turn:
                raise c.fail(f"{where}.turn", f"turn {t} is smaller than the previous record's turn {records[-1].turn}")
            turn = t
        elif prev_obs and role != OBSERVATION:
            turn += 1
        name = obj.get("name")
        if name is not None and not isinstance(name, str):
            raise c.fail(f"{where}.name", f"expected a string or null, got {_type_name(name)}")
        records.append(Record(role, body, turn, _src(path, f"line {n}"), name=name))
        prev_obs = role == OBSERVATION
    if not records:
        raise c.fail("$", "file is empty (no JSON lines)")
    return [Trajectory(traj_id, "jsonl", str(path), tuple(records))]


# ----------------------------------------------------------------------------------------------
# detection and iteration


def _sniff(data: Any) -> str | None:
    if isinstance(data, dict):
        if isinstance(data.get("trajectory"), list):
            return "swe-agent"
        if isinstance(data.get("messages"), list):
            return "mini-swe-agent"
        if isinstance(data.get("history"), list):
            return "swe-agent"
    if isinstance(data, list) and data and all(isinstance(x, dict) and "conversation" in x for x in data[:3]):
        return "locomo"
    return None


def _by_name(path: Path) -> str | None:
    name = path.name.lower()
    if name.endswith(".traj.json"):
        return "mini-swe-agent"
    if name.endswith(".traj"):
        return "swe-agent"
    if name.endswith(".jsonl"):
        return "jsonl"
    if name.startswith("locomo") and name.endswith(".json"):
        return "locomo"
    return None


def detect_format(path: str | Path) -> str:
    """The loader for ``path``: JSON content first (a ``trajectory`` list → swe-agent, ``messages`` →
    mini-swe-agent, a list of ``conversation`` samples → locomo), then the file name
    (``.traj``, ``.traj.json``, ``.jsonl``, ``locomo*.json``). Raises if neither decides."""
    p = Path(path)
    if p.name.lower().endswith(".jsonl"):
        return "jsonl"
    text = _read_text(p)
    try:
        data = json.loads(text)
    except (ValueError, RecursionError):  # JSONDecodeError, parser limits
        data = None
    fmt = _sniff(data) or _by_name(p)
    if fmt is None:
        raise TrajectoryFormatError(
            str(p), "$", f"cannot detect the trajectory format; pass --format (one of {', '.join(FORMATS)})"
        )
    return fmt


def _strip_suffix(name: str) -> str:
    for suf in (".traj.json", ".traj", ".jsonl", ".json"):
        if name.lower().endswith(suf):
            return name[: -len(suf)]
    return name


_LOADERS: dict[str, Callable[[Path, Any, str], list[Trajectory]]] = {
    "swe-agent": _load_swe_agent,
    "mini-swe-agent": _load_mini_swe_agent,
    "locomo": _load_locomo,
}


def load_file(path: str | Path, format: str | None = None, *, traj_id: str | None = None) -> list[Trajectory]:
    """All trajectories in one file (LoCoMo holds several), with the given or detected format.

    ``traj_id`` defaults to the file name without its suffix. Raises
    :class:`~lam_ref.text.records.TrajectoryFormatError` for any malformed input.
    """
    p = Path(path)
    if format is not None and format not in FORMATS:
        raise TrajectoryFormatError(str(p), "$", f"unknown format {format!r}; expected one of {', '.join(FORMATS)}")
    if not p.exists():
        raise TrajectoryFormatError(str(p), "$", "does not exist")
    if p.is_dir():
        raise TrajectoryFormatError(str(p), "$", "is a directory, expected a file")
    tid = traj_id if traj_id is not None else _strip_suffix(p.name)
    text = _read_text(p)
    fmt = format
    if fmt == "jsonl" or (fmt is None and p.name.lower().endswith(".jsonl")):
        return _load_jsonl(p, text, tid)
    data = _parse_json(p, text)
    if fmt is None:
        fmt = _sniff(data) or _by_name(p)
        if fmt is None:
            raise TrajectoryFormatError(
                str(p), "$", f"cannot detect the trajectory format; pass --format (one of {', '.join(FORMATS)})"
            )
        if fmt == "jsonl":
            return _load_jsonl(p, text, tid)
    return _LOADERS[fmt](p, data, tid)


def load_text(path: str | Path, text: str, format: str, *, traj_id: str) -> list[Trajectory]:
    """The trajectories the loader of ``format`` reads from ``text`` as if it were the file ``path``
    (a leading BOM dropped; LoCoMo evidence warnings not repeated): how a file about to be written
    will read back (:func:`lam_ref.text.native.write_native`)."""
    p = Path(path)
    text = text[1:] if text.startswith("\ufeff") else text
    if format == "jsonl":
        return _load_jsonl(p, text, traj_id)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", MalformedEvidenceWarning)
        return _LOADERS[format](p, _parse_json(p, text), traj_id)


def directory_ids(rel_paths: Sequence[str]) -> list[str]:
    """Readable, unique trajectory ids for the files found under one directory argument.

    Each id is the file's path relative to the directory without its suffix, then: the folders
    every file shares at the start are dropped (``tests/data/runs/a/x.traj`` and
    ``tests/data/runs/b/x.traj`` → ``a/x``, ``b/x``), and a file named like its own folder
    (``task-1/task-1.traj.json``, the mini-swe-agent layout) is named by the folder alone
    (``task-1``). Each step is taken only if the ids stay distinct.
    """
    ids = [_strip_suffix(r) for r in rel_paths]
    parts = [i.split("/") for i in ids]
    common = 0
    if parts:
        shortest = min(len(x) for x in parts)
        while common < shortest - 1 and len({x[common] for x in parts}) == 1:
            common += 1
    out = ["/".join(x[common:]) for x in parts]
    if len(set(out)) != len(out):
        out = list(ids)
    folded = ["/".join(x.split("/")[:-1]) if x.count("/") and x.split("/")[-1] == x.split("/")[-2] else x for x in out]
    if len(set(folded)) == len(folded):
        out = folded
    return out


def _scan_dir(root: Path, patterns: tuple[str, ...], skips: list[str]) -> list[Path]:
    """The trajectory files under ``root`` (recursively, hidden entries and symlinked folders not
    followed): regular files matching ``patterns``, not written by lam-ref itself
    (:func:`is_own_output`). Every entry passed over that a user could expect to be read (a folder
    that cannot be listed, a matching name that is a FIFO, a device, a broken or looping link, one
    of our own outputs) is described in ``skips``."""
    found: list[Path] = []

    def unreadable(exc: OSError) -> None:
        skips.append(f"{exc.filename}: folder skipped: cannot be listed ({exc.strerror or exc})")

    for here, dirs, names in os.walk(root, onerror=unreadable):
        base = Path(here)
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        for d in dirs:
            if (base / d).is_symlink():
                skips.append(f"{base / d}: folder skipped: a symbolic link (links to folders are not followed)")
        dirs[:] = [d for d in dirs if not (base / d).is_symlink()]
        for name in sorted(names):
            if name.startswith(".") or not any(fnmatch.fnmatch(name, pat) for pat in patterns):
                continue
            f = base / name
            if is_own_output(name):
                skips.append(f"{f}: skipped: a lam-ref output file (never read back as input)")
                continue
            try:
                st = os.stat(f)
            except OSError as exc:
                skips.append(f"{f}: skipped: {exc.strerror or exc}" + (" (a broken or looping link)" if f.is_symlink() else ""))
                continue
            if not stat.S_ISREG(st.st_mode):
                if not stat.S_ISDIR(st.st_mode):
                    skips.append(f"{f}: skipped: {file_kind(st.st_mode)}; only regular files are read")
                continue
            found.append(f)
    return sorted(set(found))


def iter_trajectory_files(
    paths: Sequence[str | Path] | str | Path, format: str | None = None, *, skips: list[str] | None = None
) -> Iterator[tuple[Path, str] | LoadFailure]:
    """Expand path arguments into ``(file, trajectory id prefix)`` pairs, in order.

    A directory is searched recursively (hidden entries and symlinked folders skipped, sorted) for
    the name patterns of ``format`` (auto: ``*.traj``, ``*.traj.json``, ``*.jsonl``,
    ``locomo*.json``), leaving out the files lam-ref writes (:func:`is_own_output`) and anything
    but regular files; ids are paths relative to the directory without the suffix, shortened by
    :func:`directory_ids`. Each entry passed over is described in ``skips`` (when given). A missing
    path or a directory without trajectory files yields a :class:`LoadFailure`.
    """
    if isinstance(paths, (str, Path)):
        paths = [paths]
    patterns = _DIR_PATTERNS.get(format, _DIR_PATTERNS[None])
    skips = [] if skips is None else skips
    for arg in paths:
        p = Path(arg)
        if not p.exists():
            yield LoadFailure(TrajectoryFormatError(str(p), "$", "does not exist"))
        elif p.is_dir():
            files = _scan_dir(p, patterns, skips)
            if not files:
                msg = f"directory holds no trajectory files ({', '.join(patterns)})"
                yield LoadFailure(TrajectoryFormatError(str(p), "$", msg))
            yield from zip(files, directory_ids([f.relative_to(p).as_posix() for f in files]))
        else:
            yield p, _strip_suffix(p.name)


def iter_trajectories(
    paths: Sequence[str | Path] | str | Path, format: str | None = None
) -> Iterator[Trajectory | LoadFailure]:
    """Stream trajectories from files and directories one file at a time (never the whole corpus).

    Files that fail to load are yielded as :class:`LoadFailure` (the error names the file, the JSON
    path and the problem) and the iteration goes on with the next file.
    """
    for item in iter_trajectory_files(paths, format):
        if isinstance(item, LoadFailure):
            yield item
            continue
        f, tid = item
        try:
            trajs = load_file(f, format, traj_id=tid)
        except TrajectoryFormatError as exc:
            yield LoadFailure(exc)
            continue
        yield from trajs


def load_all(paths: Iterable[str | Path], format: str | None = None) -> list[Trajectory]:
    """Every trajectory of ``paths``; raises the first failure's error (for tests and small inputs)."""
    out = []
    for item in iter_trajectories(list(paths), format):
        if isinstance(item, LoadFailure):
            raise item.exception
        out.append(item)
    return out


def shared_data_dir() -> Path | None:
    """The shared SWE-agent trajectories, ``../shared/data/swe-agent-trajectories`` next to the
    repository (or ``$LAM_SHARED_DATA``), when present: the demo, ``lam-ref bench`` and the tests
    that need real trajectories (they skip without them) read them in place."""
    env = os.environ.get("LAM_SHARED_DATA")
    cands = [Path(env)] if env else []
    cands.append(Path(__file__).resolve().parents[2].parent / "shared" / "data" / "swe-agent-trajectories")
    cands.append(Path.cwd().parent / "shared" / "data" / "swe-agent-trajectories")
    for c in cands:
        if c.is_dir():
            return c
    return None
