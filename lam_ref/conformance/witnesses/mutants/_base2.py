"""A second correct skeleton for mutants m46 onwards: finer hooks, a port-style layout, codec v1.

:class:`Base2` extends :class:`~lam_ref.conformance.witnesses.mutants._base.Base` the way a C, C++, Rust or
CUDA port is usually laid out, so that a mutant can put one realistic bug where such ports err:

- **Algorithm 1/2** (SPEC §5, §6) keep the retained rows in a growing float64 buffer with their ids
  (:class:`Session2`) and a complete grid index on the first coordinates (cells at least δ wide, so
  every pair within δ lies in neighbouring cells; exact, and fast on large structured inputs). The
  hooks: :meth:`Base2.ingest` (reading the caller's array), :meth:`Base2.scan` (which retained rows
  an arrival is compared with), :meth:`Base2.merge_test`, :meth:`Base2.assign_id`, the batch
  driver :meth:`Base2.substitute` and the returned array :meth:`Base2.emit`.
- **L0** (SPEC §7) splits, keys, protects and stubs through hooks (:meth:`Base2.split_lines`,
  :meth:`Base2.line_key`, :meth:`Base2.is_blank`, :meth:`Base2.is_stub`, a seen-set object).
- **L2** (SPEC §9) is the byte format version 1 of docs/codec.md (magic ``LSZP``, block size 32,
  CRC-32, rate bytes, sign bitmap and bit planes, the float64 round-half-up quantizer), with one
  hook per step and the decoder's whole refusal list.

``Base2`` itself conforms: it is exported as :mod:`.controls.c00_base2` and must pass every check.
"""

from __future__ import annotations

import itertools
import math
import struct
import zlib
from typing import Any

import numpy as np

from ....geometry import LamValueError
from ._base import Base
from ._base import export as _export

__all__ = ["Base2", "Session2", "export"]

_MAGIC = b"LSZP"
_QMAX = 2**31 - 1


class Session2:
    """Algorithm 1 state (SPEC §6.1): t, δ², retained rows and ids, a grid index, the next id."""

    def __init__(self, owner: Base2, t: Any) -> None:
        self.owner = owner
        self.t = owner.check_t(t)
        self.d2 = owner.threshold(self.t)
        self.dim: int | None = None
        self.rows = np.zeros((0, 0), dtype=np.float64)
        self.ids = np.zeros(0, dtype=np.int64)
        self.count = 0
        self.next_id = 0
        self.cell = float(np.sqrt(self.d2)) if self.d2 >= 0.0025 else 0.05  # cells at least δ wide (NaN: 0.05)
        self.grid: dict[tuple[int, ...], list[int]] = {}  # cell -> buffer slots

    # -- the retained buffer ---------------------------------------------------------------------
    def key(self, x: np.ndarray) -> tuple[int, ...]:
        return tuple(math.floor(v / self.cell) for v in x[: self.owner.GRID_DIMS].tolist())

    def push(self, x: np.ndarray, cid: int) -> None:
        if self.count == self.rows.shape[0]:
            cap = max(64, 2 * self.rows.shape[0])
            rows = np.zeros((cap, x.shape[0]), dtype=np.float64)
            ids = np.zeros(cap, dtype=np.int64)
            if self.count:
                rows[: self.count] = self.rows[: self.count]
            ids[: self.count] = self.ids[: self.count]
            self.rows, self.ids = rows, ids
        self.rows[self.count] = x
        self.ids[self.count] = cid
        self.grid.setdefault(self.key(x), []).append(self.count)
        self.count += 1

    def neighbours(self, x: np.ndarray) -> np.ndarray:
        """Buffer slots in the 3^k cells around ``x`` (every row within δ is among them), ascending."""
        k = self.key(x)
        slots: list[int] = []
        for off in itertools.product((-1, 0, 1), repeat=len(k)):
            slots.extend(self.grid.get(tuple(c + o for c, o in zip(k, off)), ()))
        return np.array(sorted(slots), dtype=np.int64)

    def admit(self, embeddings: Any) -> np.ndarray:
        return self.owner.admit2(self, embeddings)


