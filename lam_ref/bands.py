"""Candidate generation by band hashing over ``Q_ε`` (paper §2.2 "L1", Appendix K.2; SPEC §5).

``σ = 1/sqrt(D)``, ``ε = rel·σ``, ``q = rint(e / (2ε))`` (numpy half-to-even, computed in float64)
as int16; bands are contiguous groups of ``r`` coordinates (the last is shorter when ``r ∤ D``);
the key of band ``b`` is ``(b, XXH3-64(q[band] as int16 little-endian bytes, seed 0))``.

Band hashing only *proposes* candidates: every proposal is verified with the exact rule of
:mod:`lam_ref.geometry`, so banded search is sound at any ``(r, rel)`` (claim ``BAND``); it equals
the oracle only when candidate recall is full (Table 26 measures recall and candidate rate;
:func:`band_recall` computes both).

XXH3-64 of short inputs (1 to 16 bytes, i.e. ``r <= 8``) is computed here vectorised over all rows
with numpy; a test proves it equal to ``xxhash.xxh3_64_intdigest`` for every length. Longer bands
call the ``xxhash`` package row by row.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np
import xxhash

from .geometry import (
    LamValueError,
    delta_sq,
    validate_embeddings,
    validate_positive,
    validate_positive_int,
    within_delta_pairs,
)

__all__ = [
    "BandIndex",
    "BandRecall",
    "BandSettings",
    "band_keys",
    "band_recall",
    "band_slices",
    "intra_block_pairs",
    "band_quantize",
    "xxh3_64_rows",
]

_M64 = np.uint64(0xFFFFFFFFFFFFFFFF)
# The first 56 bytes of XXH3's default secret (kSecret), enough for inputs of 1 to 16 bytes.
_SECRET = bytes.fromhex(
    "b8fe6c3923a44bbe7c01812cf721ad1cded46de9839097db7240a4a4b7b3671f"
    "cb79e64eccc0e578825ad07dccff7221b8084674f743248e"
)
_PRIME64_2 = np.uint64(0xC2B2AE3D27D4EB4F)
_PRIME64_3 = np.uint64(0x165667B19E3779F9)
_PRIME_MX1 = np.uint64(0x165667919E3779F9)
_PRIME_MX2 = np.uint64(0x9FB21C651E98DF25)


@dataclass(frozen=True)
class BandSettings:
    """Band width ``r`` (coordinates per band) and quantizer step ``rel = ε/σ`` (Table 4, App. K.2)."""

    r: int = 4
    rel: float = 0.2

    def __post_init__(self) -> None:
        object.__setattr__(self, "r", validate_positive_int(self.r, "r"))
        object.__setattr__(self, "rel", validate_positive(self.rel, "rel"))

    def to_json(self) -> dict:
        return asdict(self)


def _le(secret_offset: int, nbytes: int) -> np.uint64:
    return np.uint64(int.from_bytes(_SECRET[secret_offset : secret_offset + nbytes], "little"))


def _rotl(x: np.ndarray, r: int) -> np.ndarray:
    return (x << np.uint64(r)) | (x >> np.uint64(64 - r))


def _mul128_fold64(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Low 64 bits XOR high 64 bits of the 128-bit product (XXH3_mul128_fold64), in uint64 pieces."""
    m32 = np.uint64(0xFFFFFFFF)
    a_lo, a_hi = a & m32, a >> np.uint64(32)
    b_lo, b_hi = b & m32, b >> np.uint64(32)
    lo_lo = a_lo * b_lo
    hi_lo = a_hi * b_lo
    lo_hi = a_lo * b_hi
    hi_hi = a_hi * b_hi
    cross = (lo_lo >> np.uint64(32)) + (hi_lo & m32) + lo_hi
    upper = (hi_lo >> np.uint64(32)) + (cross >> np.uint64(32)) + hi_hi
    lower = (cross << np.uint64(32)) | (lo_lo & m32)
    return lower ^ upper


def _bswap64(x: np.ndarray) -> np.ndarray:
    return x.byteswap()


