"""Codec inputs derived from the boundaries of SPEC §9's sentences, not from known bugs (issue 38 §1).

Each function states the sentence whose edge it builds and is computed, not copied, so that the vector
files (``generate.py``) and the conformance checks (:mod:`lam_ref.conformance.differential` and the checks of :mod:`lam_ref.conformance.checks.codec`) use the same edges:

* every rounding at the largest double below the half point (:func:`below_half_eb`), exact ties and
  their float32 neighbours (:func:`quantizer_edges`), and the values whose code changes when the
  division ``x / (2eb)`` is replaced by a reciprocal multiply (:func:`reciprocal_traps`);
* the range rule on the *code* (``|q| <= 2^31 - 1``, SPEC §9.4): :func:`range_edge_eb`;
* float32 overflow of a reconstruction (decision D-codec-overflow): :func:`overflow_edge_eb`;
* codes and deltas at ``2^k - 1, 2^k, 2^k + 1`` (k = 8, 16, 24, 31, 32): :func:`width_codes`;
* the version-2 layout of a stream, so that one field can be edited with the CRC recomputed
  (:func:`v2_layout`, :func:`splice`).

Pure Python and numpy; no ``lam_ref.codec``.
"""

from __future__ import annotations

import math
import struct
import zlib
from dataclasses import dataclass, field

import numpy as np

__all__ = ["EBS", "FLT_MAX", "OVERFLOW", "V2Layout", "below_half_eb", "extreme_code_eb", "overflow_edge_eb",
           "quantize", "quantizer_edges", "range_edge_eb", "reciprocal_traps", "restamp", "skewed_counts", "splice",
           "v2_layout", "width_codes"]

#: Error bounds the encoder differential runs at (powers of two, decimal fractions, odd values).
EBS = (2.0**-20, 2.0**-10, 1e-5, 1e-4, 3e-4, 1e-3, 0.0025, 1e-2, 0.03, 0.1, 0.3, 0.5, 0.7, 1.0, 3.0, 1e3)
FLT_MAX = float(np.finfo(np.float32).max)
#: ``float32(v)`` is infinite iff ``|v| >= OVERFLOW`` (round half to even at FLT_MAX; D-codec-overflow).
OVERFLOW = 2.0**128 - 2.0**103
Q_MAX = 2**31 - 1


def quantize(x: float, eb: float) -> int:
    """docs/codec.md's rule: ``y = x / (2eb)`` (one float64 division), ``q = floor(y) + (y - floor(y) >= 0.5)``."""
    y = x / (2.0 * eb)
    f = math.floor(y)
    return f + 1 if y - f >= 0.5 else f


def _solve_step(x: float, target: float) -> float | None:
    """A step ``s`` (an even multiple of a double, so ``eb = s/2`` is exact) with ``x / s == target``."""
    s = x / target
    for _ in range(400):
        y = x / s
        if y == target and (s / 2) * 2 == s:
            return s
        s = float(np.nextafter(s, np.inf if y > target else -np.inf))
    return None


def below_half_eb(x: float) -> float | None:
    """An ``eb`` with ``x / (2eb)`` the largest double below 0.5 (``0.5 - 2^-54``): the rule gives
    ``q = 0``; ``floor(y + 0.5)`` gives 1 (``y + 0.5`` rounds to 1.0). None if none is found near ``x``."""
    s = _solve_step(x, 0.5 - 2.0**-54)
    return None if s is None else s / 2


def range_edge_eb() -> tuple[float, float]:
    """For ``x = 2^31``: an ``eb`` with quotient ``2^31 - 0.75`` (q = 2^31 - 1: MUST encode, although the
    quotient and the value lie beyond the code's limit) and one with quotient ``2^31 - 0.5`` (q = 2^31:
    refused). SPEC §9.4: the range rule is on the rounded code."""
    ok, bad = _solve_step(2.0**31, 2.0**31 - 0.75), _solve_step(2.0**31, 2.0**31 - 0.5)
    assert ok is not None and bad is not None
    return ok / 2, bad / 2


def overflow_edge_eb() -> tuple[float, float]:
    """For ``x = FLT_MAX`` (q = 1): ``eb`` with ``q·2eb`` the largest double below 2^128 - 2^103 (rounds to
    FLT_MAX: valid) and with ``q·2eb = 2^128 - 2^103`` (rounds to infinity: refused)."""
    return float(np.nextafter(OVERFLOW, 0.0)) / 2, OVERFLOW / 2


def extreme_code_eb() -> float:
    """``eb`` with ``1.0 / (2eb)`` rounding to ``2^31 - 1``: ``x = ±1`` gives ``q = ±(2^31 - 1)``, the zigzag
    codes ``2^32 - 2`` and ``2^32 - 3`` (escape bit length 32)."""
    eb = 1.0 / Q_MAX / 2
    assert quantize(1.0, eb) == Q_MAX and quantize(-1.0, eb) == -Q_MAX
    return eb


