"""Greedy first-occurrence δ-substitution: the oracle and Algorithm 2 (paper §2.4, Appendix A; SPEC §5).

The **oracle** is the definition: for ``i = 0..N-1``, ``π[i]`` is the lowest retained ``y < i``
with ``sq(e_i, e_y) <= δ²``, else ``π[i] = i``. It realises Definition 1 (claim ``DEF1``): every
deleted chunk has a retained representative within δ, so Theorem 1 (``THM1``) applies with the
measured bound ``δ̂``.

:class:`Matcher` is the one engine behind :func:`substitute` (batch, Algorithm 2) and
:class:`lam_ref.online.OnlineSession` (Algorithm 1): both feed arrivals in order into the same
object, which is why online ≡ batch (SPEC §6) holds by construction and is also tested.

Two candidate generators, both confirmed with the exact rule of :mod:`lam_ref.geometry`:

* ``exhaustive``: blocked float32 matrix products against the retained set, filtered with a
  provable rounding margin and confirmed in float64 — equal to the oracle, never an ``N × N``
  matrix;
* ``banded``: the band index of :mod:`lam_ref.bands` — sound always, complete when recall is full.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from . import digest as _digest
from .bands import BandIndex, BandSettings, band_keys, intra_block_pairs
from .devices import array_module
from .geometry import (
    LamValueError,
    delta_from_t,
    delta_sq,
    kept_mask,
    sq_dist_rows,
    validate_embeddings,
    validate_threshold,
)
from .geometry import dot_error_bound as _dot_error_bound
from .geometry import filter_threshold as _filter_threshold

__all__ = ["MapView", "Matcher", "SubstitutionResult", "ThresholdMapView", "oracle", "substitute"]

_BLOCK = 512
# Banded blocks whose raw band matches exceed 1/_DENSE of the block × retained products verify
# through the blocked float32 products (the exhaustive filter restricted to the band candidates)
# instead of gathering each candidate pair: gathering costs far more per pair than a product.
_DENSE = 256
# Bounded candidate work (SPEC §5.2, D13): when the raw band matches of a block (of one arrival)
# against the retained set exceed this many and 1/_DENSE of its pairs, they are never gathered:
# every retained id is a candidate and the blocked float32 products filter them, as in exhaustive
# mode (memory O(block × retained) floats in the reused buffer, not O(pairs × bands) indices).
_RAW_CAP = 1 << 22
_RAW_CAP_ONE = 1 << 16
def _to_host(x: Any) -> np.ndarray:
    return x if isinstance(x, np.ndarray) else x.get()


def _unique_pairs(rows: np.ndarray, pos: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Distinct ``(row, pos)`` pairs sorted by row then pos."""
    width = int(pos.max()) + 1
    code = np.unique(rows * width + pos)
    return code // width, code % width