def xxh3_64_rows(data: np.ndarray) -> np.ndarray:
    """XXH3-64 (seed 0) of each row of a C-contiguous ``uint8[N, L]`` array, as ``uint64[N]``."""
    data = np.ascontiguousarray(data, dtype=np.uint8)
    n, length = data.shape
    if n == 0:
        return np.zeros(0, dtype=np.uint64)
    if length == 0 or length > 16:
        return np.fromiter((xxhash.xxh3_64_intdigest(row.tobytes()) for row in data), dtype=np.uint64, count=n)
    with np.errstate(over="ignore"):
        if length <= 3:
            c1 = data[:, 0].astype(np.uint64)
            c2 = data[:, length >> 1].astype(np.uint64)
            c3 = data[:, length - 1].astype(np.uint64)
            combined = (c1 << np.uint64(16)) | (c2 << np.uint64(24)) | c3 | np.uint64(length << 8)
            bitflip = (_le(0, 4) ^ _le(4, 4)) & _M64
            h = combined ^ bitflip
            h ^= h >> np.uint64(33)
            h *= _PRIME64_2
            h ^= h >> np.uint64(29)
            h *= _PRIME64_3
            h ^= h >> np.uint64(32)
            return h
        if length <= 8:
            in1 = np.ascontiguousarray(data[:, :4]).view("<u4").reshape(n).astype(np.uint64)
            in2 = np.ascontiguousarray(data[:, length - 4 :]).view("<u4").reshape(n).astype(np.uint64)
            bitflip = _le(8, 8) ^ _le(16, 8)
            h = (in2 + (in1 << np.uint64(32))) ^ bitflip
            h ^= _rotl(h, 49) ^ _rotl(h, 24)
            h *= _PRIME_MX2
            h ^= (h >> np.uint64(35)) + np.uint64(length)
            h *= _PRIME_MX2
            h ^= h >> np.uint64(28)
            return h
        bitflip1 = _le(24, 8) ^ _le(32, 8)
        bitflip2 = _le(40, 8) ^ _le(48, 8)
        lo = np.ascontiguousarray(data[:, :8]).view("<u8").reshape(n) ^ bitflip1
        hi = np.ascontiguousarray(data[:, length - 8 :]).view("<u8").reshape(n) ^ bitflip2
        acc = np.uint64(length) + _bswap64(lo) + hi + _mul128_fold64(lo, hi)
        acc ^= acc >> np.uint64(37)
        acc *= _PRIME_MX1
        acc ^= acc >> np.uint64(32)
        return acc


def band_quantize(embeddings: np.ndarray, rel: float, *, validated_unit: bool = False) -> np.ndarray:
    """The band index's codes (SPEC §5; not the L2 codec's :func:`lam_ref.codec.codec_quantize`):
    ``Q_ε(e) = rint(e / (2ε))`` with ``ε = rel/sqrt(D)``, float64 arithmetic, half-to-even, int16.

    Raises :class:`LamValueError` if a code would not fit in int16 (only possible for tiny ``rel``).
    ``validated_unit=True`` (rows already checked to be unit) skips the range scan when no unit
    coordinate can overflow.
    """
    rel = validate_positive(rel, "rel")
    e = np.asarray(embeddings, dtype=np.float64)
    if e.ndim != 2:
        raise LamValueError(f"embeddings must be 2-D (N, D), got shape {e.shape}")
    d = e.shape[1]
    eps = rel / math.sqrt(d)
    step = 2.0 * eps
    q = np.rint(e / step)
    # unit rows (|x| <= 1 + 1e-4) cannot overflow unless the step is tiny: check only then
    if q.size and (1.0001 / step > 32767 or not validated_unit) and (q.max() > 32767 or q.min() < -32768):
        raise LamValueError(f"rel={rel!r} is too small: a quantized code overflows int16 (max |q| = {np.abs(q).max():.0f})")
    return q.astype(np.int16)


def band_slices(dim: int, r: int) -> list[tuple[int, int]]:
    """Contiguous bands ``[b*r, min((b+1)*r, D))``; the last is shorter when ``r`` does not divide ``D``."""
    r = validate_positive_int(r, "r")
    return [(s, min(s + r, dim)) for s in range(0, dim, r)]


