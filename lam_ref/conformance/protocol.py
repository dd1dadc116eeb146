"""The exec line protocol: how an implementation in another language speaks to the suite (SPEC §15).

``--lam-impl=exec:COMMAND`` starts ``COMMAND`` as a child process. The suite writes one JSON
object per line to its stdin and reads one JSON object per line from its stdout (UTF-8, ``\\n``
terminated; the server must flush after each line and write logs to stderr, never to stdout).

Request ``{"id": <int in [0, 2**53 - 1]>, "op": <str>, ...arguments}``; reply, with the same ``id``
exactly (the suite sends ids past 2**24 and 2**32):

* success ``{"id": k, "ok": true, "result": {...}}``
* failure ``{"id": k, "ok": false, "error": {"type": "ValueError", "message": "..."}}`` —
  ``type == "ValueError"`` means *bad input, rejected* (SPEC §2); any other type is a failure.

Arrays travel as ``{"dtype": "float32" | "int64", "shape": [...], "data": <base64>}`` where
``data`` is the little-endian C-order bytes; byte strings (the L2 codec) as base64 text. Scalars
``t`` and ``eb`` are JSON numbers, or the strings ``"nan"``, ``"inf"``, ``"-inf"`` (JSON has no
non-finite numbers; the suite sends them to check that they are rejected).

| op | arguments | result |
|---|---|---|
| ``hello`` | ``protocol`` (int, = 1) | ``protocol``, ``name``, ``version``, ``parts`` (list), ``complete`` (bool), ``stub_prefix`` (str, with ``lines``), ``target`` (str, optional), ``expected_failures`` (object, optional) |
| ``substitute`` | ``embeddings`` (float32 array), ``t`` | ``pi`` (int64 array) |
| ``session_open`` | ``t`` | ``session`` (handle: an integer or a string; never that of an open session) |
| ``session_admit`` | ``session``, ``embeddings`` | ``pi`` (int64 array, global ids) |
| ``session_close`` | ``session`` | any object (``{}``; the suite reads none of it) |
| ``dedup_lines`` | ``records`` (list of str) | ``records`` (list of str) |
| ``codec_encode`` | ``x`` (float32 array, 1-D), ``eb`` | ``data`` (base64 bytes) |
| ``codec_decode`` | ``data`` (base64 bytes) | ``x`` (float32 array) |
| ``shutdown`` | — | ``{}``, then the server exits |

``parts`` names what the server provides: ``substitute``, ``online``, ``lines``, ``codec`` (a list,
or an object of booleans). Every field's type and range: docs/conformance.md §6.
"""

from __future__ import annotations

import base64
import json
from typing import Any

import numpy as np

from ..geometry import short_repr

__all__ = [
    "DTYPES",
    "PROTOCOL_VERSION",
    "PARTS",
    "ProtocolError",
    "decode_array",
    "decode_bytes",
    "decode_scalar",
    "dumps",
    "encode_array",
    "encode_bytes",
    "encode_scalar",
]

PROTOCOL_VERSION = 1
#: The optional parts of SPEC §15 by their protocol names.
PARTS = ("substitute", "online", "lines", "codec")
DTYPES = {"float32": np.dtype("<f4"), "int64": np.dtype("<i8")}


class ProtocolError(ValueError):
    """A message that does not follow the protocol (bad JSON, missing field, wrong array header)."""


def encode_array(arr: Any, dtype: str) -> dict[str, Any]:
    """``{"dtype", "shape", "data"}`` for an array converted to ``dtype`` (little-endian, C order).

    The values are sent as they are (no validation): a bad array is the receiver's to reject.
    """
    if dtype not in DTYPES:
        raise ProtocolError(f"dtype must be one of {sorted(DTYPES)}, got {dtype!r}")
    a = np.ascontiguousarray(np.asarray(arr), dtype=DTYPES[dtype])
    return {"dtype": dtype, "shape": list(a.shape), "data": base64.b64encode(a.tobytes()).decode("ascii")}


def decode_array(obj: Any, name: str = "array") -> np.ndarray:
    """Inverse of :func:`encode_array`; raises :class:`ProtocolError` naming ``name`` on a bad header."""
    if not isinstance(obj, dict) or not {"dtype", "shape", "data"} <= set(obj):
        raise ProtocolError(f"{name} must be an object with dtype, shape and data, got {_short(obj)}")
    dtype = DTYPES.get(obj["dtype"])
    if dtype is None:
        raise ProtocolError(f"{name} has dtype {obj['dtype']!r}; the protocol knows {sorted(DTYPES)}")
    shape = obj["shape"]
    if not isinstance(shape, list) or not all(isinstance(s, int) and not isinstance(s, bool) and s >= 0 for s in shape):
        raise ProtocolError(f"{name} has a bad shape {shape!r}")
    try:
        raw = base64.b64decode(obj["data"], validate=True)
    except (ValueError, TypeError) as exc:
        raise ProtocolError(f"{name} data is not valid base64: {exc}") from exc
    count = int(np.prod(shape, dtype=np.int64)) if shape else 1
    if len(raw) != count * dtype.itemsize:
        raise ProtocolError(f"{name} has {len(raw)} bytes of data, shape {shape} needs {count * dtype.itemsize}")
    return np.frombuffer(raw, dtype=dtype).reshape(shape).astype(dtype.newbyteorder("="), copy=True)


def encode_bytes(data: bytes) -> str:
    return base64.b64encode(bytes(data)).decode("ascii")


def decode_bytes(text: Any, name: str = "data") -> bytes:
    if not isinstance(text, str):
        raise ProtocolError(f"{name} must be a base64 string, got {_short(text)}")
    try:
        return base64.b64decode(text, validate=True)
    except (ValueError, TypeError) as exc:
        raise ProtocolError(f"{name} is not valid base64: {exc}") from exc


_NONFINITE = {"nan": float("nan"), "inf": float("inf"), "-inf": float("-inf")}


def encode_scalar(x: Any) -> Any:
    """A float as a JSON number, or ``"nan"``/``"inf"``/``"-inf"``; other values unchanged."""
    if isinstance(x, (float, np.floating)) and not np.isfinite(x):
        return "nan" if np.isnan(x) else ("inf" if x > 0 else "-inf")
    if isinstance(x, np.floating):
        return float(x)
    if isinstance(x, np.integer):
        return int(x)
    return x


def decode_scalar(x: Any) -> Any:
    """Inverse of :func:`encode_scalar`."""
    if isinstance(x, str) and x in _NONFINITE:
        return _NONFINITE[x]
    return x


def dumps(msg: dict[str, Any]) -> str:
    """One protocol line (no embedded newlines; non-finite floats are not valid JSON and are refused)."""
    return json.dumps(msg, allow_nan=False, separators=(",", ":"), ensure_ascii=True) + "\n"


def _short(obj: Any) -> str:
    return short_repr(obj)
