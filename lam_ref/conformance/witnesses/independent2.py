"""A second independent LAM implementation, written from the docs alone (issue 21 §5).

Written by reading only ``docs/spec.md``, ``docs/conformance.md``, ``docs/codec.md``,
``docs/cli.md`` and ``README.md`` -- no code under ``lam_ref/`` was read before this module passed
the suite. It uses plain numpy, ``zlib`` (CRC-32) and ``xxhash`` (XXH3-64, which SPEC §7.1 names
for L0 line hashes). Where the spec leaves room it computes differently from a direct transcription:

- ``substitute`` (SPEC §5.1, Algorithm 2) is a blocked greedy: per block of 256 arrivals a float64
  Gram product ``|a|² + |b|² - 2 a·b`` against the retained rows filters candidates with a wide
  margin (1e-6), and every candidate is confirmed with the exact rule of SPEC §2.1 (the spec's
  difference form, in float64), lowest id first. Arrivals of the same block are compared exactly.
- ``OnlineSession`` (SPEC §6, Algorithm 1) does not share code with ``substitute``: it keeps its
  retained rows in a doubling float64 buffer and scans it with the exact difference form.
- ``dedup_lines`` (SPEC §7) keys a seen-set on XXH3-64 of the line's UTF-8 bytes, walking each
  record once with an explicit run state; its stubs follow the template of SPEC §8.1
  (``[LAM:L0 n lines=rR:L]``, ``R`` the 0-based record, ``L`` the 0-based input line of the
  first copy).
- the codec (SPEC §9, docs/codec.md) writes byte format version 1 exactly; all bit planes of all
  blocks are built at once with ``numpy.packbits`` and selected by a mask, and decoding gathers the
  payloads per distinct rate.

Places where the docs were unclear to me while writing this (my reading in brackets). Items 1-4,
6-8, 10-15 were since resolved in docs/spec.md (A1-A12, §2.4, §9.4); where the resolution differed
from my first reading this module now follows the spec, as marked:

1. SPEC §6.1 says ``admit`` returns "their π entries and the turn's δ̂"; SPEC §15.1 and the
   conformance page say ``-> int64[n]``. [int64[n] only.]
2. Is ``N = 0`` valid for ``substitute``, and is an empty turn ``(0, D)`` valid for ``admit``;
   does an empty first turn fix the session's dimension? [(0, D) with D > 0 is valid and gives an
   empty π; an empty turn does not fix the dimension. Resolved otherwise (SPEC §6.1): the first
   accepted turn, even empty, fixes D; changed here, the suite's online.empty_turns caught it.]
3. The norm check "differs from 1 by more than 1e-4": on ‖e‖ or ‖e‖², in float32 or float64?
   [|‖e‖ - 1| > 1e-4 with ‖e‖ computed in float64.]
4. Which input dtypes ``substitute``/``admit`` accept (float64? integer? big-endian float32?) and
   whether non-C-ordered arrays are fine. [any real floating or integer dtype, any layout; values
   are read as float64. Resolved (SPEC §2.4): float64 is rounded to float32 first; changed here.]
5. SPEC §2.2 allows ``2 - 2a·b``, but rows may deviate from unit norm by up to 1e-4 (SPEC §2.3),
   and even float32-rounded unit rows have ‖e‖² - 1 of order 1e-7: ``2 - 2a·b`` then differs from
   ``sq`` by far more than the 1e-9 tie band. [the Gram form here keeps |a|² + |b|² and confirms
   exactly; a pure ``2 - 2a·b`` implementation is not safe under the docs' own tolerances.]
6. "Whitespace-only" (SPEC §7.1, conformance page "blank means empty or whitespace only"): ASCII
   whitespace or Unicode whitespace (``str.isspace``)? [ASCII: space, \\t, \\n, \\r, \\v, \\f.
   Resolved otherwise (SPEC §7.1): Unicode, listed; changed here, lines.text_edges caught it.]
7. L0 splits "on ``\\n``": a ``\\r`` stays part of the line (CRLF text hashes differently from LF
   text). Stated, but not whether a lone ``\\r`` or U+2028 is a line break. [only ``\\n`` splits.]
8. SPEC §7.2 drops on hash equality; two different lines with equal XXH3-64 would be dropped.
   Whether an implementation may compare texts instead is not said. [hash, as written.]
9. How a record's text that is not valid UTF-8 (lone surrogates in a Python ``str``) is hashed.
   [``surrogatepass``.]
10. SPEC §8.1's L0 stub ``[LAM:L0 n lines=rR:L]``: 0-based or 1-based, input lines or residual
    lines, and whether the conformance suite looks at anything but ``STUB_PREFIX``. [0-based, input
    lines; the suite only needs the prefix.]
11. The codec: is byte format version 1 normative (docs/codec.md "Byte format (version 1)",
    SPEC §9.3 "equal inputs give equal bytes") or may an implementation use its own format (the
    conformance page says the first independent implementation used "its own codec format")?
    [version 1, exactly.]
12. The codec's error tolerance is stated three ways: SPEC §9.3 "up to the float32 rounding of the
    reconstruction", codec.md ``eb + ulp32(x')/2 + 2⁻⁵²(|x| + eb)``, conformance page "plus one
    float32 ulp of the value". [the encoder follows the rounding rule exactly, so any of them
    holds.]
13. The valid range of ``eb``: positive and finite, but what when ``2·eb`` overflows float64, or
    ``eb`` is subnormal? [refused when ``2·eb`` is not finite; a too small ``eb`` is refused by the
    2³¹ - 1 code limit.]
14. Which shapes and dtypes ``codec_encode`` takes (the numcodecs codec takes any shape and
    refuses non-float32; the adapter signature says ``float32[n]``). [1-D, float32 of either byte
    order, any strides.]
15. The codec page's worked example prints ``<crc32>`` instead of the value, so it is not a complete
    test vector.
16. The default band width at thresholds other than 0.95 (SPEC §5.2 gives r = 4 "at t = 0.95").
    [not needed: this implementation is exhaustive, ``COMPLETE = True``.]
"""
from __future__ import annotations