def width_codes() -> list[int]:
    """Codes ``q`` exact in float32 at ``eb = 0.5`` (``x = q``) around the widths implementations use:
    ``±(2^k - 1), ±2^k, ±(2^k + 1)`` for k = 8, 12 (version 2's escape threshold 4096), 13, 16, 23, 24 (float32's
    last exact integers: ``2^24 + 2`` stands for ``+ 1``), then ``±2^30`` and ``±(2^31 - 128)`` (the largest
    float32 below 2^31). Each is followed by 0, so version 1's deltas take the same values, and the last
    three make deltas of ``±(2^32 - 256)`` (rate 32)."""
    out: list[int] = []
    for k in (8, 12, 13, 16, 23, 24, 30):
        for v in (2**k - 1, 2**k, 2**k + (2 if k == 24 else 1)) if k != 30 else (2**k,):
            out += [v, 0, -v, 0]
    return out + [2**31 - 128, -(2**31 - 128), 2**31 - 128]


def skewed_counts(m: int) -> list[int]:
    """Fibonacci counts of ``m`` symbols: the most skewed counts, whose Huffman tree is ``m - 1`` deep
    (m = 16: 15, the limit; m = 17: 16, so SPEC §9.6's halving runs)."""
    f = [1, 1]
    while len(f) < m:
        f.append(f[-1] + f[-2])
    return f[:m]


def reciprocal_traps(eb: float, limit: int = 6, span: int = 200_000) -> list[float]:
    """float32 values beside a tie whose code differs when ``x / s`` is replaced by ``x * (1/s)``
    (SPEC §9.2 forbids the rewrite), found by search around the ties ``k + 1/2``, ``|k| < span``."""
    s = 2.0 * eb
    t = ((np.arange(-span, span) + 0.5) * s).astype(np.float32)
    c = np.concatenate([t, np.nextafter(t, np.float32(np.inf)), np.nextafter(t, np.float32(-np.inf))])
    c = c[np.isfinite(c)].astype(np.float64)

    def q(y: np.ndarray) -> np.ndarray:
        f = np.floor(y)
        return f + (y - f >= 0.5)

    with np.errstate(over="ignore", invalid="ignore"):
        hits = c[(q(c / s) != q(c * (1.0 / s))) & (np.abs(c / s) < Q_MAX)]
    return sorted(set(hits.tolist()), key=abs)[:limit]


def quantizer_edges(eb: float, ks: tuple[int, ...] = (0, 1, 2, -1, -2, 7, -8, 1000, -1001)) -> list[float]:
    """float32 values at the quantizer's boundaries for ``eb``: the ties ``(k + 1/2)·2eb`` rounded to float32
    and their float32 neighbours, ±0.0, the smallest subnormals, and a reciprocal trap where one exists."""
    out = [0.0, -0.0, 1e-45, -1e-45]
    s = 2.0 * eb
    for k in ks:
        f = np.float32((k + 0.5) * s)
        if np.isfinite(f) and abs(quantize(float(f), eb)) < Q_MAX:
            out += [float(f), float(np.nextafter(f, np.float32(np.inf))), float(np.nextafter(f, np.float32(-np.inf)))]
    out += reciprocal_traps(eb, limit=2, span=5000)
    return [v for v in out if abs(quantize(v, eb)) <= Q_MAX and abs(quantize(v, eb) * s) < OVERFLOW]


def restamp(data: bytes) -> bytes:
    """The stream with its CRC-32 recomputed over bytes [0, 24) and the body."""
    return data[:24] + struct.pack("<I", zlib.crc32(data[28:], zlib.crc32(data[:24]))) + data[28:]


def splice(data: bytes, start: int, end: int, new: bytes) -> bytes:
    """``data`` with bytes ``[start, end)`` replaced by ``new``, CRC recomputed (one defect, nothing else)."""
    return restamp(data[:start] + new + data[end:])


@dataclass
class V2Layout:
    """Byte offsets of a version-2 stream's parts (docs/codec.md "Byte format (version 2)")."""

    n: int
    cols: int
    strict: bool
    distinct: int = 0
    marks: tuple[int, int] = (0, 0)
    classes: tuple[int, int] = (0, 0)
    tables: list[tuple[int, int, int]] = field(default_factory=list)  # (class, offset of A, A)
    exceptions: tuple[int, int] = (0, 0)  # (offset of E, E)
    bits: int = 0


def v2_layout(data: bytes) -> V2Layout:
    """Parse the parts of a valid version-2 stream (no checks: its input is the reference encoder's)."""
    n = struct.unpack_from("<Q", data, 8)[0]
    cols = struct.unpack_from("<H", data, 6)[0]
    lay = V2Layout(n=n, cols=cols, strict=bool(data[5] & 1))
    pos = 28
    if cols >= 16:
        rows = n // cols
        lay.distinct = struct.unpack_from("<Q", data, pos)[0]
        w = (lay.distinct - 1).bit_length() if lay.distinct > 1 else 0
        nbits = rows + (rows - lay.distinct) * w
        lay.marks = (pos + 8, pos + 8 + (nbits + 7) // 8)
        pos = lay.marks[1]
    lay.classes = (pos, pos + cols)
    pos += cols
    for g in sorted(set(data[lay.classes[0] : lay.classes[1]])):
        a = struct.unpack_from("<H", data, pos)[0]
        lay.tables.append((g, pos, a))
        pos += 2 + (a + 1) // 2
    if lay.strict:
        e = struct.unpack_from("<Q", data, pos)[0]
        lay.exceptions = (pos, e)
        pos += 8 + 12 * e
    lay.bits = pos
    return lay
