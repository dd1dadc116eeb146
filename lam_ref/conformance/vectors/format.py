"""How values are written in the vector files (``docs/vectors.md``), and reading them back.

Every encoding is chosen to be a few lines in C, Rust or JavaScript:

* **arrays** ``{"dtype": "float32" | "int64", "shape": [...], "hex": "..."}``: the little-endian,
  C-order bytes of the values, as lowercase hex (two characters per byte, no separators). A
  float32 is its 4 IEEE-754 bytes, so NaN, ``-0.0`` and subnormals travel exactly.
* **byte strings** (codec streams, session files): lowercase hex.
* **int lists** (π, indices): a JSON array of integers, or ``{"runs": [[start, count, step], ...]}``
  meaning the concatenation of ``start, start+step, ..., start+(count-1)*step`` per run.
* **embeddings**: an array (above); or ``{"table": ARRAY(K, D), "index": INTS}``, row ``k`` being
  ``table[index[k]]``; or ``{"sign_patterns": {"dim": D, "scale": ARRAY(1)}, "index": INTS}``,
  row ``k`` having coordinate ``j`` equal to ``-scale`` if bit ``j`` of ``index[k]`` is set and
  ``+scale`` otherwise (bits from 63 on are 0). The last two build large inputs (N past 65,536, retained sets past
  1,024) from a few bytes.
* **scalars** ``t`` and ``eb``: JSON numbers (written with 17 significant digits or the shortest
  round-trip form, so ``strtod`` reads the exact float64), or ``"nan"``, ``"inf"``, ``"-inf"``
  as in the exec protocol (JSON has no non-finite numbers).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ...geometry import short_repr

__all__ = [
    "VectorFormatError",
    "decode_array",
    "decode_bytes",
    "decode_embeddings",
    "decode_ints",
    "decode_scalar",
    "encode_array",
    "encode_bytes",
    "encode_ints",
    "encode_scalar",
]

_DTYPES = {"float32": np.dtype("<f4"), "int64": np.dtype("<i8")}
#: Refuse generated inputs larger than this (a malformed file must not exhaust memory).
MAX_ELEMENTS = 50_000_000


class VectorFormatError(ValueError):
    """A vector file field that does not follow the format (names the field)."""


def encode_array(a: Any, dtype: str = "float32") -> dict[str, Any]:
    arr = np.ascontiguousarray(np.asarray(a), dtype=_DTYPES[dtype])
    return {"dtype": dtype, "shape": list(arr.shape), "hex": arr.tobytes().hex()}


def decode_array(obj: Any, where: str) -> np.ndarray:
    if not isinstance(obj, dict) or set(obj) != {"dtype", "shape", "hex"}:
        raise VectorFormatError(f"{where}: an array must be {{dtype, shape, hex}}, got {short_repr(obj, 60)}")
    dtype = _DTYPES.get(obj["dtype"])
    if dtype is None:
        raise VectorFormatError(f"{where}: dtype {obj['dtype']!r} is not one of {sorted(_DTYPES)}")
    shape = obj["shape"]
    if not isinstance(shape, list) or not all(isinstance(s, int) and not isinstance(s, bool) and s >= 0 for s in shape):
        raise VectorFormatError(f"{where}: bad shape {shape!r}")
    raw = decode_bytes(obj["hex"], f"{where}.hex")
    count = math.prod(shape)
    if len(raw) != count * dtype.itemsize:
        raise VectorFormatError(f"{where}: {len(raw)} bytes of data, shape {shape} needs {count * dtype.itemsize}")
    return np.frombuffer(raw, dtype=dtype).reshape(shape).astype(dtype.newbyteorder("="), copy=True)


def encode_bytes(b: bytes) -> str:
    return bytes(b).hex()


def decode_bytes(text: Any, where: str) -> bytes:
    if not isinstance(text, str) or len(text) % 2 or any(c not in "0123456789abcdef" for c in text):
        raise VectorFormatError(f"{where}: bytes must be lowercase hex of even length, got {short_repr(text, 60)}")
    return bytes.fromhex(text)


def encode_ints(values: Any) -> Any:
    """A plain list, or runs when that is shorter (long arithmetic progressions)."""
    v = [int(x) for x in np.asarray(values, dtype=np.int64).tolist()]
    runs: list[list[int]] = []
    k = 0
    while k < len(v):
        step = v[k + 1] - v[k] if k + 1 < len(v) else 0
        j = k + 1
        while j < len(v) and v[j] - v[j - 1] == step:
            j += 1
        runs.append([v[k], j - k, step])
        k = j
    return {"runs": runs} if len(v) > 16 and 3 * len(runs) < len(v) else v


def decode_ints(obj: Any, where: str) -> np.ndarray:
    if isinstance(obj, list):
        if not all(isinstance(x, int) and not isinstance(x, bool) for x in obj):
            raise VectorFormatError(f"{where}: an int list must hold integers only, got {short_repr(obj, 60)}")
        return np.asarray(obj, dtype=np.int64).reshape(-1)
    if isinstance(obj, dict) and set(obj) == {"runs"} and isinstance(obj["runs"], list):
        parts = []
        total = 0
        for r in obj["runs"]:
            if not (isinstance(r, list) and len(r) == 3 and all(isinstance(x, int) and not isinstance(x, bool) for x in r)
                    and r[1] >= 0):
                raise VectorFormatError(f"{where}: a run must be [start, count >= 0, step], got {short_repr(r, 60)}")
            total += r[1]
            if total > MAX_ELEMENTS:
                raise VectorFormatError(f"{where}: runs describe more than {MAX_ELEMENTS} values")
            parts.append(r[0] + r[2] * np.arange(r[1], dtype=np.int64))
        return np.concatenate(parts) if parts else np.zeros(0, np.int64)
    raise VectorFormatError(f"{where}: ints must be a list or {{runs}}, got {short_repr(obj, 60)}")


def decode_embeddings(obj: Any, where: str) -> np.ndarray:
    """The float32 array an embeddings field describes (any rank for explicit arrays)."""
    if isinstance(obj, dict) and "table" in obj:
        if set(obj) != {"table", "index"}:
            raise VectorFormatError(f"{where}: a table input is {{table, index}}, got keys {sorted(obj)}")
        table = decode_array(obj["table"], f"{where}.table")
        index = decode_ints(obj["index"], f"{where}.index")
        if table.ndim != 2 or (index.size and (index.min() < 0 or index.max() >= table.shape[0])):
            raise VectorFormatError(f"{where}: index must select rows of a 2-D table")
        return table[index]
    if isinstance(obj, dict) and "sign_patterns" in obj:
        if set(obj) != {"sign_patterns", "index"} or not isinstance(obj["sign_patterns"], dict):
            raise VectorFormatError(f"{where}: a sign-pattern input is {{sign_patterns: {{dim, scale}}, index}}")
        spec = obj["sign_patterns"]
        dim = spec.get("dim")
        if set(spec) != {"dim", "scale"} or not isinstance(dim, int) or isinstance(dim, bool) or not 1 <= dim <= 4096:
            raise VectorFormatError(f"{where}.sign_patterns: dim must be an integer in [1, 4096], got {short_repr(spec, 60)}")
        scale = decode_array(spec["scale"], f"{where}.sign_patterns.scale")
        if scale.shape != (1,) or scale.dtype != np.float32:
            raise VectorFormatError(f"{where}.sign_patterns.scale must be a float32 array of shape [1]")
        index = decode_ints(obj["index"], f"{where}.index")
        if index.size * dim > MAX_ELEMENTS or (index.size and index.min() < 0):
            raise VectorFormatError(f"{where}: index must be non-negative and describe at most {MAX_ELEMENTS} values")
        bits = (index[:, None] >> np.minimum(np.arange(dim, dtype=np.int64), 63)) & 1  # bits 63+ of an index are 0
        return np.where(bits == 1, -scale[0], scale[0]).astype(np.float32)
    arr = decode_array(obj, where)
    if arr.dtype != np.float32:
        raise VectorFormatError(f"{where}: embeddings must be float32, got {arr.dtype}")
    return arr


_NONFINITE = {"nan": float("nan"), "inf": float("inf"), "-inf": float("-inf")}


def encode_scalar(x: float) -> Any:
    x = float(x)
    if math.isfinite(x):
        return x
    return "nan" if math.isnan(x) else ("inf" if x > 0 else "-inf")


def decode_scalar(x: Any, where: str) -> float:
    if isinstance(x, str) and x in _NONFINITE:
        return _NONFINITE[x]
    if isinstance(x, (int, float)) and not isinstance(x, bool):
        return float(x)
    raise VectorFormatError(f"{where}: a scalar must be a number or 'nan'/'inf'/'-inf', got {short_repr(x, 60)}")
