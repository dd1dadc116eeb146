"""A second, independently written implementation of SPEC §15: the suite's no-false-alarm witness.

Written from the SPEC text alone and deliberately sharing **no code** with lam_ref (it imports
only numpy and xxhash), so that lam_ref and the suite cannot agree on a mistake by construction.
It also computes differently wherever SPEC §2 allows:

* distances by the Gram form ``|x|² + |y|² - 2·x·y`` in float64 (not lam_ref's coordinate-wise
  ``sum((x - y)²)``); the float64 error, below ``1e-13`` for unit rows, lies deep inside the
  ``1e-9`` tie band the suite keeps its data out of;
* one retained matrix grown in place, searched per arrival (no blocks, no band index);
* L0 over Python strings with its own stub template (prefix :data:`STUB_PREFIX`);
* an L2 codec with its own byte format (header, then zig-zag LEB128 varints of the block deltas
  of ``q = rint(x / 2eb)``), not cuSZp's bit-planes: it claims profile ``codec-bound`` (SPEC §9.4,
  §15.4), which fixes the bound, not the bytes; ``codec-v1`` would fix the bytes.

Check it yourself: ``lam-ref conform --impl lam_ref.conformance.witnesses.independent``.
"""

from __future__ import annotations

import math
import struct
from typing import Any

import numpy as np
import xxhash

NAME = "independent plain-numpy implementation"
__version__ = "1.1"
COMPLETE = True
STUB_PREFIX = "[indep-stub "
#: What this implementation claims (SPEC §15.4): its own stub text and codec format, so not
#: ``l0-stubs`` / ``codec-v1``; no session files.
PROFILES = {"core", "online", "l0", "codec-bound"}

__all__ = ["COMPLETE", "NAME", "OnlineSession", "PROFILES", "STUB_PREFIX", "codec_decode", "codec_encode", "dedup_lines", "substitute"]

_NORM_TOL = 1e-4


# ------------------------------------------------------------------------------ validation
def _threshold(t: Any) -> float:
    if isinstance(t, bool) or not isinstance(t, (int, float, np.integer, np.floating)):
        raise ValueError(f"threshold t must be a real number, got {t!r}")
    value = float(t)
    if math.isnan(value) or value < -1.0 or value > 1.0:
        raise ValueError(f"threshold t = {value!r} is outside [-1, 1]")
    return value


def _rows(x: Any, dim: int | None) -> np.ndarray:
    arr = np.asarray(x)
    if arr.dtype.kind not in "fiu":
        raise ValueError(f"embeddings must be numeric, got dtype {arr.dtype}")
    if arr.ndim != 2:
        raise ValueError(f"embeddings must have 2 axes (N, D), got {arr.ndim} (shape {arr.shape})")
    if arr.shape[1] == 0:
        raise ValueError("embeddings have D = 0 columns")
    if dim is not None and arr.shape[1] != dim:
        raise ValueError(f"embeddings have D = {arr.shape[1]} but this session holds D = {dim}")
    a = arr.astype(np.float64)
    for i in range(a.shape[0]):
        row = a[i]
        if not np.all(np.isfinite(row)):
            raise ValueError(f"embeddings row {i} contains NaN or infinity")
        norm = math.sqrt(float(np.dot(row, row)))
        if norm == 0.0:
            raise ValueError(f"embeddings row {i} is all zeros")
        if abs(norm - 1.0) > _NORM_TOL:
            raise ValueError(f"embeddings row {i} has norm {norm!r}; unit rows are required")
    return arr.astype(np.float32)


# -------------------------------------------------------------------------------- Algorithm 1/2
class OnlineSession:
    """Algorithm 1: arrivals in order, each against the retained rows only; lowest id within δ."""

    def __init__(self, t: float) -> None:
        self._t = _threshold(t)
        self._limit = 2.0 - 2.0 * self._t  # δ²
        self._kept = np.zeros((0, 0))  # retained rows, float64
        self._kept_sq = np.zeros(0)
        self._kept_ids = np.zeros(0, dtype=np.int64)
        self._count = 0  # retained so far
        self._seen = 0  # next id
        self._dim: int | None = None

    def _append(self, row: np.ndarray, gid: int) -> None:
        if self._count == self._kept.shape[0]:
            grow = max(16, 2 * self._count)
            self._kept = np.vstack([self._kept, np.zeros((grow, row.size))]) if self._count else np.zeros((grow, row.size))
            self._kept_sq = np.concatenate([self._kept_sq, np.zeros(grow)])
            self._kept_ids = np.concatenate([self._kept_ids, np.zeros(grow, dtype=np.int64)])
        self._kept[self._count] = row
        self._kept_sq[self._count] = float(np.dot(row, row))
        self._kept_ids[self._count] = gid
        self._count += 1

    def admit(self, embeddings: Any) -> np.ndarray:
        turn = _rows(embeddings, self._dim)  # whole turn validated before any state changes
        self._dim = turn.shape[1]
        out = np.empty(turn.shape[0], dtype=np.int64)
        for k, row32 in enumerate(turn):
            x = row32.astype(np.float64)
            gid = self._seen
            self._seen += 1
            if self._count:
                kept = self._kept[: self._count]
                d2 = self._kept_sq[: self._count] + float(np.dot(x, x)) - 2.0 * (kept @ x)
                hits = np.nonzero(d2 <= self._limit)[0]
                if hits.size:
                    out[k] = self._kept_ids[hits[0]]  # retained ids ascend: first hit = lowest id
                    continue
            self._append(x, gid)
            out[k] = gid
        return out


