"""Reading the vector files and running them against an implementation (``docs/vectors.md``).

Each ``op`` maps onto the SPEC §15 calls of :class:`~lam_ref.conformance.impl.Implementation`,
so a Python module and an ``exec:`` server are fed the same way (the exec protocol's
``substitute``, ``session_open``/``session_admit``, ``dedup_lines``, ``codec_encode`` and
``codec_decode`` requests carry each vector's input):

| op | calls | checked |
|---|---|---|
| ``substitute`` | ``substitute(E, t)`` | π equals ``expected.pi`` |
| ``session`` | ``OnlineSession(t)``, then ``admit(turn)`` per turn | each turn's π, or its refusal |
| ``sessions`` | named sessions opened, fed and closed in ``steps`` order (exec: ``session_close``) | each admit's π |
| ``dedup_lines`` | ``dedup_lines(records)`` | kept lines and stub positions (``l0``), or exact text (``l0-stubs``) |
| ``codec_roundtrip`` | ``codec_decode(codec_encode(x, eb))`` | length and the file's ``tolerance`` |
| ``codec_truncated`` | ``codec_decode`` of a cut ``codec_encode(x, eb)`` | refused |
| ``codec_encode`` | ``codec_encode(x, eb)`` | exactly ``expected.data`` |
| ``codec_decode`` | ``codec_decode(data)`` | exactly ``expected.x`` (float32 bits) |
| ``session_load`` | ``session_load(path, t)`` of the file's bytes, then ``admit(turn)`` per turn | each turn's π; a bad file refused |

A refusal is a ``ValueError`` (an exec server's ``"type": "ValueError"`` reply); any other
exception is a failure.
"""

from __future__ import annotations

import functools
import json
import os
import tempfile
from pathlib import Path
from typing import Any

import numpy as np

from ...geometry import LamValueError
from .format import (
    VectorFormatError,
    decode_array,
    decode_bytes,
    decode_embeddings,
    decode_ints,
    decode_scalar,
)

__all__ = [
    "DEFAULT_PROFILES",
    "PROFILES",
    "PROFILE_CHECKS",
    "VectorFailure",
    "declared_profiles",
    "load_vectors",
    "run_vector",
    "run_vectors",
    "vector_path",
]

HERE = Path(__file__).resolve().parent
#: The vector files' JSON Schema, one of the project's schemas (:mod:`lam_ref.schemas`).
SCHEMA_NAME = "lam_ref.conformance.vectors"
SCHEMA_PATH = Path(__file__).resolve().parent.parent.parent / "schemas" / f"{SCHEMA_NAME}.schema.json"
#: The profiles of issue 21 §2, one vector file each.
PROFILES = ("core", "online", "l0", "l0-stubs", "codec-bound", "codec-v1", "codec-v2", "session-v1")
#: The SPEC §15 part each profile needs (``session``: ``session_save`` / ``session_load``).
PROFILE_PARTS = {"core": "substitute", "online": "online", "l0": "lines", "l0-stubs": "lines",
                 "codec-bound": "codec", "codec-v1": "codec", "codec-v2": "codec", "session-v1": "session"}
#: What an implementation that declares no ``PROFILES`` is held to: the parts it provides.
DEFAULT_PROFILES = {"substitute": "core", "online": "online", "lines": "l0", "codec": "codec-bound"}
#: Flags of the vectors the default (not thorough) conformance run leaves out: 65,537-row inputs,
#: linear for a greedy over the retained set but quadratic for an all-pairs kernel.
THOROUGH_ONLY = ("LargeIds", "Ids2To24")
#: Flags of the vectors that run only on request (``--huge``; an implementation's own harness runs them
#: all): 2²⁴ + 3 rows, a second natively but about a minute through lam_ref's Python sessions.
HUGE_ONLY = ("Ids2To24",)
#: Check id, claim and spec item of each profile's check (:mod:`lam_ref.conformance.checks.vectors`).
PROFILE_CHECKS = {
    "core": ("DEF1", "§2/§5 the core vectors: π of Algorithm 2 and input validation"),
    "online": ("ONLINE", "§6 the online vectors: turns, rejected turns, dimensions"),
    "l0": ("L0", "§7 the L0 vectors: kept lines and stub positions"),
    "l0-stubs": ("L0", "§7/§8.1 the L0 vectors with lam_ref's exact stub text"),
    "codec-bound": ("L2", "§9 the codec vectors: error bound and refusals, any format"),
    "codec-v1": ("L2", "§9 the codec vectors: format version 1, byte for byte"),
    "codec-v2": ("L2", "§9.6 the codec vectors: format version 2 decoded bit for bit, its refusals"),
    "session-v1": ("ONLINE", "§6.3 the session save files: restore and refusals"),
}