class Matcher:
    """Retained set ``R`` plus candidate index; admits arrivals in order, never revising (Alg. 1/2).

    Arrivals are processed in blocks: candidates against the retained set before the block and
    among the block's own earlier arrivals are generated vectorised (band index or float32
    products), every candidate is confirmed with the exact float64 rule, and a short in-order
    scan resolves arrivals that can only match an earlier arrival of the same block. The result
    is the same as testing one arrival at a time: the lowest retained id within δ, or retain.
    """

    def __init__(self, t: float, dim: int, *, exhaustive: bool = False, settings: BandSettings | None = None,
                 device: str = "cpu"):
        self.t = validate_threshold(t)
        self.d2 = delta_sq(self.t)
        if isinstance(dim, bool) or not isinstance(dim, (int, np.integer)) or dim < 1:
            raise LamValueError(f"dim must be a positive integer, got {dim!r}")
        self.dim = int(dim)
        self.exhaustive = bool(exhaustive)
        self.settings = settings if settings is not None else BandSettings()
        self.next_id = 0
        self._emb = np.zeros((64, self.dim), dtype=np.float32)
        self._norms = np.zeros(64, dtype=np.float64)
        self._ids = np.zeros(64, dtype=np.int64)
        self.n_retained = 0
        self._index = BandIndex()
        self.pairs_verified = 0
        self.device = device
        self._xp = array_module(device)
        if self._xp is not np and not self.exhaustive:
            raise LamValueError(f"device {device!r} applies to exhaustive mode only (the band index runs on the CPU)")
        # the retained rows where the products run: the host array itself, or a device copy for cuda
        self._emb_x = self._emb if self._xp is np else self._xp.zeros(self._emb.shape, dtype=np.float32)
        self._gbuf = self._xp.zeros(0, dtype=np.float32)  # reused output of the products

    @property
    def retained_ids(self) -> np.ndarray:
        return self._ids[: self.n_retained]

    @property
    def retained_embeddings(self) -> np.ndarray:
        return self._emb[: self.n_retained]

    @property
    def nbytes(self) -> int:
        """Bytes held for the retained set and its index (capacity included: 64 rows at first,
        ``reserve(n)`` room for ``n``, and a full matcher grows to ``max(needed, 1.5 × capacity)``)."""
        return self._emb.nbytes + self._norms.nbytes + self._ids.nbytes + self._index.nbytes

    def reserve(self, capacity: int) -> None:
        """Make room for ``capacity`` retained rows at once (a batch run knows N; no regrowth copies)."""
        cap = self._emb.shape[0]
        if capacity > cap:
            self._grow(capacity)

    def _grow(self, new: int) -> None:
        k = self.n_retained
        emb = np.empty((new, self.dim), dtype=np.float32)
        emb[:k] = self._emb[:k]
        norms = np.zeros(new)
        norms[:k] = self._norms[:k]
        ids = np.zeros(new, dtype=np.int64)
        ids[:k] = self._ids[:k]
        self._emb, self._norms, self._ids = emb, norms, ids

    def _append(self, rows: np.ndarray, ids: np.ndarray, keys: np.ndarray | None) -> None:
        k = rows.shape[0]
        need = self.n_retained + k
        cap = self._emb.shape[0]
        if need > cap:
            self._grow(max(need, cap + cap // 2))
        s = self.n_retained
        self._emb[s:need] = rows
        r64 = rows.astype(np.float64)
        self._norms[s:need] = (r64 * r64).sum(axis=1)
        self._ids[s:need] = ids
        if self._xp is np:
            self._emb_x = self._emb
        else:
            if self._emb_x.shape[0] < self._emb.shape[0]:
                grown = self._xp.zeros(self._emb.shape, dtype=np.float32)
                grown[: s] = self._emb_x[:s]
                self._emb_x = grown
            self._emb_x[s:need] = self._xp.asarray(rows)
        if keys is not None:
            self._index.add(keys, np.arange(s, need))
        self.n_retained = need

    def _keys(self, rows: np.ndarray) -> np.ndarray | None:
        return None if self.exhaustive else band_keys(rows, self.settings, validated_unit=True)

    def restore(self, embeddings: np.ndarray, ids: np.ndarray, next_id: int) -> None:
        """Rebuild state from retained rows and their ids (used by ``OnlineSession.load``)."""
        self.next_id = int(next_id)
        self.n_retained = 0
        self._index = BandIndex()
        if embeddings.shape[0]:
            self._append(embeddings, ids, self._keys(embeddings))

    def admit(self, e: np.ndarray) -> tuple[np.ndarray, np.ndarray, int]:
        """Admit validated float32 rows in order. Returns ``(π, distances, pairs_verified)``."""
        n = e.shape[0]
        pi = np.empty(n, dtype=np.int64)
        dist = np.zeros(n, dtype=np.float64)
        verified = 0
        if n == 1:
            verified = self._admit_one(e, pi, dist)
        for s in range(0, n if n > 1 else 0, _BLOCK):
            verified += self._admit_block(e[s : s + _BLOCK], pi[s : s + _BLOCK], dist[s : s + _BLOCK])
        self.pairs_verified += verified
        self._gbuf = self._xp.zeros(0, dtype=np.float32)  # the products' buffer lives for one call only
        return pi, dist, verified

    def _products(self, block_x: Any, others_x: Any) -> Any:
        """``block @ others.T`` in float32 into a reused buffer (no fresh allocation per block)."""
        xp = self._xp
        need = block_x.shape[0] * others_x.shape[0]
        if self._gbuf.size < need:
            self._gbuf = xp.empty(max(need, self._gbuf.size + self._gbuf.size // 2), dtype=np.float32)
        out = self._gbuf[:need].reshape(block_x.shape[0], others_x.shape[0])
        return xp.matmul(block_x, others_x.T, out=out)

    def _gemm_candidates(self, block_x: Any, bnorms: np.ndarray, others_x: Any, onorms: np.ndarray):
        """Pairs ``(row, col)`` whose float32 product could satisfy ``sq <= δ²`` (a superset, proven by
        :func:`_dot_error_bound`); the exact rule decides afterwards. Rows whose largest product is
        below their bound are dropped with one max-reduction, so only the few rows with a candidate
        are scanned element by element."""
        xp = self._xp
        g = self._products(block_x, others_x)
        thr = _filter_threshold(bnorms, float(onorms.min()), self.d2, self.dim)
        thr_x = thr if xp is np else xp.asarray(thr)
        hot = xp.flatnonzero(g.max(axis=1) >= thr_x)
        if hot.size == 0:
            return np.zeros(0, np.int64), np.zeros(0, np.int64)
        r, c = xp.nonzero(g[hot] >= thr_x[hot, None])
        return _to_host(hot[r]).astype(np.int64), _to_host(c).astype(np.int64)

    def _prefilter(self, block, bnorms, rows, others, onorms, cols):
        """Drop candidate pairs whose float32 dot product proves ``sq > δ²`` (margin: ``_dot_error_bound``)."""
        if self.exhaustive or rows.size < 256:
            return rows, cols  # already filtered by the blocked products / too few to be worth it
        keep = []
        err = _dot_error_bound(self.dim)
        for s in range(0, rows.size, 16384):
            r, c = rows[s : s + 16384], cols[s : s + 16384]
            dots = np.einsum("ij,ij->i", block[r], others[c]).astype(np.float64)
            thr = (bnorms[r] + onorms[c] - self.d2 - 1e-12) / 2.0 - err
            keep.append(np.flatnonzero(dots >= thr) + s)
        idx = np.concatenate(keep)
        return rows[idx], cols[idx]

    def _admit_one(self, row: np.ndarray, pi: np.ndarray, dist: np.ndarray) -> int:
        """A single arrival (the common online case): the same decision as ``_admit_block``, fewer steps."""
        gid = self.next_id
        self.next_id += 1
        nr = self.n_retained
        keys = self._keys(row)
        if nr == 0:
            pos = np.zeros(0, np.int64)
        elif self.exhaustive:
            r64 = row.astype(np.float64)
            thr = _filter_threshold(np.einsum("ij,ij->i", r64, r64), float(self._norms[:nr].min()), self.d2, self.dim)
            if self._xp is np:
                # einsum (one thread, SIMD), not BLAS sgemv: on a busy machine the threaded
                # matrix-vector product waits on its threads 10-30x longer than it computes
                pos = np.flatnonzero(np.einsum("ij,j->i", self._emb[:nr], row[0]) >= thr[0])
            else:
                pos = _to_host(self._xp.flatnonzero(self._emb_x[:nr] @ self._xp.asarray(row[0]) >= float(thr[0])))
        elif self._index.count(keys) > _RAW_CAP_ONE and self._index.count(keys) * _DENSE >= nr:
            r64 = row.astype(np.float64)  # too many band matches to gather: every retained id, filtered (D13)
            thr = _filter_threshold(np.einsum("ij,ij->i", r64, r64), float(self._norms[:nr].min()), self.d2, self.dim)
            pos = np.flatnonzero(np.einsum("ij,j->i", self._emb[:nr], row[0]) >= thr[0])
            if pos.size:
                sq = sq_dist_rows(self._emb, pos, row)
                ok = np.flatnonzero(sq <= self.d2)
                if ok.size:
                    pi[0] = self._ids[pos[ok[0]]]
                    dist[0] = math.sqrt(sq[ok[0]])
                    return nr
            pi[0] = gid
            self._append(row, np.array([gid], dtype=np.int64), keys)
            return nr
        else:
            pos = self._index.query(keys)[1]
        if pos.size:
            sq = sq_dist_rows(self._emb, pos, row)
            ok = np.flatnonzero(sq <= self.d2)
            if ok.size:
                pi[0] = self._ids[pos[ok[0]]]
                dist[0] = math.sqrt(sq[ok[0]])
                return nr if self.exhaustive else int(pos.size)
        pi[0] = gid
        self._append(row, np.array([gid], dtype=np.int64), keys)
        return nr if self.exhaustive else int(pos.size)

    def _admit_block(self, block: np.ndarray, pi: np.ndarray, dist: np.ndarray) -> int:
        b = block.shape[0]
        gids = np.arange(self.next_id, self.next_id + b, dtype=np.int64)
        self.next_id += b
        nr = self.n_retained
        prefiltered = self.exhaustive
        keys = self._keys(block)
        b64 = block.astype(np.float64)
        bnorms = np.einsum("ij,ij->i", b64, b64)
        block_x = block if self._xp is np or not self.exhaustive else self._xp.asarray(block)
        # 1. candidate pairs (row, retained position) against R before the block
        if nr == 0:
            pre_rows = pre_pos = np.zeros(0, np.int64)
        elif self.exhaustive:
            pre_rows, pre_pos = self._gemm_candidates(block_x, bnorms, self._emb_x[:nr], self._norms[:nr])
        elif (raw := self._index.count(keys)) > _RAW_CAP and raw * _DENSE >= b * nr:
            # too many band matches to gather (D13): every retained id is a candidate, the blocked
            # products filter them, as in exhaustive mode; the exact rule decides below
            pre_rows, pre_pos = self._gemm_candidates(block, bnorms, self._emb[:nr], self._norms[:nr])
            n_pre_candidates = b * nr
            prefiltered = True
        else:
            pre_rows, pre_pos = self._index.query(keys, unique=False)
            if pre_rows.size and pre_rows.size * _DENSE >= b * nr:
                # dense: mark the band candidates, keep those that pass the products' filter
                cand = np.zeros((b, nr), dtype=bool)
                cand[pre_rows, pre_pos] = True
                n_pre_candidates = int(np.count_nonzero(cand))
                rs, cs = self._gemm_candidates(block, bnorms, self._emb[:nr], self._norms[:nr])
                sel = cand[rs, cs]
                pre_rows, pre_pos = rs[sel], cs[sel]
                prefiltered = True
            elif pre_rows.size:
                pre_rows, pre_pos = _unique_pairs(pre_rows, pre_pos)
        if self.exhaustive or nr == 0 or not prefiltered:
            n_pre_candidates = pre_rows.size
        # 2. candidate pairs (i, j), j < i, inside the block
        if b < 2:
            in_rows = in_cols = np.zeros(0, np.int64)
        elif self.exhaustive:
            in_rows, in_cols = self._gemm_candidates(block_x, bnorms, block_x, bnorms)
            lower = in_cols < in_rows
            in_rows, in_cols = in_rows[lower], in_cols[lower]
        else:
            in_rows, in_cols = intra_block_pairs(keys)
        all_in_cols = in_cols
        # 3. exact verification (SPEC §2) of every candidate that the float32 prefilter cannot exclude
        resolved = np.zeros(b, dtype=bool)
        if not prefiltered:
            pre_rows, pre_pos = self._prefilter(block, bnorms, pre_rows, self._emb, self._norms, pre_pos)
        if pre_rows.size:
            sq = sq_dist_rows(block, pre_rows, self._emb[pre_pos])
            ok = sq <= self.d2
            rows, pos, sq = pre_rows[ok], pre_pos[ok], sq[ok]
            urows, first = np.unique(rows, return_index=True)  # sorted by (row, pos): first = lowest id
            pi[urows] = self._ids[pos[first]]
            dist[urows] = np.sqrt(sq[first])
            resolved[urows] = True
        keep = ~resolved
        if in_rows.size:
            todo = ~resolved[in_rows]
            rows, cols = in_rows[todo], in_cols[todo]
            if not self.exhaustive and rows.size >= 256:  # the block's own products: 512 x 512, cheap
                g = block @ block.T
                thr = (bnorms[rows] + bnorms[cols] - self.d2 - 1e-12) / 2.0 - _dot_error_bound(self.dim)
                ok = g[rows, cols].astype(np.float64) >= thr
                rows, cols = rows[ok], cols[ok]
            sq = sq_dist_rows(block, rows, block[cols])
            ok = sq <= self.d2
            rows, cols, sq = rows[ok], cols[ok], sq[ok]
            # 4. in-order scan: the lowest earlier arrival of the block that is itself retained
            if rows.size:
                starts = np.flatnonzero(np.r_[True, rows[1:] != rows[:-1]])
                ends = np.r_[starts[1:], rows.size]
                for a, z in zip(starts.tolist(), ends.tolist()):
                    i = int(rows[a])
                    alive = np.flatnonzero(keep[cols[a:z]])
                    if alive.size:
                        j = a + int(alive[0])
                        pi[i] = gids[cols[j]]
                        dist[i] = math.sqrt(sq[j])
                        keep[i] = False
        pi[keep] = gids[keep]
        if self.exhaustive:
            verified = b * nr + int((np.cumsum(keep) - keep).sum())
        else:
            verified = n_pre_candidates + int(keep[all_in_cols].sum())
        if keep.any():
            self._append(block[keep], gids[keep], None if keys is None else keys[keep])
        return verified


class MapView:
    """Quantities derived from ``pi`` and ``distances`` (SPEC §1, §10), shared by every result type.

    Subclasses provide ``pi`` (int64[N]) and ``distances`` (float64[N], 0.0 for retained chunks).
    """

    pi: np.ndarray
    distances: np.ndarray

    @property
    def n(self) -> int:
        """Number of chunks ``N`` the map covers."""
        return int(self.pi.shape[0])

    @property
    def kept(self) -> np.ndarray:
        """Boolean mask of retained chunks (``π[i] == i``)."""
        return kept_mask(self.pi)

    @property
    def kept_count(self) -> int:
        return int(self.kept.sum())

    @property
    def deleted_ids(self) -> np.ndarray:
        return np.flatnonzero(~self.kept).astype(np.int64)

    @property
    def merge_distances(self) -> np.ndarray:
        """The distance of every merge, in arrival order of the deleted chunks."""
        return self.distances[~self.kept]

    @property
    def delta_hat(self) -> float:
        """The measured bound ``δ̂`` (§C.5): the largest merge distance, 0.0 if nothing merged."""
        d = self.merge_distances
        return float(d.max()) if d.size else 0.0

    @property
    def deletion_digest(self) -> str:
        return _digest.deletion_digest(self.deleted_ids)

    @property
    def map_digest(self) -> str:
        return _digest.map_digest(self.pi)


class ThresholdMapView(MapView):
    """A :class:`MapView` made at one threshold ``t``; ``delta`` is its ``δ = sqrt(2 - 2t)`` (eq. 1)."""

    t: float

    @property
    def delta(self) -> float:
        return delta_from_t(self.t)


@dataclass(frozen=True)
class SubstitutionResult(ThresholdMapView):
    """Output of one run of Algorithm 2 (SPEC §5): the map π and what was measured on the way.

    ``distances[i] = ||e_i - e_π[i]||₂`` (0.0 for retained chunks); ``delta_hat`` is their max
    (the measured bound of §C.5, ``0.0`` when nothing merged).
    """

    pi: np.ndarray
    distances: np.ndarray
    t: float
    mode: str
    pairs_verified: int
    total_pairs: int
    wall_time_s: float
    settings: BandSettings | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def candidate_rate(self) -> float:
        return 0.0 if self.total_pairs == 0 else self.pairs_verified / self.total_pairs

    def to_json(self) -> dict[str, Any]:
        """Summary for ``--json`` output; π itself is included only for small runs (<= 10,000)."""
        out: dict[str, Any] = {
            "n": self.n,
            "mode": self.mode,
            "t": self.t,
            "delta": self.delta,
            "kept": self.kept_count,
            "deleted": self.n - self.kept_count,
            "delta_hat": _digest.fmt17(self.delta_hat),
            "pairs_verified": self.pairs_verified,
            "total_pairs": self.total_pairs,
            "candidate_rate": self.candidate_rate,
            "wall_time_s": self.wall_time_s,
            "settings": self.settings.to_json() if self.settings else None,
            "deletion_digest": self.deletion_digest,
            "map_digest": self.map_digest,
        }
        if self.n <= 10_000:
            out["pi"] = self.pi.tolist()
        out.update(self.extra)
        return out


def substitute(
    embeddings: Any,
    t: float = 0.95,
    *,
    r: int = 4,
    rel: float = 0.2,
    exhaustive: bool = False,
    normalize: bool = False,
    device: str = "cpu",
) -> SubstitutionResult:
    """Algorithm 2 (batch) over embeddings in trajectory order (Appendix A; claims ``DEF1``, ``THM1``).

    ``exhaustive=True`` equals :func:`oracle` exactly; the default banded mode (``r``, ``rel``) is
    sound at any setting and equals the oracle when band recall is full.

    Args:
        embeddings: float32 ``(N, D)`` unit rows in arrival order.
        t: cosine threshold.
        r: band width (banded mode).
        rel: quantizer step ε/σ (banded mode).
        exhaustive: blocked float32 products against the retained set instead of the band index.
        normalize: rescale rows to unit norm first.
        device: ``"cpu"`` (numpy) or ``"cuda"`` (cupy; exhaustive mode): where the float32 products
            run. Every candidate is confirmed on the host with the exact float64 rule of
            :func:`lam_ref.geometry.sq_dist_rows`, so π is the same on both.

    Raises:
        LamValueError: invalid input, or ``device="cuda"`` without cupy/CUDA or with banded mode.
    """
    t = validate_threshold(t)
    array_module(device)  # refuse an unusable device before any work
    settings = BandSettings(r=r, rel=rel)
    e = validate_embeddings(embeddings, normalize=normalize)
    n, d = e.shape
    start = time.perf_counter()
    matcher = Matcher(t, d, exhaustive=exhaustive, settings=settings, device=device)
    matcher.reserve(n)
    pi, dist, verified = matcher.admit(e)
    wall = time.perf_counter() - start
    return SubstitutionResult(
        pi=pi,
        distances=dist,
        t=t,
        mode="exhaustive" if exhaustive else "banded",
        pairs_verified=verified,
        total_pairs=n * (n - 1) // 2,
        wall_time_s=wall,
        settings=None if exhaustive else settings,
        extra={"device": device} if device != "cpu" else {},
    )


def oracle(embeddings: Any, t: float, *, normalize: bool = False) -> SubstitutionResult:
    """The definition (SPEC §5): each arrival against every retained chunk, float64, lowest id wins.

    ``O(N·|R|·D)``; the semantic reference that every other mode is tested against.
    """
    t = validate_threshold(t)
    d2 = delta_sq(t)
    e = validate_embeddings(embeddings, normalize=normalize)
    n, d = e.shape
    start = time.perf_counter()
    pi = np.arange(n, dtype=np.int64)
    dist = np.zeros(n, dtype=np.float64)
    kept_rows: list[int] = []
    verified = 0
    for i in range(n):
        if kept_rows:
            rows = np.asarray(kept_rows, dtype=np.int64)
            verified += rows.size
            sq = sq_dist_rows(e, rows, np.broadcast_to(e[i], (rows.size, d)))
            ok = np.flatnonzero(sq <= d2)
            if ok.size:
                pi[i] = rows[ok[0]]
                dist[i] = math.sqrt(sq[ok[0]])
                continue
        kept_rows.append(i)
    return SubstitutionResult(
        pi=pi,
        distances=dist,
        t=t,
        mode="oracle",
        pairs_verified=verified,
        total_pairs=n * (n - 1) // 2,
        wall_time_s=time.perf_counter() - start,
    )
