"""Residual trajectories in the input's own format (``lam-ref compact --residual-format native``).

Every record the loaders make names where its text stands in the input (``Record.source`` =
``"<file>:<JSON path>"``, or ``"<file>:line N"`` for JSONL; SPEC §1). The native residual is the
input file with each observation's text replaced by its residual text **at every place the file
holds it** (SPEC §8.3), so it is what the agent would read next:

* the record's own place (``trajectory[i].observation``, ``messages[j].content``, a LoCoMo turn's
  ``text``, a JSONL line's ``text``);
* for SWE-agent 0.x/1.x files with a ``trajectory``, the copies the agent sends to the model: the
  message of ``history`` that carries step ``i``'s output, and that message in every
  ``trajectory[k].messages`` (1.x), where the observation stands inside the agent's template
  (``OBSERVATION:\\n…``, ``…\\n(Open file: …)``), which is kept around the residual text.

The file is rewritten by splicing: only the JSON string literals that change are re-encoded (in
the input's escaping), every other byte is the input's. ``lam-ref restore`` runs the same
rewrite backwards (residual texts → originals), which gives the input file back byte for byte;
:func:`write_native` checks that before it writes (the loader reads the residual's records from
the new file, and rewriting it back gives the input's bytes, or at least its records), and
refuses a trajectory whose copies disagree with its records (a ``history`` copy that does not
hold ``trajectory[i].observation``) in one line naming the file and the record: never a residual
that restores to something else.

A LoCoMo file holds several conversations; each residual file holds the one conversation it was
made from (a one-element sample list: the input's bytes of that sample between ``[`` and ``]``).
A chat content that is a list of several text parts (joined by ``\\n`` when loaded) is written as
one string: its records restore exactly, its bytes do not (:attr:`NativeText.identical`).

:func:`native_records` reads such a file back as residual records for
:meth:`~lam_ref.text.audit.AuditStore.restore_records` (``lam-ref restore --residual-format
native``): the records the loader reads, each ``source`` mapped back to the place in the input
file it was compacted from.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .._io import atomic_write_text
from ..geometry import LamValueError
from .records import OBSERVATION, Trajectory

__all__ = ["NATIVE_FIGURES", "NativeText", "as_written", "checked_native", "figures", "json_value_spans", "native_records", "native_suffix", "parse_json_path",
           "render_native", "source_file", "write_native"]

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


_SOURCE = re.compile(r":(?:\$|line \d+\Z)")


def source_file(source: str) -> str | None:
    """The file part of a record's ``source`` (``"<file>:<JSON path>"`` or ``"<file>:line N"``).

    Examples:
        >>> source_file("runs/a:b.traj:$.trajectory[0].observation"), source_file("x.jsonl:line 3")
        ('runs/a:b.traj', 'x.jsonl')
    """
    found = [m.start() for m in _SOURCE.finditer(source)]
    return source[: found[-1]] if found else None


def _split_source(source: str, path: str) -> str:
    prefix = f"{path}:"
    if not source.startswith(prefix):
        raise LamValueError(f"record source {source!r} does not name the file {path!r}")
    return source[len(prefix):]


# ---- where each JSON value stands in the text --------------------------------------------------

_WS = re.compile(r"[ \t\n\r]*")
_STRING = re.compile(r'"(?:[^"\\]|\\.)*"', re.S)
_NUMBER = re.compile(r"-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?|-?Infinity|NaN")
_WORDS = ("true", "false", "null")
Key = tuple[str | int, ...]


def json_value_spans(text: str, start: int = 0) -> tuple[dict[Key, tuple[int, int]], int]:
    """The ``[start, end)`` character span of every value of the JSON document at ``text[start:]``,
    by key path (``()`` the whole document), and where the document ends. The text must be JSON
    that :func:`json.loads` reads (the loader read it first); a duplicate key keeps its last value
    (as :func:`json.loads` does)."""
    spans: dict[Key, tuple[int, int]] = {}

    def ws(pos: int) -> int:
        return _WS.match(text, pos).end()  # type: ignore[union-attr]

    def value(pos: int, key: Key) -> int:
        pos = ws(pos)
        ch = text[pos:pos + 1]
        if ch == '"':
            m = _STRING.match(text, pos)
            if m is None:
                raise LamValueError(f"unterminated JSON string at character {pos}")
            end = m.end()
        elif ch == "{":
            end = ws(pos + 1)
            if text[end] == "}":
                end += 1
            else:
                while True:
                    m = _STRING.match(text, ws(end))
                    if m is None:
                        raise LamValueError(f"JSON object key expected at character {end}")
                    name = json.loads(m.group())
                    end = ws(m.end())
                    if text[end] != ":":
                        raise LamValueError(f"':' expected at character {end}")
                    end = ws(value(end + 1, (*key, name)))
                    if text[end] == "}":
                        end += 1
                        break
                    if text[end] != ",":
                        raise LamValueError(f"',' or '}}' expected at character {end}")
                    end += 1
        elif ch == "[":
            end = ws(pos + 1)
            if text[end] == "]":
                end += 1
            else:
                k = 0
                while True:
                    end = ws(value(end, (*key, k)))
                    k += 1
                    if text[end] == "]":
                        end += 1
                        break
                    if text[end] != ",":
                        raise LamValueError(f"',' or ']' expected at character {end}")
                    end += 1
        else:
            word = next((w for w in _WORDS if text.startswith(w, pos)), None)
            if word is not None:
                end = pos + len(word)
            else:
                m = _NUMBER.match(text, pos)
                if m is None:
                    raise LamValueError(f"JSON value expected at character {pos}")
                end = m.end()
        spans[key] = (pos, end)
        return end

    end = value(start, ())
    return spans, ws(end)


# ---- the copies of an observation -------------------------------------------------------------


def _get(data: Any, keys: Sequence[str | int]) -> Any:
    node = data
    for k in keys:
        node = node[k]
    return node


def _observation_slots(messages: list[Any], steps: list[Any]) -> dict[int, list[int]]:
    """Which messages of a message list carry each step's output: per step ``i``, the
    ``user``/``tool`` messages after the assistant message of that step. Assistant messages that
    are not demonstrations are matched to the steps in order, by their ``action`` where both have
    one: a step the list does not hold (SWE-agent 0.x keeps a rejected edit in ``trajectory`` but
    not in ``history``) gets no slot."""
    turns: list[tuple[Any, list[int]]] = []
    for j, msg in enumerate(messages):
        if not isinstance(msg, dict) or msg.get("is_demo") is True:
            continue
        role = msg.get("role")
        if role == "assistant":
            turns.append((msg.get("action"), []))
        elif turns and role in ("user", "tool"):
            turns[-1][1].append(j)
    out: dict[int, list[int]] = {}
    a = 0
    for i, step in enumerate(steps):
        if a >= len(turns):
            break
        action = step.get("action") if isinstance(step, dict) else None
        if isinstance(action, str) and isinstance(turns[a][0], str) and action != turns[a][0]:
            continue
        out[i] = turns[a][1]
        a += 1
    return out


def _text_places(value: Any, keys: list[str | int]) -> list[tuple[list[str | int], str]]:
    """The strings of a chat ``content`` value (a string, or the ``text`` of its parts)."""
    if isinstance(value, str):
        return [(keys, value)]
    out = []
    if isinstance(value, list):
        for k, part in enumerate(value):
            if isinstance(part, str):
                out.append(([*keys, k], part))
            elif isinstance(part, dict) and isinstance(part.get("text"), str):
                out.append(([*keys, k, "text"], part["text"]))
    return out


Lists = list[tuple[list[str | int], list[Any], dict[int, list[int]], str | None]]


def _message_lists(data: Any) -> Lists:
    """``history`` and every ``trajectory[k].messages``: ``(place, messages, slots per step, lead)``,
    where ``lead`` is the text the agent's template puts before an observation in that list
    (``"OBSERVATION:\\n"``, ``""``), read off the step with the longest observation that its copy
    holds once (``None``: none does)."""
    steps = data.get("trajectory") or []
    lists: list[tuple[list[str | int], Any]] = [(["history"], data.get("history"))]
    lists += [(["trajectory", k, "messages"], s.get("messages")) for k, s in enumerate(steps) if isinstance(s, dict)]
    out: Lists = []
    for base, msgs in lists:
        if not isinstance(msgs, list):
            continue
        slots = _observation_slots(msgs, steps)
        lead, best = None, 0
        for i, slot in slots.items():
            obs = steps[i].get("observation") if isinstance(steps[i], dict) else None
            if not isinstance(obs, str) or len(obs) <= best or len(slot) != 1 or not isinstance(msgs[slot[0]], dict):
                continue
            content = msgs[slot[0]].get("content")
            if isinstance(content, str) and content.count(obs) == 1:
                lead, best = content[: content.find(obs)], len(obs)
        out.append((base, msgs, slots, lead))
    return out


def _swe_copies(lists: Lists, step: int, text: str, where: str) -> list[tuple[list[str | int], int]]:
    """``(string place, offset of the observation in it)`` of every copy of step ``step``'s
    observation ``text``: in ``history`` (the agent's history, which must hold it: a copy there
    that does not is refused, the file's copies disagree; ``where`` names the record) and in every
    ``trajectory[k].messages`` (what the model was shown at step ``k``, after the agent's history
    processors: a copy they elided, ``Old environment output: (7 lines omitted)``, is left as it is)."""
    out = []
    for base, messages, slots, lead in lists:
        slot = slots.get(step)
        if not slot:
            continue  # this list does not hold the step's output (its last step, a 1.x prefix, a rejected edit)
        found = []
        for j in slot:
            for keys, s in _text_places(messages[j].get("content") if isinstance(messages[j], dict) else None,
                                        [*base, j, "content"]):
                at = _offset(s, text, lead)
                if at >= 0:
                    found.append((keys, at))
        if not found and text and base == ["history"]:
            raise LamValueError(f"{where}: its copy at $.history[{slot[0]}].content does not hold the "
                                "observation's text (the file's copies of it disagree); no native residual is "
                                "written for it (--residual-format jsonl still works)")
        out.extend(found)
    return out


def _offset(copy: str, text: str, lead: str | None) -> int:
    """Where ``text`` stands in ``copy`` (-1: nowhere): right after the list's template ``lead``
    when it stands there, else its first occurrence. The backward rewrite locates the residual text
    by the same rule (the lead is read off the file being rewritten); the round trip check refuses
    a file where the two would differ."""
    if lead is not None and copy.startswith(lead) and copy.startswith(text, len(lead)):
        return len(lead)
    return copy.find(text)


def _path_text(keys: Sequence[str | int]) -> str:
    return "$" + "".join(f"[{k}]" if isinstance(k, int) else f".{k}" for k in keys)


# ---- rendering ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class NativeText:
    """One trajectory's file in its own format, before and after its record texts were replaced
    (:func:`render_native`)."""

    #: The trajectory's file as read (for LoCoMo: its conversation as a one-sample file).
    before: str
    #: The same file with the new texts at every place it holds them.
    after: str
    #: Whether rewriting ``after`` back gives ``before`` byte for byte (else only the records).
    identical: bool = True


def _literal(new: str, old_literal: str, old: str, default_ascii: bool) -> str:
    """``new`` as a JSON string literal in the escaping ``old_literal`` used for ``old``."""
    a, u = json.dumps(old), json.dumps(old, ensure_ascii=False)
    ascii_ = True if old_literal == a != u else False if old_literal == u != a else default_ascii
    return json.dumps(new, ensure_ascii=ascii_)


def _splice(text: str, base: int, spans: dict[Key, tuple[int, int]], edits: dict[Key, tuple[Any, str]],
            default_ascii: bool) -> str:
    """``text`` with the value at each edited key replaced: ``edits[key] = (old value, new string)``."""
    parts, pos = [], base
    for key, (s, e) in sorted(((k, spans[k]) for k in edits), key=lambda kv: kv[1][0]):
        if s < pos:
            raise LamValueError(f"two rewrites overlap at {_path_text(key)}")
        old, new = edits[key]
        lit = text[s:e]
        parts += [text[pos:s], _literal(new, lit, old, default_ascii) if isinstance(old, str) else json.dumps(
            new, ensure_ascii=default_ascii)]
        pos = e
    return "".join(parts) + text[pos:]


def _edits_for(data: Any, fmt: str, changed: list[tuple[int, list[str | int], str, str]],
               where: dict[int, str]) -> tuple[dict[Key, tuple[Any, str]], bool]:
    """The string places to rewrite, ``{key: (old value, new string)}``, for the records
    ``(index, keys of its place, old text, new text)`` (a record whose text stays is only checked:
    its copies must agree with it); and whether the rewrite can be undone byte for byte (False
    where a several-part content became one string)."""
    edits: dict[Key, tuple[Any, str]] = {}
    identical = True
    swe = fmt == "swe-agent" and isinstance(data, dict) and isinstance(data.get("trajectory"), list)
    lists = _message_lists(data) if swe else []

    def put(keys: Sequence[str | int], old: Any, new: str, rec: int) -> None:
        key = tuple(keys)
        if key in edits and edits[key][1] != new:
            raise LamValueError(f"{where[rec]}: its place {_path_text(key)} also holds another record's text")
        edits[key] = (old, new)

    for rec, keys, old, new in changed:
        is_step = swe and len(keys) == 3 and keys[0] == "trajectory" and keys[2] == "observation"
        if old == new:
            if is_step:
                _swe_copies(lists, int(keys[1]), old, where[rec])
            continue
        try:
            value = _get(data, keys)
        except (KeyError, IndexError, TypeError) as exc:
            raise LamValueError(f"{where[rec]}: not found in the input file") from exc
        places = _text_places(value, list(keys))
        if isinstance(value, str) or len(places) == 1 and _joined(value) == places[0][1]:
            put(places[0][0], places[0][1], new, rec)
        else:  # several text parts (joined by "\n" when loaded): one string holds the residual
            put(keys, value, new, rec)
            identical = False
        if is_step:
            for ckeys, at in _swe_copies(lists, int(keys[1]), old, where[rec]):
                ckey = tuple(ckeys)
                if ckey in edits:
                    raise LamValueError(f"{where[rec]}: its copy {_path_text(ckey)} also holds another step's output")
                orig = _get(data, ckeys)
                edits[ckey] = (orig, orig[:at] + new + orig[at + len(old):])
    return edits, identical


def _joined(value: Any) -> str:
    return "\n".join(s for _, s in _text_places(value, []))


def _render_json(raw: str, fmt: str, changed: list[tuple[int, list[str | int], str, str]], where: dict[int, str],
                 sample: int | None) -> NativeText:
    data = json.loads(raw)
    default_ascii = raw.isascii()
    spans, _ = json_value_spans(raw)
    if sample is None:
        edits, identical = _edits_for(data, fmt, changed, where)
        return NativeText(raw, _splice(raw, 0, spans, edits, default_ascii), identical)
    s, e = spans[(sample,)]
    edits, identical = _edits_for(data[sample], fmt, changed, where)
    inner = {k[1:]: v for k, v in spans.items() if k[:1] == (sample,)}
    body = _splice(raw[:e], s, inner, edits, default_ascii)
    return NativeText("[" + raw[s:e] + "]\n", "[" + body + "]\n", identical)


def _render_jsonl(raw: str, changed: list[tuple[int, list[str | int], str, str]], where: dict[int, str]) -> NativeText:
    lines = raw.split("\n")
    for rec, keys, old, new in changed:
        n = int(keys[0]) - 1
        line = lines[n]
        start = _WS.match(line).end()  # type: ignore[union-attr]
        spans, _ = json_value_spans(line, start)
        if ("text",) not in spans:
            raise LamValueError(f"{where[rec]}: no 'text' on the line")
        lines[n] = _splice(line, 0, spans, {("text",): (old, new)}, line.isascii())
    return NativeText(raw, "\n".join(lines))


def render_native(traj: Trajectory, texts: Sequence[str], raw: str | None = None) -> NativeText:
    """``traj``'s file (``raw``, else re-read from ``traj.path``) with every record text that
    differs from ``texts`` replaced at each place the file holds it (module docstring).

    Raises:
        LamValueError: a record's place is not found, the file's copies of an observation disagree
            (one line naming the file and the record), or the file changed since it was loaded.
    """
    if len(texts) != len(traj.records):
        raise LamValueError(f"residual_texts has {len(texts)} entries for {len(traj.records)} records")
    if raw is None:
        try:
            raw = Path(traj.path).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise LamValueError(f"{traj.path}: cannot be re-read to write the file in its own format: {exc}") from exc
    bom = "\ufeff" if raw.startswith("\ufeff") else ""
    raw = raw[len(bom):]
    changed: list[tuple[int, list[str | int], str, str]] = []
    where: dict[int, str] = {}
    sample: int | None = None
    for i, (rec, text) in enumerate(zip(traj.records, texts)):
        if rec.role != OBSERVATION or text == rec.text and traj.format != "swe-agent":
            continue
        place = _split_source(rec.source, traj.path)
        where[i] = f"{traj.path}: record {i} ({place})"
        if traj.format == "jsonl":
            m = re.fullmatch(r"line (\d+)", place)
            if not m:
                raise LamValueError(f"{rec.source}: not a JSONL line reference")
            changed.append((i, [int(m.group(1))], rec.text, text))
            continue
        keys = parse_json_path(place)
        if traj.format == "locomo":
            if sample is not None and keys[0] != sample:
                raise LamValueError(f"{rec.source}: outside the conversation $[{sample}]")
            sample = int(keys[0])
            keys = keys[1:]
        changed.append((i, keys, rec.text, text))
    if traj.format == "locomo" and sample is None:
        first = _split_source(traj.records[0].source, traj.path) if traj.records else "$[0]"
        sample = int(parse_json_path(first)[0])
    try:
        if traj.format == "jsonl":
            out = _render_jsonl(raw, changed, where)
        else:
            out = _render_json(raw, traj.format, changed, where, sample)
    except (ValueError, RecursionError) as exc:
        if isinstance(exc, LamValueError):
            raise
        raise LamValueError(f"{traj.path}: changed since it was loaded ({exc})") from exc
    return NativeText(bom + out.before, bom + out.after, out.identical)


def _reread(traj: Trajectory, text: str) -> Trajectory:
    """The trajectory the loader of ``traj.format`` reads from ``text`` (as if at ``traj.path``)."""
    from .loaders import load_text

    found = load_text(traj.path, text, traj.format, traj_id=traj.id)
    return found[0]


def write_native(base: str | Path, traj: Trajectory, residual_texts: Sequence[str], *, tag: str = ".native") -> Path:
    """Write ``traj``'s residual in its input format to ``base`` + ``tag`` + the format's suffix.

    Before writing it checks, in memory, what ``lam-ref restore`` will do with the file: the
    loader reads ``residual_texts`` from it, and rewriting it back to the records' texts gives the
    file as read (byte for byte where :attr:`NativeText.identical`, else the same records).

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
        LamValueError: the input file changed since it was loaded, a record's place is not found,
            the file's copies of an observation disagree, or the check above fails.
    """
    native = checked_native(traj, residual_texts)
    out = Path(str(base) + tag + native_suffix(traj.path, traj.format))
    atomic_write_text(out, native.after)
    return out


def checked_native(traj: Trajectory, texts: Sequence[str]) -> NativeText:
    """:func:`render_native`, checked as :func:`write_native` says (refused in one line naming the
    file and the first record that would not come back)."""
    native = render_native(traj, texts)
    one = traj.format == "locomo"
    try:
        got = _reread(traj, native.after)
        before = _reread(traj, native.before) if one else traj
    except ValueError as exc:
        raise LamValueError(f"{traj.path}: its native residual would not be readable by its loader: {exc}") from exc
    bad = _first_difference(got, before, texts)
    if bad is not None:
        raise LamValueError(f"{traj.path}: record {bad}: the native residual would not read back as the residual "
                            "(no native residual is written for it)")
    back_traj = Trajectory(traj.id, traj.format, traj.path, tuple(got.records), traj.meta, traj.warnings)
    back = render_native(back_traj, [r.text for r in before.records], raw=native.after)
    identical = back.after == native.before
    if not identical:
        again = _reread(traj, back.after)
        bad = _first_difference(again, before, [r.text for r in before.records])
        if bad is not None:
            raise LamValueError(f"{traj.path}: record {bad}: the native residual would not restore to the "
                                "input (no native residual is written for it)")
    return NativeText(native.before, native.after, identical and native.identical)


#: The figures :func:`as_written` gives (the JSON report's ``as_written`` of each trajectory).
NATIVE_FIGURES = ("bytes_input", "bytes_residual", "tokens_input", "tokens_residual", "removal_bytes", "removal_tokens")


def as_written(before: str, after: str) -> dict[str, Any]:
    """The removal measured on the native residual as written (SPEC §8.3): bytes (UTF-8) and
    cl100k tokens of the whole file (every copy of every observation, the JSON around them)
    before and after, and ``1 - after/before`` of each (``None`` for an empty file). ``before``
    is the trajectory's file as restore gives it back (the input file; for LoCoMo its one
    conversation)."""
    from .chunking import get_tokenizer

    tok = get_tokenizer()
    b0, b1 = len(before.encode("utf-8")), len(after.encode("utf-8"))
    t0, t1 = tok.count(before), tok.count(after)
    return figures(b0, b1, t0, t1)


def figures(bytes_input: int, bytes_residual: int, tokens_input: int, tokens_residual: int) -> dict[str, Any]:
    """:data:`NATIVE_FIGURES` from the four counts (``1 - after/before``; ``None`` for an empty file)."""
    return {"bytes_input": bytes_input, "bytes_residual": bytes_residual, "tokens_input": tokens_input,
            "tokens_residual": tokens_residual,
            "removal_bytes": None if not bytes_input else 1.0 - bytes_residual / bytes_input,
            "removal_tokens": None if not tokens_input else 1.0 - tokens_residual / tokens_input}


def _first_difference(got: Trajectory, want: Trajectory, texts: Sequence[str]) -> int | None:
    """The first record of ``got`` whose text is not ``texts``' or whose other fields differ from
    ``want``'s (``None``: none)."""
    if len(got.records) != len(want.records):
        return min(len(got.records), len(want.records))
    for i, (g, w, t) in enumerate(zip(got.records, want.records, texts)):
        if g.text != t or (g.role, g.turn, g.source, g.name) != (w.role, w.turn, w.source, w.name):
            return i
    return None


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