def band_keys(embeddings: np.ndarray, settings: BandSettings, *, validated_unit: bool = False) -> np.ndarray:
    """The XXH3-64 band hashes, ``uint64[N, n_bands]`` (column ``b`` is band ``b``; SPEC §5).

    The band number is part of the key: two rows collide in band ``b`` iff column ``b`` agrees.
    """
    q = band_quantize(embeddings, settings.rel, validated_unit=validated_unit)
    n, d = q.shape
    r = settings.r
    raw = np.ascontiguousarray(q.astype("<i2", copy=False)).view(np.uint8).reshape(n, 2 * d)
    full, rest = divmod(d, r)
    nb = full + (1 if rest else 0)
    out = np.empty((n, nb), dtype=np.uint64)
    if full:  # all full bands of all rows in one vectorised call
        body = np.ascontiguousarray(raw[:, : 2 * r * full]).reshape(n * full, 2 * r)
        out[:, :full] = xxh3_64_rows(body).reshape(n, full)
    if rest:
        out[:, full] = xxh3_64_rows(raw[:, 2 * r * full :])
    return out


class _SortedLevel:
    """Sorted parallel arrays: mixed key (uint64) and ``band << 32 | retained position`` (int64)."""

    def __init__(self) -> None:
        self.h = np.zeros(0, np.uint64)
        self.bp = np.zeros(0, np.int64)

    @property
    def size(self) -> int:
        return int(self.h.size)

    @property
    def nbytes(self) -> int:
        return self.h.nbytes + self.bp.nbytes

    def insert(self, h: np.ndarray, bp: np.ndarray) -> None:
        order = np.argsort(h, kind="stable")
        h, bp = h[order], bp[order]
        # after equal keys, so positions under one key stay ascending; one linear merge
        dest = np.searchsorted(self.h, h, side="right") + np.arange(h.size)
        old = np.ones(self.h.size + h.size, dtype=bool)
        old[dest] = False
        out_h = np.empty(old.size, dtype=np.uint64)
        out_h[dest] = h
        out_h[old] = self.h
        out_bp = np.empty(old.size, dtype=np.int64)
        out_bp[dest] = bp
        out_bp[old] = self.bp
        self.h, self.bp = out_h, out_bp

    def query(self, qh: np.ndarray, nb: int, rows: list[np.ndarray], pos: list[np.ndarray]) -> None:
        if self.h.size == 0:
            return
        lo = np.searchsorted(self.h, qh, side="left")
        hit = np.flatnonzero(self.h[np.minimum(lo, self.h.size - 1)] == qh)
        if hit.size == 0:
            return
        lo = lo[hit]
        c = np.searchsorted(self.h, qh[hit], side="right") - lo
        if int(c.max()) == 1:
            entry, qidx = lo, hit
        else:
            entry = np.repeat(lo - np.concatenate([[0], np.cumsum(c)[:-1]]), c) + np.arange(int(c.sum()))
            qidx = np.repeat(hit, c)
        bp = self.bp[entry]
        same_band = (bp >> 32) == (qidx % nb)
        rows.append(qidx[same_band] // nb)
        pos.append(bp[same_band] & 0xFFFFFFFF)


class BandIndex:
    """Retained positions by band key ``(band, hash)``: Algorithm 1's index ``I`` (paper §2.3).

    Two sorted levels of numpy arrays (mixed key uint64 and ``band << 32 | position`` int64:
    16 bytes per band entry, no Python object per entry), searched with vectorised ``searchsorted``: a main
    level, and a small level for rows added a few at a time (online arrivals) that is merged into
    the main level once it holds more than ``max(8192, main/8)`` entries. Keys are XORed with a
    per-band constant so that equal codes in different bands sort apart; the band is stored and
    compared, so the index is exact.
    """

    _BUFFER_LIMIT = 8192
    _MIX = np.zeros(0, np.uint64)

    def __init__(self) -> None:
        self._main = _SortedLevel()
        self._buf = _SortedLevel()

    def __len__(self) -> int:
        return self._main.size + self._buf.size

    @property
    def nbytes(self) -> int:
        return self._main.nbytes + self._buf.nbytes

    @staticmethod
    def _mix(keys: np.ndarray) -> np.ndarray:
        nb = keys.shape[1]
        if BandIndex._MIX.size < nb:
            BandIndex._MIX = _splitmix64(np.arange(max(nb, 1024), dtype=np.uint64))
        return keys ^ BandIndex._MIX[:nb]

    def add(self, keys: np.ndarray, positions: np.ndarray) -> None:
        """Register rows ``keys[k]`` (all bands) under retained position ``positions[k]``."""
        n, nb = keys.shape
        if n == 0:
            return
        h = self._mix(keys).reshape(-1)
        if n == 1:
            bp = _band_shifted(nb) | int(np.asarray(positions).reshape(-1)[0])
        else:
            bp = np.tile(_band_shifted(nb), n) | np.repeat(np.asarray(positions, dtype=np.int64), nb)
        if n > 16:
            self._flush()
            self._main.insert(h, bp)
            return
        self._buf.insert(h, bp)
        if self._buf.size > max(self._BUFFER_LIMIT, self._main.size // 8):
            self._flush()

    def _flush(self) -> None:
        if self._buf.size:
            self._main.insert(self._buf.h, self._buf.bp)
            self._buf = _SortedLevel()

    def count(self, keys: np.ndarray) -> int:
        """How many raw matches :meth:`query` with ``unique=False`` would return at most (equal keys
        across all bands, counted with two ``searchsorted`` and nothing materialised), so a caller
        can bound the candidate work before it is done."""
        if not len(self) or keys.shape[0] == 0:
            return 0
        qh = self._mix(keys).reshape(-1)
        total = 0
        for level in (self._main, self._buf):
            if level.size:
                total += int((np.searchsorted(level.h, qh, side="right") - np.searchsorted(level.h, qh, side="left")).sum())
        return total

    def query(self, keys: np.ndarray, *, unique: bool = True) -> tuple[np.ndarray, np.ndarray]:
        """Candidate pairs ``(row, position)``, unique, sorted by row then position, for query rows ``keys``.

        ``unique=False`` returns the raw matches (a pair repeats once per shared band, in no
        particular order), for callers that deduplicate more cheaply themselves.
        """
        m, nb = keys.shape
        rows: list[np.ndarray] = []
        pos: list[np.ndarray] = []
        if len(self):
            qh = self._mix(keys).reshape(-1)
            self._main.query(qh, nb, rows, pos)
            self._buf.query(qh, nb, rows, pos)
        if not rows:
            return np.zeros(0, np.int64), np.zeros(0, np.int64)
        r = np.concatenate(rows) if len(rows) > 1 else rows[0]
        p = np.concatenate(pos) if len(pos) > 1 else pos[0]
        if r.size == 0 or not unique:
            return r, p
        if m == 1:  # one query row: sort and drop repeats (cheaper than np.unique for a few ids)
            p = np.sort(p)
            p = p[np.r_[True, p[1:] != p[:-1]]] if p.size > 1 else p
            return np.zeros(p.size, np.int64), p
        width = int(p.max()) + 1
        code = np.unique(r * width + p)
        return code // width, code % width


_BAND_SHIFTED: dict[int, np.ndarray] = {}


def _band_shifted(nb: int) -> np.ndarray:
    """``arange(nb) << 32`` as int64 (band numbers in the high half of ``band << 32 | pos``), cached."""
    out = _BAND_SHIFTED.get(nb)
    if out is None:
        out = np.arange(nb, dtype=np.int64) << 32
        out.flags.writeable = False
        _BAND_SHIFTED[nb] = out
    return out


def _splitmix64(x: np.ndarray) -> np.ndarray:
    """SplitMix64 of ``x``: the per-band constants XORed into the keys (only spreads equal codes of
    different bands apart in the sorted levels; the band is stored and compared, so any constants
    give the same query results: not mutated, see docs/mutation.md)."""
    with np.errstate(over="ignore"):  # pragma: no mutate
        z = x + np.uint64(0x9E3779B97F4A7C15)  # pragma: no mutate
        z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)  # pragma: no mutate
        z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)  # pragma: no mutate
        return z ^ (z >> np.uint64(31))  # pragma: no mutate