def substitute(embeddings: Any, t: float) -> np.ndarray:
    """Algorithm 2: the same rule over a finished trajectory (one session, one turn)."""
    return OnlineSession(t).admit(embeddings)


# ------------------------------------------------------------------------------------- L0
def dedup_lines(records: list[str]) -> list[str]:
    """Drop every non-blank, non-stub line whose XXH3-64 was kept before; one stub per run."""
    if not isinstance(records, list) or not all(isinstance(r, str) for r in records):
        raise ValueError("records must be a list of str")
    seen: set[int] = set()
    result = []
    for r_index, text in enumerate(records):
        lines_out: list[str] = []
        dropped = 0
        for line in text.split("\n"):
            plain = line.strip() != "" and not line.startswith(STUB_PREFIX)
            digest = xxhash.xxh3_64_intdigest(line.encode("utf-8", "surrogatepass")) if plain else None
            if plain and digest in seen:
                dropped += 1
                continue
            if dropped:
                lines_out.append(f"{STUB_PREFIX}{dropped} repeated line(s) removed from record {r_index}]")
                dropped = 0
            if plain:
                seen.add(digest)
            lines_out.append(line)
        if dropped:
            lines_out.append(f"{STUB_PREFIX}{dropped} repeated line(s) removed from record {r_index}]")
        result.append("\n".join(lines_out))
    return result


# ------------------------------------------------------------------------------------- L2
_MAGIC = b"IND1"
_HEAD = struct.Struct("<4sIdI")  # magic, n, eb, payload length
_BLOCK = 32


def _varint(value: int, out: bytearray) -> None:
    z = (value << 1) ^ (value >> 63)  # zig-zag
    while True:
        byte = z & 0x7F
        z >>= 7
        if z:
            out.append(byte | 0x80)
        else:
            out.append(byte)
            return


def codec_encode(x: Any, eb: float) -> bytes:
    """Quantize ``q = rint(x / 2eb)`` (float64), store block-wise deltas as zig-zag varints."""
    arr = np.asarray(x)
    if arr.ndim != 1 or arr.dtype != np.float32:
        raise ValueError(f"x must be float32[n], got {arr.dtype} with shape {arr.shape}")
    if isinstance(eb, bool) or not isinstance(eb, (int, float, np.floating)) or not math.isfinite(2.0 * float(eb)) or eb <= 0:
        raise ValueError(f"error bound eb must be positive, with 2*eb finite, got {eb!r}")
    bad = np.nonzero(~np.isfinite(arr))[0]
    if bad.size:
        raise ValueError(f"x[{int(bad[0])}] is not finite")
    with np.errstate(over="ignore"):  # an overflow gives inf, refused on the next line
        q = np.rint(arr.astype(np.float64) / (2.0 * float(eb)))
    if q.size and float(np.max(np.abs(q))) >= 2.0**62:
        raise ValueError(f"eb = {eb!r} is too small for values of this size")
    if q.size and float(np.max(np.abs(q))) * 2.0 * float(eb) > float(np.finfo(np.float32).max):
        raise ValueError(f"eb = {eb!r}: a reconstruction q*2eb would leave the float32 range (SPEC §9.3 refuses it)")
    payload = bytearray()
    codes = q.astype(np.int64).tolist()
    for start in range(0, len(codes), _BLOCK):
        prev = 0
        for v in codes[start : start + _BLOCK]:
            _varint(v - prev, payload)
            prev = v
    return _HEAD.pack(_MAGIC, arr.size, float(eb), len(payload)) + bytes(payload)


def codec_decode(data: bytes) -> np.ndarray:
    """Inverse of :func:`codec_encode`; a stream that is cut, padded or foreign raises ValueError."""
    blob = bytes(data)
    if len(blob) < _HEAD.size:
        raise ValueError(f"codec stream of {len(blob)} bytes is shorter than its {_HEAD.size}-byte header")
    magic, n, eb, length = _HEAD.unpack_from(blob)
    if magic != _MAGIC or len(blob) != _HEAD.size + length or not eb > 0:
        raise ValueError("not a complete stream of this codec (magic, length or eb wrong)")
    codes = []
    pos, end = _HEAD.size, len(blob)
    while len(codes) < n:
        prev = 0
        for _ in range(min(_BLOCK, n - len(codes))):
            z, shift = 0, 0
            while True:
                if pos >= end:
                    raise ValueError("codec stream ends inside a value")
                byte = blob[pos]
                pos += 1
                z |= (byte & 0x7F) << shift
                shift += 7
                if not byte & 0x80:
                    break
            prev += (z >> 1) ^ -(z & 1)
            codes.append(prev)
    if pos != end:
        raise ValueError(f"codec stream has {end - pos} trailing bytes")
    return (np.asarray(codes, dtype=np.float64) * (2.0 * eb)).astype(np.float32)