class VectorFailure(AssertionError):
    """A vector the implementation got wrong: names the file, the vector id, its flags and why."""

    def __init__(self, profile: str, vector: dict[str, Any], why: str) -> None:
        self.profile = profile
        self.vector_id = vector.get("id")
        self.flags = tuple(vector.get("flags", ()))
        self.comment = vector.get("comment", "")
        super().__init__(f"{profile}.json vector {self.vector_id} [{', '.join(self.flags)}] ({self.comment}; "
                         f"{vector.get('spec')}): {why}")


# ------------------------------------------------------------------------------------------------
# files
# ------------------------------------------------------------------------------------------------
def vector_path(profile: str) -> Path:
    """The packaged file of ``profile``; an unknown name is a one-line error naming it."""
    if profile not in PROFILES:
        raise LamValueError(f"unknown vector profile {profile!r} (known: {', '.join(PROFILES)})")
    return HERE / f"{profile}.json"


def validate_document(doc: Any, where: str = "vector file") -> None:
    """Raise :class:`LamValueError` naming ``where`` and the first schema violation of ``doc``
    (the project's one schema mechanism, :func:`lam_ref.schemas.errors`): one line, and when the
    violation is inside a vector, the vector's ``id`` (issue 38, "Bad input")."""
    import re

    from ... import schemas

    errs = schemas.errors(doc, SCHEMA_NAME)
    if not errs:
        return
    more = f" (and {len(errs) - 1} more)" if len(errs) > 1 else ""
    m = re.match(r"vectors\[(\d+)\]", errs[0])
    vectors = doc.get("vectors") if isinstance(doc, dict) else None
    if m and isinstance(vectors, list) and int(m.group(1)) < len(vectors):
        vec = vectors[int(m.group(1))]
        vid = vec.get("id") if isinstance(vec, dict) else None
        raise schemas.SchemaError(f"{where}: vector {vid!r} (vectors[{m.group(1)}]) breaks the schema: {errs[0]}{more}")
    raise schemas.SchemaError(f"{where}: {errs[0]}{more}")


def _unknown_flags(doc: dict[str, Any], where: str) -> None:
    """Refuse, in one line naming the file and the vector id, a flag the file's ``notes`` do not
    explain (every flag is a documented bug class, as Wycheproof's)."""
    for v in doc["vectors"]:
        unknown = [f for f in v["flags"] if f not in doc["notes"]]
        if unknown:
            raise LamValueError(f"{where}: vector {v['id']} names unknown flag(s) {unknown} (not explained in the file's notes)")