import math
import struct
import zlib

import numpy as np
import xxhash

__version__ = "2.0.0"
NAME = "independent2"
COMPLETE = True
TARGET = "cpu"
STUB_PREFIX = "[LAM:"

_NORM_TOL = 1e-4
_GRAM_MARGIN = 1e-6
_BLOCK = 256


# --------------------------------------------------------------------------- validation (SPEC §2.3)


def _threshold(t) -> float:
    """SPEC §1.3: a real t in [-1, 1]; returns δ² = 2 - 2t in float64 (SPEC §2.1)."""
    if isinstance(t, (str, bytes)) or t is None:
        raise ValueError(f"t must be a real number in [-1, 1], got {t!r}")
    try:
        tv = float(t)
    except (TypeError, ValueError):
        raise ValueError(f"t must be a real number in [-1, 1], got {t!r}") from None
    if not (-1.0 <= tv <= 1.0):  # NaN fails both comparisons
        raise ValueError(f"t must be in [-1, 1], got {tv!r}")
    return 2.0 - 2.0 * tv


def _rows(embeddings, dim: int | None = None) -> np.ndarray:
    """Checked float64 copy of an (N, D) array of unit rows (SPEC §1.2, §2.3)."""
    a = np.asarray(embeddings)
    if a.dtype.kind not in "fiu":
        raise ValueError(f"embeddings must hold real numbers, got dtype {a.dtype}")
    if a.ndim != 2:
        raise ValueError(f"embeddings must have rank 2 (N, D), got shape {a.shape}")
    if a.shape[1] == 0:
        raise ValueError(f"embeddings must have D > 0, got shape {a.shape}")
    if dim is not None and a.shape[1] != dim:
        raise ValueError(f"embeddings have dimension {a.shape[1]}, but this session's dimension is {dim}")
    # SPEC §2.4: float64 (and integer) input is rounded to float32 before anything is decided
    e = np.array(a, dtype=np.float32, order="C", copy=True).astype(np.float64)
    finite = np.isfinite(e).all(axis=1)
    if not finite.all():
        r = int(np.flatnonzero(~finite)[0])
        raise ValueError(f"embeddings row {r} is not finite: {a[r].tolist()[:8]}")
    norms = np.sqrt(np.einsum("ij,ij->i", e, e))
    zero = norms == 0.0
    if zero.any():
        raise ValueError(f"embeddings row {int(np.flatnonzero(zero)[0])} is a zero row")
    off = np.abs(norms - 1.0) > _NORM_TOL
    if off.any():
        r = int(np.flatnonzero(off)[0])
        raise ValueError(f"embeddings row {r} has norm {norms[r]!r}, which differs from 1 by more than {_NORM_TOL}")
    return e