def export(impl: Base2, namespace: dict[str, Any]) -> None:
    """Put the SPEC §15 names of ``impl`` into a module's ``namespace``, with its ``PROFILES``."""
    _export(impl, namespace)
    namespace["PROFILES"] = set(impl.PROFILES)


class Base2(Base):
    """A correct SPEC §15 implementation with port-style hooks (see the module docstring)."""

    #: The profiles it claims (SPEC §15.4): the codec is byte format version 1; L0 stubs are its own.
    PROFILES = frozenset({"core", "online", "l0", "codec-bound", "codec-v1"})

    Session = Session2
    GRID_DIMS = 2
    BLOCK = 32

    NORM_TOL = 1e-4
    QMAX = _QMAX
    REFUSE_TRAILING = True

    # -- validation (SPEC §2.3) ----------------------------------------------------------------
    def check_t(self, t: Any) -> float:
        if isinstance(t, (bool, str, bytes)) or not isinstance(t, (int, float, np.floating, np.integer)):
            raise LamValueError(f"t must be a number in [-1, 1], got {t!r}")
        v = float(t)
        if not self.t_in_range(v):
            raise LamValueError(f"t must be in [-1, 1], got {v!r}")
        return v

    def threshold(self, t: float) -> float:
        """δ² = 2 - 2t in float64 (SPEC §2.1); ``t`` was validated by :meth:`check_t`."""
        return 2.0 - 2.0 * t

    def t_in_range(self, t: float) -> bool:
        return -1.0 <= t <= 1.0  # False for NaN

    def norms(self, e: np.ndarray) -> np.ndarray:
        """Row norms ‖e‖ in float64."""
        return np.sqrt(np.einsum("ij,ij->i", e, e))

    def norm_bad(self, norms: np.ndarray) -> np.ndarray:
        return np.abs(norms - 1.0) > self.NORM_TOL

    def check_rows(self, embeddings: Any, name: str, dim: int | None = None) -> np.ndarray:
        """SPEC §2.3: rank 2, D > 0, the session's D, finite, no zero row, unit norm within 1e-4;
        returns a float64 C-ordered copy."""
        arr = self.raw_rows(embeddings)
        if arr.dtype.kind not in "fiu":
            raise LamValueError(f"{name} must be numeric, got dtype {arr.dtype}")
        if arr.ndim != 2 or arr.shape[1] == 0:
            raise LamValueError(f"{name} must have shape (N, D) with D > 0, got {arr.shape}")
        if dim is not None and arr.shape[1] != dim:
            raise LamValueError(f"{name} has dimension D = {arr.shape[1]}, expected {dim}")
        e = np.array(arr, dtype=np.float64, order="C")
        finite = np.isfinite(e).all(axis=1)
        if not finite.all():
            raise LamValueError(f"{name} row {int(np.flatnonzero(~finite)[0])} is not finite")
        nrm = self.norms(e)
        if (nrm == 0).any():
            raise LamValueError(f"{name} row {int(np.flatnonzero(nrm == 0)[0])} is a zero row")
        bad = self.norm_bad(nrm)
        if bad.any():
            r = int(np.flatnonzero(bad)[0])
            raise LamValueError(f"{name} row {r} has norm {nrm[r]!r}, not 1 within {self.NORM_TOL}")
        return e

    def raw_rows(self, embeddings: Any) -> np.ndarray:
        """How the caller's array is read (numpy honours dtype, byte order, strides, order)."""
        return np.asarray(embeddings)

    # -- Algorithm 1 / 2 ---------------------------------------------------------------------
    def ingest(self, embeddings: Any, dim: int | None) -> np.ndarray:
        """Validate (SPEC §2.3) and read the caller's rows as float64, whatever their layout."""
        return self.check_rows(embeddings, "embeddings", dim=dim)

    def merge_test(self, sq: np.ndarray, d2: float) -> np.ndarray:
        return self.within(sq, d2)

    def sq_to(self, x: np.ndarray, rows: np.ndarray) -> np.ndarray:
        diff = rows - x
        return np.einsum("ij,ij->i", diff, diff)

    def scan(self, s: Session2, x: np.ndarray) -> np.ndarray:
        """The buffer slots an arrival is compared with (every retained row that may be within δ)."""
        return s.neighbours(x)

    def witness(self, s: Session2, x: np.ndarray) -> int | None:
        """The lowest retained id within δ of ``x``, or ``None`` (SPEC §5.1)."""
        slots = self.scan(s, x)
        if slots.size == 0:
            return None
        ok = self.merge_test(self.sq_to(x, s.rows[slots]), s.d2)
        if not ok.any():
            return None
        return int(s.ids[slots[int(np.argmax(ok))]])

    def assign_id(self, s: Session2, k: int) -> int:
        return s.next_id + k

    def decide_row(self, s: Session2, x: np.ndarray, cid: int) -> int:
        rep = self.witness(s, x)
        if rep is None:
            s.push(x, cid)
            return cid
        return rep

    def emit(self, s: Session2, pi: np.ndarray) -> np.ndarray:
        """The array handed back to the caller (a fresh int64 array)."""
        return pi

    def emit_decoded(self, x: np.ndarray) -> np.ndarray:
        """The decoded array handed back to the caller (a fresh float32 array)."""
        return x

    def admit2(self, s: Session2, embeddings: Any) -> np.ndarray:
        e = self.ingest(embeddings, s.dim)
        n = e.shape[0]
        pi = np.empty(n, dtype=np.int64)
        if s.dim is None:  # the first accepted turn, even an empty one, fixes D (SPEC §6.1)
            s.dim = e.shape[1]
        for k in range(n):
            pi[k] = self.decide_row(s, e[k], self.assign_id(s, k))
        s.next_id += n
        return self.emit(s, pi)

    def substitute(self, embeddings: Any, t: float) -> np.ndarray:
        return self.online_session(t).admit(embeddings)

    # -- L0 ------------------------------------------------------------------------------------
    def split_lines(self, record: str) -> list[str]:
        return record.split("\n")

    def join_lines(self, lines: list[str]) -> str:
        return "\n".join(lines)

    def line_key(self, line: str) -> Any:
        """What the seen-set stores for a line (SPEC §7.1: its UTF-8 bytes, via XXH3-64)."""
        return line.encode("utf-8", "surrogatepass")

    def is_blank(self, line: str) -> bool:
        return not line.strip()

    def is_stub(self, line: str) -> bool:
        return line.startswith(self.STUB_PREFIX)

    def protected(self, line: str) -> bool:
        return self.is_blank(line) or self.is_stub(line)

    def new_seen(self) -> Any:
        return set()

    def dedup_record(self, record: str, seen: Any) -> str:
        out: list[str] = []
        run = 0
        for line in self.split_lines(record):
            if not self.protected(line):
                key = self.line_key(line)
                if key in seen:
                    run += 1
                    continue
                seen.add(key)
            if run:
                out.append(self.stub(run))
                run = 0
            out.append(line)
        if run:
            out.append(self.stub(run))
        return self.join_lines(out)

    def dedup_lines(self, records: list[str]) -> list[str]:
        seen = self.new_seen()
        return [self.dedup_record(r, seen) for r in records]

    # -- L2: byte format version 1 (docs/codec.md) ------------------------------------------
    def check_eb(self, eb: Any) -> float:
        if isinstance(eb, bool) or not isinstance(eb, (int, float, np.floating, np.integer)):
            raise LamValueError(f"eb must be a positive finite number, got {eb!r}")
        v = float(eb)
        if not (np.isfinite(v) and v > 0 and np.isfinite(2.0 * v)):
            raise LamValueError(f"eb must be a positive finite number with 2*eb finite, got {eb!r}")
        return v

    def read_vector(self, x: Any) -> np.ndarray:
        arr = np.asarray(x)
        if arr.ndim != 1 or arr.dtype.kind != "f" or arr.dtype.itemsize != 4:
            raise LamValueError(f"x must be a float32[n] vector, got {arr.dtype} of shape {arr.shape}")
        bad = np.flatnonzero(~np.isfinite(arr))
        if bad.size:
            raise LamValueError(f"x[{bad[0]}] is {arr[bad[0]]!r}; the codec needs finite values")
        return arr.astype(np.float64)

    def quantize(self, x: np.ndarray, eb: float) -> np.ndarray:
        """docs/codec.md: y = x / (2 eb) in float64, round half up, |q| <= 2**31 - 1."""
        with np.errstate(over="ignore", invalid="ignore"):
            y = x / (2.0 * eb)
            f = np.floor(y)
            q = f + (y - f >= 0.5)
        if q.size and not np.abs(q).max() <= self.QMAX:
            raise LamValueError(f"eb = {eb!r} is too small for x: a code exceeds 2**31 - 1")
        return q.astype(np.int64)

    def reconstruct(self, q: np.ndarray, eb: float) -> np.ndarray:
        with np.errstate(over="ignore"):
            return (q.astype(np.float64) * (2.0 * eb)).astype(np.float32)

    def n_blocks(self, n: int, bs: int) -> int:
        return -(-n // bs)

    def deltas(self, q: np.ndarray, n: int, bs: int) -> np.ndarray:
        """(blocks, bs) deltas: the first of a block against 0, padding 0."""
        nb = self.n_blocks(n, bs)
        qb = np.zeros(nb * bs, dtype=np.int64)
        m = min(n, nb * bs)
        qb[:m] = q[:m]
        qb = qb.reshape(nb, bs)
        d = np.diff(qb, axis=1, prepend=0)
        d.reshape(-1)[n:] = 0
        return d

    def prefix(self, d: np.ndarray) -> np.ndarray:
        """Codes back from the deltas: a prefix sum inside each block."""
        return np.cumsum(d, axis=1)

    def plane_order(self, r: int) -> range:
        """The order bit planes are written in: plane 0 (least significant) first."""
        return range(r)

    def rate(self, d: np.ndarray) -> np.ndarray:
        """Per block, the bit length of the largest |d|."""
        mx = np.abs(d).max(axis=1) if d.size else np.zeros(d.shape[0], dtype=np.int64)
        r = np.zeros(d.shape[0], dtype=np.int64)
        for b in range(33):
            r += (mx >> b) != 0
        return r

    def pack(self, bits: np.ndarray) -> bytes:
        """Bits (a multiple of 8) to bytes, value j at bit 7 - j % 8 of byte j // 8."""
        return np.packbits(bits.astype(np.uint8)).tobytes()

    def unpack(self, data: bytes, count: int) -> np.ndarray:
        return np.unpackbits(np.frombuffer(data, dtype=np.uint8))[:count].astype(np.int64)

    def read_rates(self, raw: bytes) -> list[int]:
        """The rate bytes, unsigned (docs/codec.md: one uint8 per block)."""
        return list(raw)

    def header(self, n: int, eb: float, bs: int) -> bytes:
        return struct.pack("<4sBBHQd", _MAGIC, 1, 0, bs, n, eb)

    def read_header(self, data: bytes) -> tuple[bytes, int, int, int, int, float, int]:
        magic, ver, flags, bs, n, eb = struct.unpack_from("<4sBBHQd", data, 0)
        (crc,) = struct.unpack_from("<I", data, 24)
        return magic, ver, flags, bs, n, eb, crc

    def crc(self, head: bytes, body: bytes) -> int:
        return zlib.crc32(head + body) & 0xFFFFFFFF

    def crc_bytes(self, crc: int) -> bytes:
        return struct.pack("<I", crc)

    def block_payload(self, d: np.ndarray, mag: np.ndarray, r: int) -> bytes:
        parts = [self.pack(d < 0)]
        for p in self.plane_order(r):
            parts.append(self.pack((mag >> p) & 1))
        return b"".join(parts)

    def check_block(self, k: int, r: int, signs: np.ndarray, mag: np.ndarray) -> None:
        """Refuse a block the encoder could not have written (rate too large, sign on a zero)."""
        if int(mag.max()).bit_length() != r:
            raise LamValueError(f"data block {k} has rate {r} but its largest |delta| is {int(mag.max())}")
        if (signs.astype(bool) & (mag == 0)).any():
            raise LamValueError(f"data block {k} has a sign bit on a zero delta")

    def check_padding(self, d: np.ndarray, n: int) -> None:
        if d.reshape(-1)[n:].any():
            raise LamValueError("data has non-zero padding")

    def codec_encode(self, x: Any, eb: Any) -> bytes:
        ebv = self.check_eb(eb)
        x64 = self.read_vector(x)
        n, bs = x64.shape[0], self.BLOCK
        q = self.quantize(x64, ebv)
        if n and not np.isfinite(self.reconstruct(q, ebv)).all():
            raise LamValueError(f"eb = {ebv!r} is too large: a reconstruction overflows float32")
        d = self.deltas(q, n, bs)
        mag = np.abs(d)
        rates = self.rate(d)
        body = bytes(np.asarray(rates, dtype=np.uint8)) + b"".join(
            self.block_payload(d[k], mag[k], int(rates[k])) for k in range(d.shape[0]) if rates[k] > 0
        )
        head = self.header(n, ebv, bs)
        return head + self.crc_bytes(self.crc(head, body)) + body

    def codec_decode(self, data: Any) -> np.ndarray:
        if not isinstance(data, (bytes, bytearray, memoryview)):
            raise LamValueError(f"data must be bytes, got {type(data).__name__}")
        data = bytes(data)
        if len(data) < 28:
            raise LamValueError(f"data has {len(data)} bytes, shorter than the 28-byte header")
        magic, ver, flags, bs, n, eb, crc = self.read_header(data)
        if magic != _MAGIC or ver != 1 or flags != 0:
            raise LamValueError(f"data is not a version-1 codec stream (magic {magic!r}, version {ver}, flags {flags})")
        if bs % 8 or not 8 <= bs <= 4096:
            raise LamValueError(f"data has block size {bs}, not a multiple of 8 in [8, 4096]")
        if not (np.isfinite(eb) and eb > 0 and np.isfinite(2.0 * eb)):
            raise LamValueError(f"data has eb = {eb!r} out of range")
        nb = self.n_blocks(n, bs)
        if nb > len(data) - 28:
            raise LamValueError(f"data is truncated: {nb} rate bytes needed")
        rates = self.read_rates(data[28 : 28 + nb])
        if any(r > 32 for r in rates):
            raise LamValueError(f"data has a rate above 32: {max(rates)}")
        w = bs // 8
        want = 28 + nb + sum(w * (1 + r) for r in rates if r)
        if len(data) < want:
            raise LamValueError(f"data is truncated: {len(data)} bytes, a stream of these rates has {want}")
        if self.REFUSE_TRAILING and len(data) > want:
            raise LamValueError(f"data has {len(data) - want} trailing bytes after the last block")
        if self.crc(data[:24], data[28:want]) != crc:
            raise LamValueError("data fails its CRC-32 check")
        d = np.zeros((nb, bs), dtype=np.int64)
        pos = 28 + nb
        for k, r in enumerate(rates):
            if not r:
                continue
            signs = self.unpack(data[pos : pos + w], bs)
            mag = np.zeros(bs, dtype=np.int64)
            for idx, p in enumerate(self.plane_order(r)):
                mag |= self.unpack(data[pos + w * (1 + idx) : pos + w * (2 + idx)], bs) << p
            pos += w * (1 + r)
            self.check_block(k, r, signs, mag)
            d[k] = np.where(signs == 1, -mag, mag)
        self.check_padding(d, n)
        flat = self.prefix(d).reshape(-1)
        q = np.zeros(n, dtype=np.int64)
        q[: min(n, flat.size)] = flat[: min(n, flat.size)]
        if q.size and np.abs(q).max() > self.QMAX:
            raise LamValueError("data holds a code beyond 2**31 - 1")
        out = self.reconstruct(q, eb)
        if not np.isfinite(out).all():
            raise LamValueError("data reconstructs beyond float32")
        return self.emit_decoded(out)