@functools.lru_cache(maxsize=16)
def _load_cached(path: str, mtime_ns: int) -> dict[str, Any]:
    p = Path(path)
    try:
        doc = json.loads(p.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise LamValueError(f"vector file {path!r} is not readable JSON: {exc}") from exc
    validate_document(doc, f"vector file {path!r}")
    ids = [v["id"] for v in doc["vectors"]]
    if len(set(ids)) != len(ids):
        raise LamValueError(f"vector file {path!r}: vector ids are not unique")
    if doc["number_of_vectors"] != len(ids):
        raise LamValueError(f"vector file {path!r}: number_of_vectors {doc['number_of_vectors']} but {len(ids)} vectors")
    _unknown_flags(doc, f"vector file {path!r}")
    return doc


def load_vectors(profile_or_path: str | Path) -> dict[str, Any]:
    """A vector document: a profile name (the packaged file) or the path of a ``.json`` file.

    Raises :class:`LamValueError` (one line naming the profile or file) for an unknown profile,
    a missing or unreadable file, invalid JSON or a document that breaks its schema (``lam_ref/schemas/lam_ref.conformance.vectors.schema.json``).
    """
    name = str(profile_or_path)
    if isinstance(profile_or_path, str) and name in PROFILES:
        path = vector_path(name)
    elif name.endswith(".json"):
        path = Path(name)
    else:
        raise LamValueError(f"unknown vector profile {name!r} (known: {', '.join(PROFILES)}; or a path to a .json file)")
    if not path.is_file():
        raise LamValueError(f"vector file {str(path)!r} does not exist")
    return _load_cached(str(path.resolve()), path.stat().st_mtime_ns)


# ------------------------------------------------------------------------------------------------
# profiles an implementation claims
# ------------------------------------------------------------------------------------------------
def declared_profiles(impl: Any) -> tuple[set[str], str]:
    """The profiles ``impl`` claims and where that came from (``PROFILES`` or the default by parts)."""
    declared = getattr(impl, "profiles", None)
    if declared is None:
        declared = getattr(getattr(impl, "module", None), "PROFILES", None)
    if declared is not None:
        return {str(p) for p in declared}, "declared PROFILES"
    return {p for part, p in DEFAULT_PROFILES.items() if impl.has(part)}, "default profiles of the parts it provides"


def session_loader(impl: Any) -> Any:
    """The ``session_load(path, t)`` of ``impl`` (SPEC §15.1, profile ``session-v1``), or ``None``."""
    parts = getattr(impl, "parts", None)
    if isinstance(parts, dict) and "session" in parts:  # an Implementation that knows the part
        return impl.session_load if impl.has("session") else None
    return getattr(getattr(impl, "module", None), "session_load", None)


# ------------------------------------------------------------------------------------------------
# running
# ------------------------------------------------------------------------------------------------
_REJECTED = "rejected"


def _call(fn: Any) -> tuple[str, Any]:
    try:
        return "ok", fn()
    except ValueError as exc:  # LamValueError, an exec server's ValueError reply
        return _REJECTED, exc


def _as_ints(out: Any, n: int, what: str) -> list[int]:
    arr = np.asarray(out)
    if arr.dtype.kind not in "iu" or arr.shape != (n,):
        raise AssertionError(f"{what} must return int64[{n}], got {getattr(arr, 'dtype', type(out))} of shape {arr.shape}")
    return arr.astype(np.int64).tolist()


def _first_diff(got: list[Any], want: list[Any]) -> str:
    for k, (a, b) in enumerate(zip(got, want)):
        if a != b:
            return f"first difference at index {k}: got {a!r}, expected {b!r}"
    return f"lengths differ: got {len(got)}, expected {len(want)}"


def _pick(vec: dict[str, Any], outcome: Any, key: Any, where: str) -> str | None:
    """``None`` when ``outcome`` matches the expected output or an alternative, else why not."""
    if outcome == _REJECTED:
        if vec["result"] == "invalid" or vec.get("may_reject"):
            return None
        return f"{where} refused (ValueError) a valid input"
    if vec["result"] == "invalid":
        return f"{where} accepted input that must be refused with ValueError"
    wants = [vec["expected"]] + list(vec.get("alternatives", []))
    for w in wants:
        if key(w) == outcome:
            return None
    exp = key(vec["expected"])
    detail = _first_diff(outcome, exp) if isinstance(outcome, list) and isinstance(exp, list) else f"got {outcome!r}"
    more = f" (nor any of {len(wants) - 1} acceptable alternative(s))" if len(wants) > 1 else ""
    return f"{where}: output differs from the expected one{more}: {detail}"


def _unsound(pi: list[int], e: np.ndarray, t: float, where: str) -> str | None:
    """Why ``pi`` is not a δ-substitution of ``e`` (Definition 1), or ``None``: the whole contract an
    implementation declaring ``COMPLETE = False`` is held to (SPEC §15: sound, not necessarily the
    oracle). Distances in float64 coordinate form; the vectors keep non-exact pairs out of the tie band."""
    rows = np.asarray(e, dtype=np.float64).reshape(len(pi), -1) if pi else np.zeros((0, 0))
    d2 = 2.0 - 2.0 * float(t)
    for i, p in enumerate(pi):
        if not 0 <= p <= i or pi[p] != p:
            return f"{where}: π[{i}] = {p} is not a valid map (π[i] <= i, π[π[i]] = π[i])"
        if p != i and float(np.sum((rows[i] - rows[p]) ** 2)) > d2:
            return f"{where}: π[{i}] = {p} merges a pair farther than δ (unsound)"
    return None


def _op_substitute(impl: Any, vec: dict[str, Any], doc: dict[str, Any]) -> str | None:
    inp = vec["input"]
    e = decode_embeddings(inp["embeddings"], "input.embeddings")
    t = decode_scalar(inp["t"], "input.t")
    status, out = _call(lambda: impl.substitute(e, t))
    outcome = _REJECTED if status == _REJECTED else _as_ints(out, e.shape[0] if e.ndim else 0, "substitute")
    if not getattr(impl, "complete", True) and vec["result"] != "invalid" and outcome != _REJECTED:
        return _unsound(outcome, e, t, "substitute (COMPLETE = False: held to soundness)")
    return _pick(vec, outcome, lambda w: decode_ints(w["pi"], "expected.pi").tolist(), "substitute")


def _turn_outcomes(session: Any, turns: list[np.ndarray]) -> list[Any]:
    """Each turn's π (or a refusal); a returned array that changes when later turns are admitted
    (a view into the session's state) is a failure (returned arrays belong to the caller)."""
    out: list[Any] = []
    raw: list[Any] = []
    for k, turn in enumerate(turns):
        status, res = _call(lambda turn=turn: session.admit(turn))
        out.append(_REJECTED if status == _REJECTED else _as_ints(res, turn.shape[0] if turn.ndim else 0, f"admit of turn {k}"))
        raw.append(None if status == _REJECTED else res)
    for k, (res, got) in enumerate(zip(raw, out)):
        if res is not None and np.asarray(res).astype(np.int64).tolist() != got:
            raise AssertionError(f"the π returned for turn {k} changed when later turns were admitted "
                                 "(it aliases the session's state; a returned array must be the caller's own)")
    return out


def _turns_key(w: dict[str, Any]) -> list[Any]:
    return [_REJECTED if "rejected" in x else decode_ints(x["pi"], "expected.turns.pi").tolist() for x in w["turns"]]


def _compare_turns(vec: dict[str, Any], outcome: list[Any], where: str) -> str | None:
    wants = [vec["expected"]] + list(vec.get("alternatives", []))
    if any(_turns_key(w) == outcome for w in wants):
        return None
    exp = _turns_key(vec["expected"])
    for k, (a, b) in enumerate(zip(outcome, exp)):
        if a != b:
            how = (f"refused (ValueError), expected π {b}" if a == _REJECTED else
                   f"accepted with π {a[:8]}..., expected a refusal (ValueError)" if b == _REJECTED else _first_diff(a, b))
            return f"{where}: turn {k}: {how}"
    return f"{where}: {len(outcome)} turns answered, expected {len(exp)}"


def _op_session(impl: Any, vec: dict[str, Any], doc: dict[str, Any]) -> str | None:
    inp = vec["input"]
    t = decode_scalar(inp["t"], "input.t")
    turns = [decode_embeddings(x, f"input.turns[{k}]") for k, x in enumerate(inp["turns"])]
    status, session = _call(lambda: impl.online_session(t))
    if "expected" not in vec:  # the session itself must be refused, at construction or first admit
        if status == _REJECTED:
            return None
        first = _turn_outcomes(session, turns[:1])
        return None if first and first[0] == _REJECTED else f"OnlineSession(t = {t!r}) and its first admit accepted a bad threshold"
    if status == _REJECTED:
        return f"OnlineSession(t = {t!r}) refused a valid threshold"
    outcome = _turn_outcomes(session, turns)
    if not getattr(impl, "complete", True):
        # COMPLETE = False: the refusals must be the expected ones; the accepted turns together
        # must form a δ-substitution of the rows they admitted (SPEC §15).
        want = _turns_key(vec["expected"])
        rows, pis = [], []
        for k, (got, exp) in enumerate(zip(outcome, want)):
            if (got == _REJECTED) != (exp == _REJECTED):
                return f"session: turn {k}: {'refused' if got == _REJECTED else 'accepted'}, expected the opposite"
            if got != _REJECTED and got:
                rows.append(np.asarray(turns[k], dtype=np.float64).reshape(len(got), -1))
                pis.extend(got)
        if len(outcome) != len(want):
            return f"session: {len(outcome)} turns answered, expected {len(want)}"
        e = np.concatenate(rows) if rows else np.zeros((0, 0))
        return _unsound(pis, e, t, "session (COMPLETE = False: held to soundness)")
    return _compare_turns(vec, outcome, "session")


def _op_sessions(impl: Any, vec: dict[str, Any], doc: dict[str, Any]) -> str | None:
    """Several named sessions, opened, fed and closed in the order of ``input.steps`` (an exec server
    sees ``session_open`` / ``session_admit`` / ``session_close``); each admit's π must be expected."""
    t = decode_scalar(vec["input"]["t"], "input.t")
    live: dict[str, Any] = {}
    got: list[list[int]] = []
    fed: dict[str, list[tuple[np.ndarray, list[int]]]] = {}  # per session: its turns and their π
    for k, step in enumerate(vec["input"]["steps"]):
        if "open" in step:
            live[step["open"]] = impl.online_session(t)
        elif "close" in step:
            close = getattr(live.pop(step["close"]), "close", None)
            if callable(close):
                close()
        else:
            turn = decode_embeddings(step["turn"], f"input.steps[{k}].turn")
            status, res = _call(lambda turn=turn, name=step["admit"]: live[name].admit(turn))
            if status == _REJECTED:
                return f"step {k}: admit to session {step['admit']!r} refused a valid turn: {res}"
            got.append(_as_ints(res, turn.shape[0], f"step {k}: admit to session {step['admit']!r}"))
            fed.setdefault(step["admit"], []).append((turn, got[-1]))
    if not getattr(impl, "complete", True):  # COMPLETE = False: each session's π a δ-substitution of its own rows
        for name, turns in fed.items():
            rows = np.concatenate([np.asarray(e, dtype=np.float64).reshape(len(p), -1) for e, p in turns])
            why = _unsound([i for _, p in turns for i in p], rows, t, f"session {name!r} (COMPLETE = False: held to soundness)")
            if why:
                return why
        return None
    want = [decode_ints(a["pi"], "expected.admits.pi").tolist() for a in vec["expected"]["admits"]]
    admits = [s for s in vec["input"]["steps"] if "admit" in s]
    for k, (a, b, step) in enumerate(zip(got, want, admits)):
        if a != b:
            return f"admit {k} (to session {step['admit']!r}): {_first_diff(a, b)}"
    return None if len(got) == len(want) else f"{len(got)} admits answered, expected {len(want)}"


def _op_dedup_lines(impl: Any, vec: dict[str, Any], doc: dict[str, Any]) -> str | None:
    ours = doc["stub_prefix"]
    prefix = impl.stub_prefix
    exact = doc["profile"] == "l0-stubs"
    if exact and prefix != ours:
        return f"the l0-stubs profile fixes STUB_PREFIX = {ours!r} and lam_ref's stub text; this implementation's is {prefix!r}"
    records = [r.replace(ours, prefix) for r in vec["input"]["records"]]
    status, out = _call(lambda: impl.dedup_lines(list(records)))
    if status == _REJECTED:
        return f"dedup_lines refused valid records: {out}"
    if not isinstance(out, list) or not all(isinstance(r, str) for r in out):
        return f"dedup_lines must return a list of str, got {type(out).__name__}"
    wants = [vec["expected"]] + list(vec.get("alternatives", []))
    why = None
    for w in wants:
        why = _match_records(out, w["records"], ours, prefix, exact)
        if why is None:
            return None
    return why if len(wants) == 1 else f"{why} (nor any of {len(wants) - 1} acceptable alternative(s))"


def _match_records(out: list[str], want: list[Any], ours: str, prefix: str, exact: bool) -> str | None:
    if len(out) != len(want):
        return f"dedup_lines returned {len(out)} records for {len(want)}"
    for r, (got, exp) in enumerate(zip(out, want)):
        if exact:
            if got != exp:
                return f"record {r}: {_first_diff(got.split(chr(10)), exp.split(chr(10)))}"
            continue
        lines = got.split("\n")
        if len(lines) != len(exp):
            return f"record {r}: {len(lines)} lines after dedup, expected {len(exp)} ({_first_diff(lines, [x if isinstance(x, str) else '<stub>' for x in exp])})"
        for k, (have, tok) in enumerate(zip(lines, exp)):
            if isinstance(tok, str):
                line = tok.replace(ours, prefix)
                if have != line:
                    return f"record {r} line {k}: expected the kept line {line[:60]!r}, got {have[:60]!r}"
            elif not have.startswith(prefix):
                return (f"record {r} line {k}: expected one stub line for a run of {tok['stub']['count']} repeated "
                        f"line(s), starting with STUB_PREFIX {prefix!r}, got {have[:60]!r}")
    return None


def codec_tolerance(x: np.ndarray, y: np.ndarray, eb: float) -> np.ndarray:
    """The codec-bound file's ``tolerance``: allowed ``|x - y|`` per value (float64)."""
    mag = np.maximum(np.abs(x.astype(np.float32)), np.abs(y.astype(np.float32)))
    return eb + np.spacing(mag).astype(np.float64) + 2.0**-50 * (np.abs(x.astype(np.float64)) + eb)


def _op_codec_roundtrip(impl: Any, vec: dict[str, Any], doc: dict[str, Any]) -> str | None:
    x = decode_array(vec["input"]["x"], "input.x")
    eb = decode_scalar(vec["input"]["eb"], "input.eb")
    status, blob = _call(lambda: impl.codec_encode(x.copy(), eb))
    if status == _REJECTED:
        return _pick(vec, _REJECTED, lambda w: None, "codec_encode")
    if vec["result"] == "invalid":
        return f"codec_encode accepted x, eb = {eb!r}, which must be refused with ValueError"
    if not isinstance(blob, (bytes, bytearray)):
        return f"codec_encode must return bytes, got {type(blob).__name__}"
    status, y = _call(lambda: impl.codec_decode(bytes(blob)))
    if status == _REJECTED:
        return _pick(vec, _REJECTED, lambda w: None, "codec_decode of codec_encode's own stream")
    y = np.asarray(y)
    if y.dtype != np.float32 or y.shape != x.shape:
        return f"codec_decode returned {y.dtype} of shape {y.shape} for float32 input of shape {x.shape}"
    with np.errstate(invalid="ignore", over="ignore"):
        err = np.abs(x.astype(np.float64) - y.astype(np.float64))
        bad = np.flatnonzero(~(err <= codec_tolerance(x, y, eb)))
    if bad.size:
        k = int(bad[0])
        return (f"|x - y| = {err[k]!r} at index {k} (x = {float(x[k])!r}, y = {float(y[k])!r}) exceeds the tolerance "
                f"at eb = {eb!r}; {bad.size} value(s) out of bound")
    return None


def _op_codec_truncated(impl: Any, vec: dict[str, Any], doc: dict[str, Any]) -> str | None:
    x = decode_array(vec["input"]["x"], "input.x")
    eb = decode_scalar(vec["input"]["eb"], "input.eb")
    blob = bytes(impl.codec_encode(x.copy(), eb))
    cut = vec["input"]["cut"]
    data = blob[:-1] if cut == "1" else blob[: len(blob) // 2] if cut == "half" else blob[:1]
    status, y = _call(lambda: impl.codec_decode(data))
    if status == _REJECTED:
        return None
    return f"codec_decode of a {len(blob)}-byte stream cut to {len(data)} bytes returned {getattr(y, 'shape', type(y))} instead of refusing"


def _op_codec_encode(impl: Any, vec: dict[str, Any], doc: dict[str, Any]) -> str | None:
    x = decode_array(vec["input"]["x"], "input.x")
    eb = decode_scalar(vec["input"]["eb"], "input.eb")
    status, blob = _call(lambda: impl.codec_encode(x.copy(), eb))
    if status == _REJECTED or vec["result"] == "invalid":
        return _pick(vec, _REJECTED if status == _REJECTED else "accepted", lambda w: None, "codec_encode")
    want = decode_bytes(vec["expected"]["data"], "expected.data")
    got = bytes(blob)
    if got != want:
        k = next((i for i, (a, b) in enumerate(zip(got, want)) if a != b), min(len(got), len(want)))
        return f"codec_encode wrote {len(got)} bytes, expected {len(want)}; first difference at byte {k} (format version 1)"
    return None


def _op_codec_decode(impl: Any, vec: dict[str, Any], doc: dict[str, Any]) -> str | None:
    data = decode_bytes(vec["input"]["data"], "input.data")
    status, y = _call(lambda: impl.codec_decode(data))
    if status == _REJECTED:
        return None if vec["result"] == "invalid" else f"codec_decode refused a valid stream: {y}"
    if vec["result"] == "invalid":
        return f"codec_decode accepted a stream that must be refused (returned {getattr(y, 'shape', type(y))})"
    want = decode_array(vec["expected"]["x"], "expected.x")
    y = np.asarray(y)
    if y.dtype != np.float32 or y.shape != want.shape:
        return f"codec_decode returned {y.dtype} of shape {y.shape}, expected float32 of shape {want.shape}"
    diff = np.flatnonzero(y.view(np.uint32) != want.view(np.uint32))
    if diff.size:
        k = int(diff[0])
        return f"codec_decode value {k} is {float(y[k])!r}, expected {float(want[k])!r} (bit for bit)"
    return None


def _op_session_load(impl: Any, vec: dict[str, Any], doc: dict[str, Any]) -> str | None:
    loader = session_loader(impl)
    data = decode_bytes(vec["input"]["data"], "input.data")
    t = decode_scalar(vec["input"]["t"], "input.t")
    with tempfile.TemporaryDirectory(prefix="lam_ref_vector_") as tmp:
        path = os.path.join(tmp, "session.lamsession")
        with open(path, "wb") as fh:
            fh.write(data)
        status, session = _call(lambda: loader(path, t))
        if vec["result"] == "invalid":
            return None if status == _REJECTED else "session_load accepted a file that must be refused"
        if status == _REJECTED:
            return f"session_load refused a valid file: {session}"
        turns = [decode_embeddings(x, f"input.turns[{k}]") for k, x in enumerate(vec["input"]["turns"])]
        return _compare_turns(vec, _turn_outcomes(session, turns), "restored session")


_OPS = {
    "substitute": _op_substitute,
    "session": _op_session,
    "sessions": _op_sessions,
    "dedup_lines": _op_dedup_lines,
    "codec_roundtrip": _op_codec_roundtrip,
    "codec_truncated": _op_codec_truncated,
    "codec_encode": _op_codec_encode,
    "codec_decode": _op_codec_decode,
    "session_load": _op_session_load,
}


def run_vector(impl: Any, vector: dict[str, Any], doc: dict[str, Any]) -> None:
    """Run one vector; raises :class:`VectorFailure` when ``impl`` gets it wrong."""
    try:
        why = _OPS[vector["op"]](impl, vector, doc)
    except VectorFormatError as exc:
        raise LamValueError(f"{doc['profile']}.json vector {vector.get('id')}: {exc}") from exc
    except AssertionError as exc:
        why = str(exc)
    except Exception as exc:  # anything but ValueError is a failure, never a refusal
        why = f"raised {type(exc).__name__}: {str(exc)[:200]} (a refusal must be a ValueError)"
    if why is not None:
        raise VectorFailure(doc["profile"], vector, why)


def run_vectors(impl: Any, profile: str, doc: dict[str, Any] | None = None, *,
                skip_flags: tuple[str, ...] = ()) -> list[VectorFailure]:
    """Every vector of ``profile`` against ``impl`` (an :class:`Implementation`); the failures.

    ``skip_flags``: leave out vectors carrying any of these flags (e.g. ``("LargeIds",)`` for a
    pure-Python implementation that is quadratic in N)."""
    from ..impl import load_implementation

    doc = doc if doc is not None else load_vectors(profile)
    implementation = load_implementation(impl)
    failures = []
    for v in doc["vectors"]:
        if skip_flags and any(f in skip_flags for f in v["flags"]):
            continue
        try:
            run_vector(implementation, v, doc)
        except VectorFailure as exc:
            failures.append(exc)
    return failures


def count_run(doc: dict[str, Any], skip_flags: tuple[str, ...] = ()) -> int:
    """How many vectors of ``doc`` :func:`run_vectors` runs with ``skip_flags``."""
    return sum(1 for v in doc["vectors"] if not any(f in skip_flags for f in v["flags"]))


def summary(failures: list[VectorFailure], total: int, limit: int = 5, left_out: int = 0) -> str:
    head = f"{len(failures)} of {total} vectors failed"
    if left_out:
        head += f" ({left_out} flagged {'/'.join(THOROUGH_ONLY)} left out; the thorough run includes them)"
    lines = [head] + [f"  {f}" for f in failures[:limit]]
    if len(failures) > limit:
        lines.append(f"  ... and {len(failures) - limit} more")
    return "\n".join(lines)