def _sq_exact(x: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """SPEC §2.1: sum((float64(a) - float64(b))**2) for one row against many."""
    diff = rows - x
    return np.einsum("ij,ij->i", diff, diff)


# --------------------------------------------------------------------------- Algorithm 2 (SPEC §5.1)


def substitute(embeddings, t) -> np.ndarray:
    """Algorithm 2 (SPEC §5.1, DEF1): blocked Gram filter, exact confirmation, lowest id."""
    d2 = _threshold(t)
    e = _rows(embeddings)
    n = e.shape[0]
    pi = np.empty(n, dtype=np.int64)
    sqn = np.einsum("ij,ij->i", e, e)
    kept: list[int] = []
    for lo in range(0, n, _BLOCK):
        hi = min(n, lo + _BLOCK)
        blk = e[lo:hi]
        prev = np.asarray(kept, dtype=np.int64)
        if prev.size:
            gram = blk @ e[prev].T
            approx = sqn[lo:hi, None] + sqn[prev][None, :] - 2.0 * gram
            cand = approx <= d2 + _GRAM_MARGIN
        else:
            cand = np.zeros((hi - lo, 0), dtype=bool)
        rows, cols = np.nonzero(cand)  # row-major: each row's candidates in ascending id order
        cuts = np.searchsorted(rows, np.arange(hi - lo + 1))
        new: list[int] = []
        for k in range(hi - lo):
            i = lo + k
            rep = -1
            ids = prev[cols[cuts[k] : cuts[k + 1]]]
            if ids.size:
                ok = _sq_exact(e[i], e[ids]) <= d2
                if ok.any():
                    rep = int(ids[np.argmax(ok)])
            if rep < 0 and new:
                ids2 = np.asarray(new, dtype=np.int64)
                ok2 = _sq_exact(e[i], e[ids2]) <= d2
                if ok2.any():
                    rep = int(ids2[np.argmax(ok2)])
            if rep < 0:
                rep = i
                new.append(i)
            pi[i] = rep
        kept.extend(new)
    return pi


# --------------------------------------------------------------------------- Algorithm 1 (SPEC §6)


class OnlineSession:
    """Algorithm 1 (SPEC §6.1, ONLINE): decisions never revised, retained rows only."""

    def __init__(self, t):
        self._d2 = _threshold(t)
        self._dim: int | None = None
        self._buf = np.empty((0, 0), dtype=np.float64)
        self._ids = np.empty(0, dtype=np.int64)
        self._count = 0  # retained rows in the buffer
        self._next = 0  # next chunk id

    def _push(self, x: np.ndarray, cid: int) -> None:
        if self._count == self._buf.shape[0]:
            cap = max(16, 2 * self._buf.shape[0])
            buf = np.empty((cap, x.shape[0]), dtype=np.float64)
            ids = np.empty(cap, dtype=np.int64)
            buf[: self._count] = self._buf[: self._count]
            ids[: self._count] = self._ids[: self._count]
            self._buf, self._ids = buf, ids
        self._buf[self._count] = x
        self._ids[self._count] = cid
        self._count += 1

    def admit(self, embeddings) -> np.ndarray:
        """Process one turn in order; the whole turn is validated before any row is admitted."""
        e = _rows(embeddings, self._dim)
        n = e.shape[0]
        out = np.empty(n, dtype=np.int64)
        if self._dim is None:  # the first accepted turn, even an empty one, fixes D (SPEC §6.1, A2)
            self._dim = e.shape[1]
            self._buf = np.empty((0, self._dim), dtype=np.float64)
        if n == 0:
            return out
        for k in range(n):
            cid = self._next + k
            rep = cid
            if self._count:
                ok = _sq_exact(e[k], self._buf[: self._count]) <= self._d2
                if ok.any():
                    rep = int(self._ids[int(np.argmax(ok))])
            if rep == cid:
                self._push(e[k], cid)
            out[k] = rep
        self._next += n
        return out


# --------------------------------------------------------------------------- L0 (SPEC §7.1, §7.2)

#: SPEC §7.1 (A4): the whitespace set, written out as the spec lists it (equal to str.isspace).
_WS = frozenset(
    [chr(c) for c in range(0x09, 0x0E)] + [chr(c) for c in range(0x1C, 0x21)] + ["\x85", "\xa0", "\u1680"]
    + [chr(c) for c in range(0x2000, 0x200B)] + ["\u2028", "\u2029", "\u202f", "\u205f", "\u3000"]
)


def _protected(line: str) -> bool:
    """Blank, whitespace-only (SPEC §7.1's set), or a stub line (SPEC §7.1)."""
    return line.startswith(STUB_PREFIX) or all(c in _WS for c in line)


def _key(line: str) -> int:
    return xxhash.xxh3_64_intdigest(line.encode("utf-8", "surrogatepass"), seed=0)


def dedup_lines(records) -> list[str]:
    """L0, the paper's rule (SPEC §7.2): drop seen lines, one stub per maximal run per record."""
    if isinstance(records, str):
        raise ValueError("records must be a list of strings, got one str")
    recs = list(records)
    for k, r in enumerate(recs):
        if not isinstance(r, str):
            raise ValueError(f"records[{k}] must be a str, got {type(r).__name__}")
    seen: dict[int, tuple[int, int]] = {}  # hash -> (record, input line) of the first copy
    out: list[str] = []
    for ri, rec in enumerate(recs):
        res: list[str] = []
        run_len = 0
        run_first: tuple[int, int] | None = None
        for li, line in enumerate(rec.split("\n")):
            if not _protected(line):
                h = _key(line)
                where = seen.get(h)
                if where is not None:
                    if run_len == 0:
                        run_first = where
                    run_len += 1
                    continue
                seen[h] = (ri, li)
            if run_len:
                res.append(f"{STUB_PREFIX}L0 {run_len} lines=r{run_first[0]}:{run_first[1]}]")
                run_len = 0
            res.append(line)
        if run_len:
            res.append(f"{STUB_PREFIX}L0 {run_len} lines=r{run_first[0]}:{run_first[1]}]")
        out.append("\n".join(res))
    return out


# --------------------------------------------------------------------------- L2 codec (SPEC §9)

_MAGIC = b"LSZP"
_HEADER = struct.Struct("<4sBBHQd")  # 24 bytes, then the CRC-32 as <I
_B = 32
_QMAX = 2**31 - 1
_F32MAX = float(np.finfo(np.float32).max)


def _eb(eb) -> float:
    if isinstance(eb, (str, bytes)) or eb is None:
        raise ValueError(f"eb must be a positive finite number, got {eb!r}")
    try:
        v = float(eb)
    except (TypeError, ValueError):
        raise ValueError(f"eb must be a positive finite number, got {eb!r}") from None
    if not (math.isfinite(v) and v > 0.0):
        raise ValueError(f"eb must be a positive finite number, got {v!r}")
    if not math.isfinite(2.0 * v):
        raise ValueError(f"eb = {v!r} is too large: 2*eb overflows float64")
    return v


def _to_f32(q: np.ndarray, s: float) -> np.ndarray:
    with np.errstate(over="ignore", invalid="ignore"):
        return (q.astype(np.float64) * s).astype(np.float32)


def codec_encode(x, eb) -> bytes:
    """L2 encode, byte format version 1 of docs/codec.md (SPEC §9.2)."""
    ebv = _eb(eb)
    a = np.asarray(x)
    if a.ndim != 1:
        raise ValueError(f"x must be 1-D float32[n], got shape {a.shape}")
    if a.dtype.kind != "f" or a.dtype.itemsize != 4:
        raise ValueError(f"x must be float32, got dtype {a.dtype}")
    x64 = a.astype(np.float64)
    n = x64.shape[0]
    bad = ~np.isfinite(x64)
    if bad.any():
        raise ValueError(f"x[{int(np.flatnonzero(bad)[0])}] is not finite")
    s = 2.0 * ebv
    with np.errstate(over="ignore", invalid="ignore"):  # an overflowing quotient is refused below
        y = x64 / s
        fl = np.floor(y)
        qf = fl + (y - fl >= 0.5)
    if n and not np.abs(qf).max() <= _QMAX:
        raise ValueError(f"eb = {ebv!r} is too small for x: a code exceeds 2**31 - 1")
    q = qf.astype(np.int64)
    if n and not np.isfinite(_to_f32(q, s)).all():
        raise ValueError(f"eb = {ebv!r} is too large: a reconstruction overflows float32")
    nb = -(-n // _B)
    qb = np.zeros(nb * _B, dtype=np.int64)
    qb[:n] = q
    qb = qb.reshape(nb, _B)
    d = np.diff(qb, axis=1, prepend=0)
    d.reshape(-1)[n:] = 0  # padding slots carry delta 0
    mag = np.abs(d).astype(np.uint64)
    rate = np.zeros(nb, dtype=np.int64)
    mx = mag.max(axis=1) if nb else np.zeros(0, dtype=np.uint64)
    for b in range(33):
        rate += (mx >> np.uint64(b)) != 0
    layers = np.empty((nb, 33, _B), dtype=bool)
    layers[:, 0] = d < 0
    for p in range(32):
        layers[:, 1 + p] = ((mag >> np.uint64(p)) & np.uint64(1)) != 0
    packed = np.packbits(layers, axis=2)  # MSB first: value j at bit 7 - j % 8 of byte j // 8
    keep = np.arange(33)[None, :] <= rate[:, None]
    keep &= (rate > 0)[:, None]
    body = rate.astype(np.uint8).tobytes() + packed[keep].tobytes()
    head = _HEADER.pack(_MAGIC, 1, 0, _B, n, ebv)
    crc = zlib.crc32(body, zlib.crc32(head)) & 0xFFFFFFFF
    return head + struct.pack("<I", crc) + body


def codec_decode(b) -> np.ndarray:
    """L2 decode (docs/codec.md, version 1); refuses every stream the encoder could not write."""
    if not isinstance(b, (bytes, bytearray, memoryview)):
        raise ValueError(f"data must be bytes, got {type(b).__name__}")
    buf = bytes(b)
    if len(buf) < 28:
        raise ValueError(f"codec stream has a short header: {len(buf)} bytes < 28")
    magic, ver, flags, bs, n, ebv = _HEADER.unpack_from(buf, 0)
    (crc,) = struct.unpack_from("<I", buf, 24)
    if magic != _MAGIC:
        raise ValueError(f"codec stream has a wrong magic {magic!r}")
    if ver != 1:
        raise ValueError(f"codec stream has unsupported version {ver}")
    if flags != 0:
        raise ValueError(f"codec stream has non-zero flags {flags}")
    if bs % 8 or not 8 <= bs <= 4096:
        raise ValueError(f"codec stream has block size {bs} out of range")
    if not (math.isfinite(ebv) and ebv > 0.0 and math.isfinite(2.0 * ebv)):
        raise ValueError(f"codec stream has eb {ebv!r} out of range")
    nb = -(-n // bs)
    if nb > len(buf) - 28:
        raise ValueError(f"codec stream is truncated: {nb} rate bytes needed, {len(buf) - 28} present")
    rates = np.frombuffer(buf, dtype=np.uint8, count=nb, offset=28).astype(np.int64)
    if nb and rates.max() > 32:
        raise ValueError(f"codec stream has a rate {int(rates.max())} above 32")
    w = bs // 8
    sizes = np.where(rates > 0, (1 + rates) * w, 0)
    want = 28 + nb + int(sizes.sum())
    if len(buf) < want:
        raise ValueError(f"codec stream is truncated: {len(buf)} bytes, {want} expected")
    if len(buf) > want:
        raise ValueError(f"codec stream has {len(buf) - want} trailing bytes")
    if zlib.crc32(buf[28:], zlib.crc32(buf[:24])) & 0xFFFFFFFF != crc:
        raise ValueError("codec stream fails its CRC-32 check")
    pay = np.frombuffer(buf, dtype=np.uint8, offset=28 + nb)
    starts = np.concatenate([[0], np.cumsum(sizes)[:-1]]) if nb else np.zeros(0, dtype=np.int64)
    d = np.zeros((nb, bs), dtype=np.int64)
    for r in np.unique(rates[rates > 0]):
        blocks = np.flatnonzero(rates == r)
        idx = starts[blocks][:, None] + np.arange((1 + r) * w)[None, :]
        bits = np.unpackbits(pay[idx].reshape(len(blocks), 1 + r, w), axis=2).astype(np.int64)
        mag = np.zeros((len(blocks), bs), dtype=np.int64)
        for p in range(r):
            mag |= bits[:, 1 + p] << p
        if (bits[:, r] == 0).all(axis=1).any():
            raise ValueError(f"codec stream has a rate byte {r} above the bit length of its block's deltas")
        if ((bits[:, 0] == 1) & (mag == 0)).any():
            raise ValueError("codec stream has a sign bit on a zero delta")
        d[blocks] = np.where(bits[:, 0] == 1, -mag, mag)
    if d.reshape(-1)[n:].any():
        raise ValueError("codec stream has non-zero padding")
    q = np.cumsum(d, axis=1).reshape(-1)[:n]
    if n and np.abs(q).max() > _QMAX:
        raise ValueError("codec stream holds a code beyond 2**31 - 1")
    out = _to_f32(q, 2.0 * ebv)
    if n and not np.isfinite(out).all():
        raise ValueError("codec stream's reconstruction overflows float32")
    return np.ascontiguousarray(out)