def intra_block_pairs(keys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Pairs ``(i, j)``, ``j < i``, of rows of one block sharing at least one band key (sorted by i, j)."""
    n = keys.shape[0]
    if n < 2:
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    import scipy.sparse as sp  # imported here: scipy.sparse takes ~0.8 s to import (every CLI start)

    m = _cooccurrence_matrix(keys)
    co = sp.tril(m @ m.T, k=-1).tocsr()
    co.sort_indices()
    rows = np.repeat(np.arange(n, dtype=np.int64), np.diff(co.indptr))
    return rows, co.indices.astype(np.int64)


def _cooccurrence_matrix(keys: np.ndarray) -> Any:
    """One-hot ``(N, n_distinct_(band, key))`` ``scipy.sparse.csr_matrix``; rows sharing a band key share a column."""
    import scipy.sparse as sp

    n, nb = keys.shape
    codes = np.empty((n, nb), dtype=np.int64)
    offset = 0
    for b in range(nb):
        _, inv = np.unique(keys[:, b], return_inverse=True)
        codes[:, b] = inv.reshape(-1) + offset
        offset += int(inv.max()) + 1 if n else 0
    data = np.ones(n * nb, dtype=np.int32)
    indptr = np.arange(0, n * nb + 1, nb, dtype=np.int64)
    return sp.csr_matrix((data, codes.reshape(-1), indptr), shape=(n, offset))


@dataclass(frozen=True)
class BandRecall:
    """Table 26's quantities for one setting: recall of true merge pairs and candidate rate."""

    n: int
    dim: int
    t: float
    r: int
    rel: float
    total_pairs: int
    true_pairs: int
    true_pairs_found: int
    candidate_pairs: int

    @property
    def recall(self) -> float:
        """Share of true pairs (``sq <= δ²``) proposed by the bands; 1.0 when there are none."""
        return 1.0 if self.true_pairs == 0 else self.true_pairs_found / self.true_pairs

    @property
    def candidate_rate(self) -> float:
        """Share of all ``N(N-1)/2`` pairs that share at least one band key."""
        return 0.0 if self.total_pairs == 0 else self.candidate_pairs / self.total_pairs

    def to_json(self) -> dict:
        out = asdict(self)
        out["recall"] = self.recall
        out["candidate_rate"] = self.candidate_rate
        return out


def band_recall(
    embeddings: np.ndarray, t: float, r: int = 4, rel: float = 0.2, *, block: int = 1024, normalize: bool = False
) -> BandRecall:
    """Recall of true merge pairs and candidate rate of the band index over all pairs (Table 26).

    Examples:
        >>> e = np.array([[1, 0], [1, 0], [0, 1]], dtype=np.float32)
        >>> rec = band_recall(e, 0.9)
        >>> rec.true_pairs, rec.true_pairs_found
        (1, 1)

    True pairs are all ``i < j`` with ``sq(e_i, e_j) <= δ²`` (exact rule, found by a blocked
    float32 product and confirmed in float64); candidates are pairs sharing a band key. Memory
    stays ``O(block · N)``.
    """
    settings = BandSettings(r=r, rel=rel)
    e = validate_embeddings(embeddings, normalize=normalize)
    d2 = delta_sq(t)
    n = e.shape[0]
    total = n * (n - 1) // 2
    if n < 2:
        return BandRecall(n, e.shape[1], float(t), settings.r, settings.rel, total, 0, 0, 0)
    m = _cooccurrence_matrix(band_keys(e, settings))
    mt = m.T.tocsr()
    true_pairs = found = candidates = 0
    for s in range(0, n, block):
        stop = min(s + block, n)
        co = (m[s:stop] @ mt).tocoo()
        upper = co.col > (co.row + s)
        candidates += int(upper.sum())
        cand_rows = co.row[upper] + s
        cand_cols = co.col[upper]
        rows, cols = within_delta_pairs(e, s, stop, d2)
        true_pairs += rows.size
        if rows.size:
            cand_code = np.sort(cand_rows.astype(np.int64) * n + cand_cols)
            true_code = rows.astype(np.int64) * n + cols
            found += int(np.isin(true_code, cand_code, assume_unique=True).sum())
    return BandRecall(n, e.shape[1], float(t), settings.r, settings.rel, total, true_pairs, found, candidates)
