"""Greedy first-occurrence δ-substitution: the oracle and Algorithm 2 (paper §2.4, Appendix A; SPEC §5).

The **oracle** is the definition: for ``i = 0..N-1``, ``π[i]`` is the lowest retained ``y < i``
with ``sq(e_i, e_y) <= δ²``, else ``π[i] = i``. It realises Definition 1 (claim ``DEF1``): every
deleted chunk has a retained representative within δ, so Theorem 1 (``THM1``) applies with the
measured bound ``δ̂``.

:class:`Matcher` holds the state ``(R, index, next id)`` that :func:`substitute` (batch,
Algorithm 2) and :class:`lam_ref.online.OnlineSession` (Algorithm 1) share. Its
:meth:`Matcher.admit` runs Algorithm 2 block by block, in three steps:

1. **candidate generation** (:meth:`Matcher._retained_pairs` against ``R``,
   :meth:`Matcher._block_pairs` among the block's own arrivals), each pair confirmed with the
   exact rule of :mod:`lam_ref.geometry`. The generators:

   * ``exhaustive``: blocked float32 matrix products (numpy, or CuPy with ``device="cuda"``),
     filtered with a provable rounding margin — equal to the oracle, never an ``N × N`` matrix;
   * ``banded``: the band index of :mod:`lam_ref.bands` — sound always, complete when recall is
     full; its matches are verified through the float32 products when they are dense, pair by
     pair when sparse;

2. **resolve** (:func:`resolve`): lowest id wins, applied explicitly to the confirmed pairs in
   whatever order the generators produced them.

Algorithm 1's test of one arrival is written out line by line in
:func:`lam_ref.online.admit_arrival`, with the same primitives (:meth:`Matcher.candidates`,
:meth:`Matcher.sq_to`, :meth:`Matcher.retain`).
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
from .prefilter import filter_pairs as _filter_pairs

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


def _sq_norms(rows: np.ndarray) -> np.ndarray:
    """Float64 squared norms of float32 rows (each product exact in float64; no float64 copy of
    the rows). They set the float32 filter's threshold, whose margin covers their rounding."""
    return np.einsum("ij,ij->i", rows, rows, dtype=np.float64)


def _no_pairs() -> tuple[np.ndarray, np.ndarray]:
    return np.zeros(0, np.int64), np.zeros(0, np.int64)


def _to_host(x: Any) -> np.ndarray:
    return x if isinstance(x, np.ndarray) else x.get()


def _unique_pairs(rows: np.ndarray, pos: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Distinct ``(row, pos)`` pairs sorted by row then pos."""
    width = int(pos.max()) + 1
    code = np.unique(rows * width + pos)
    return code // width, code % width


class Matcher:
    """Retained set ``R`` plus candidate index; admits arrivals in order, never revising (Alg. 1/2).

    :meth:`admit` processes arrivals in blocks: candidates against the retained set before the
    block and among the block's own earlier arrivals are generated vectorised (band index or
    float32 products), every candidate is confirmed with the exact float64 rule, and
    :func:`resolve` picks the lowest id. The result is the same as testing one arrival at a time
    (:func:`lam_ref.online.admit_arrival`): the lowest retained id within δ, or retain.
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
        if self.exhaustive and self._gbuf.size < _BLOCK * capacity:
            # the products' buffer at its largest (a block against every row) at once: no growth
            # copies, and fewer fresh pages than growing by halves (whose old and new buffers
            # coexist); its size is that of ``capacity`` rows of D = 512 float32
            self._gbuf = self._xp.empty(_BLOCK * capacity, dtype=np.float32)

    def _grow(self, new: int) -> None:
        k = self.n_retained
        emb = np.empty((new, self.dim), dtype=np.float32)
        emb[:k] = self._emb[:k]
        norms = np.zeros(new)
        norms[:k] = self._norms[:k]
        ids = np.zeros(new, dtype=np.int64)
        ids[:k] = self._ids[:k]
        self._emb, self._norms, self._ids = emb, norms, ids

    def _append(self, rows: np.ndarray, ids: np.ndarray, keys: np.ndarray | None,
                sq_norms: np.ndarray | None = None) -> None:
        """Append retained rows; ``sq_norms`` are their float64 squared norms when the caller has
        them already (a block's, from :meth:`_admit_block`), else computed here. They serve the
        float32 filter's threshold only, never the exact rule."""
        k = rows.shape[0]
        need = self.n_retained + k
        cap = self._emb.shape[0]
        if need > cap:
            self._grow(max(need, cap + cap // 2))
        s = self.n_retained
        self._emb[s:need] = rows
        self._norms[s:need] = _sq_norms(rows) if sq_norms is None else sq_norms
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

    def keys(self, rows: np.ndarray) -> np.ndarray | None:
        """The band keys of ``rows`` (Algorithm 1 line 6, ``BandHash(Q_ε(e))``); ``None`` in exhaustive mode."""
        return None if self.exhaustive else band_keys(rows, self.settings, validated_unit=True)

    def new_ids(self, n: int) -> np.ndarray:
        """Hand out the next ``n`` global ids (arrival order), int64."""
        ids = np.arange(self.next_id, self.next_id + n, dtype=np.int64)
        self.next_id += n
        return ids

    def retain(self, rows: np.ndarray, ids: np.ndarray, keys: np.ndarray | None) -> None:
        """``R ← R ∪ rows`` and ``I[b] ← I[b] ∪ ids`` (Algorithm 1 line 12): append, never revise."""
        self._append(rows, ids, keys)

    def restore(self, embeddings: np.ndarray, ids: np.ndarray, next_id: int) -> None:
        """Rebuild state from retained rows and their ids (used by ``OnlineSession.load``)."""
        self.next_id = int(next_id)
        self.n_retained = 0
        self._index = BandIndex()
        if embeddings.shape[0]:
            self._append(embeddings, ids, self.keys(embeddings))

    # -- one arrival (Algorithm 1's loop body, written out in lam_ref.online.admit_arrival) --------
    def candidates(self, row: np.ndarray, keys: np.ndarray | None) -> np.ndarray:
        """Positions in ``R`` of the candidates for one arrival ``row`` (shape ``(1, D)``).

        Banded: ``C = ∪_{b ∈ B} I[b]`` (Algorithm 1 line 7). Exhaustive: the retained rows whose
        float32 product with ``row`` could satisfy ``sq <= δ²`` (a proven superset of the rows
        within δ, :func:`lam_ref.geometry.filter_threshold`). Every candidate still goes through
        the exact rule (:meth:`sq_to`).
        """
        nr = self.n_retained
        if nr == 0:
            return np.zeros(0, np.int64)
        if not self.exhaustive:
            return self._index.query(keys)[1]
        r64 = row.astype(np.float64)
        thr = _filter_threshold(np.einsum("ij,ij->i", r64, r64), float(self._norms[:nr].min()), self.d2, self.dim)
        # einsum (one thread, SIMD), not BLAS sgemv: on a busy machine the threaded matrix-vector
        # product waits on its threads 10-30x longer than it computes. The host rows serve every
        # device (a CUDA matcher keeps them too).
        return np.flatnonzero(np.einsum("ij,j->i", self._emb[:nr], row[0]) >= thr[0])

    def sq_to(self, positions: np.ndarray, row: np.ndarray) -> np.ndarray:
        """Exact float64 ``sq(e_y, row)`` for the retained rows at ``positions`` (SPEC §2)."""
        return sq_dist_rows(self._emb, positions, row)

    def count_verified(self, n: int) -> None:
        """Add ``n`` to :attr:`pairs_verified` (a single arrival tested outside :meth:`admit`)."""
        self.pairs_verified += n

    # -- blocks of arrivals (Algorithm 2, vectorised) --------------------------------------
    def admit(self, e: np.ndarray) -> tuple[np.ndarray, np.ndarray, int]:
        """Admit validated float32 rows in order, in blocks of 512. Returns ``(π, distances, pairs_verified)``."""
        n = e.shape[0]
        pi = np.empty(n, dtype=np.int64)
        dist = np.zeros(n, dtype=np.float64)
        verified = 0
        for s in range(0, n, _BLOCK):
            verified += self._admit_block(e[s : s + _BLOCK], pi[s : s + _BLOCK], dist[s : s + _BLOCK])
        self.pairs_verified += verified
        self._gbuf = self._xp.zeros(0, dtype=np.float32)  # the products' buffer lives for one call only
        return pi, dist, verified

    def _admit_block(self, block: np.ndarray, pi: np.ndarray, dist: np.ndarray) -> int:
        """One block: candidate pairs against ``R`` and inside the block, each confirmed with the
        exact rule, then :func:`resolve` (lowest id wins). Returns the pairs verified (SPEC §5)."""
        b = block.shape[0]
        gids = self.new_ids(b)
        nr = self.n_retained
        keys = self.keys(block)
        bnorms = _sq_norms(block)
        block_x = block if self._xp is np or not self.exhaustive else self._xp.asarray(block)
        # 1. candidates against R (the chunks retained before the block), confirmed exactly
        r_rows, r_pos, r_sq, r_proposed = self._retained_pairs(block, block_x, keys, bnorms)
        # 2. candidates inside the block, confirmed exactly; rows matched in 1 take a lower id anyway
        matched = np.zeros(b, dtype=bool)
        matched[r_rows] = True
        in_rows, in_cols, in_sq, in_proposed = self._block_pairs(block, block_x, keys, bnorms, matched)
        # 3. lowest id wins
        rep, sq, keep = resolve(int(gids[0]), b, r_rows, self._ids[r_pos], r_sq, in_rows, in_cols, in_sq)
        pi[:] = rep
        dist[:] = np.sqrt(sq)
        if self.exhaustive:
            verified = b * nr + int((np.cumsum(keep) - keep).sum())
        else:
            verified = r_proposed + int(keep[in_proposed].sum())
        if keep.any():
            self._append(block[keep], gids[keep], None if keys is None else keys[keep], bnorms[keep])
        return verified

    def _retained_pairs(self, block: np.ndarray, block_x: Any, keys: np.ndarray | None, bnorms: np.ndarray):
        """Candidate generation against ``R`` before the block, confirmed exactly.

        Returns ``(rows, positions, sq, proposed)``: the pairs ``(block row, position in R)``
        within δ in no promised order, their exact ``sq``, and the number of distinct candidate
        pairs the band index proposed (banded mode's pairs verified). Three generators: the
        blocked float32 products (exhaustive, on the matcher's device); band matches verified
        through those products when they are dense; band matches gathered pair by pair (with the
        float32 prefilter) when sparse.
        """
        nr = self.n_retained
        if nr == 0:
            return _no_pairs() + (np.zeros(0), 0)
        if self.exhaustive:
            rows, pos = self._gemm_candidates(block_x, bnorms, self._emb_x[:nr], self._norms[:nr])
            proposed = rows.size
        elif (raw := self._index.count(keys)) > (_RAW_CAP if block.shape[0] > 1 else _RAW_CAP_ONE) \
                and raw * _DENSE >= block.shape[0] * nr:
            # too many band matches to gather (SPEC §5.2, D13): every retained id is a candidate and
            # the blocked products filter them, as in exhaustive mode; the exact rule decides below
            rows, pos = self._gemm_candidates(block, bnorms, self._emb[:nr], self._norms[:nr])
            proposed = block.shape[0] * nr
        else:
            rows, pos = self._index.query(keys, unique=False)
            if rows.size and rows.size * _DENSE >= block.shape[0] * nr:
                # dense: mark the band candidates, keep those that pass the products' filter
                cand = np.zeros((block.shape[0], nr), dtype=bool)
                cand[rows, pos] = True
                proposed = int(np.count_nonzero(cand))
                rs, cs = self._gemm_candidates(block, bnorms, self._emb[:nr], self._norms[:nr])
                sel = cand[rs, cs]
                rows, pos = rs[sel], cs[sel]
            else:
                if rows.size:
                    rows, pos = _unique_pairs(rows, pos)
                proposed = rows.size
                rows, pos = self._prefilter(block, bnorms, rows, pos)
        sq = sq_dist_rows(block, rows, self._emb[pos])
        ok = sq <= self.d2
        return rows[ok], pos[ok], sq[ok], proposed

    def _block_pairs(self, block: np.ndarray, block_x: Any, keys: np.ndarray | None, bnorms: np.ndarray,
                     skip: np.ndarray):
        """Candidate generation inside the block: pairs ``(i, j)``, ``j < i``, confirmed exactly.

        Returns ``(rows, cols, sq, proposed_cols)``: the pairs within δ among rows not in ``skip``
        (rows already matched against ``R``, which no in-block pair can change), their exact
        ``sq``, and the earlier-arrival column of every proposed pair (banded mode counts those
        that stay retained).
        """
        b = block.shape[0]
        if b < 2:
            return _no_pairs() + (np.zeros(0), np.zeros(0, np.int64))
        if self.exhaustive:
            rows, cols = self._gemm_candidates(block_x, bnorms, block_x, bnorms)
            lower = cols < rows
            rows, cols = rows[lower], cols[lower]
        else:
            rows, cols = intra_block_pairs(keys)
        proposed = cols
        todo = ~skip[rows]
        rows, cols = rows[todo], cols[todo]
        if not self.exhaustive and rows.size >= 256:  # the block's own products: 512 x 512, cheap
            g = block @ block.T
            ok = g[rows, cols].astype(np.float64) >= self._dot_floor(bnorms[rows], bnorms[cols])
            rows, cols = rows[ok], cols[ok]
        sq = sq_dist_rows(block, rows, block[cols])
        ok = sq <= self.d2
        return rows[ok], cols[ok], sq[ok], proposed

    def _dot_floor(self, na: np.ndarray, nb: np.ndarray) -> np.ndarray:
        """The smallest float32 dot product of two rows with squared norms ``na``, ``nb`` that can
        still be within δ: ``sq = na + nb − 2·dot``, less the float32 error bound (so the filter
        never drops a pair the exact rule would accept)."""
        return (na + nb - self.d2 - 1e-12) / 2.0 - _dot_error_bound(self.dim)

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
        if xp is np:
            return _filter_pairs(g, thr)
        hot = xp.flatnonzero(g.max(axis=1) >= thr_x)
        if hot.size == 0:
            return _no_pairs()
        r, c = xp.nonzero(g[hot] >= thr_x[hot, None])
        return _to_host(hot[r]).astype(np.int64, copy=False), _to_host(c).astype(np.int64, copy=False)

    def _prefilter(self, block, bnorms, rows, cols):
        """Drop band candidate pairs whose float32 dot product proves ``sq > δ²`` (margin: ``_dot_error_bound``)."""
        if rows.size < 256:
            return rows, cols  # too few to be worth it
        keep = []
        for s in range(0, rows.size, 16384):
            r, c = rows[s : s + 16384], cols[s : s + 16384]
            dots = np.einsum("ij,ij->i", block[r], self._emb[c]).astype(np.float64)
            keep.append(np.flatnonzero(dots >= self._dot_floor(bnorms[r], self._norms[c])) + s)
        idx = np.concatenate(keep)
        return rows[idx], cols[idx]


def resolve(
    first_id: int,
    n: int,
    r_rows: np.ndarray,
    r_ids: np.ndarray,
    r_sq: np.ndarray,
    in_rows: np.ndarray,
    in_cols: np.ndarray,
    in_sq: np.ndarray,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Algorithm 2's decision for one block of ``n`` arrivals (ids ``first_id …``) from its confirmed pairs.

    ``y* = min{y ∈ C : ‖e_i − e_y‖ ≤ δ}`` (Algorithm 2 line 7; SPEC §5.1): the lowest id wins,
    whatever order the candidates come in. The pairs given must all satisfy the exact rule:

    * ``r_rows``, ``r_ids``, ``r_sq``: block row, id of a chunk retained before the block, ``sq``;
    * ``in_rows``, ``in_cols``, ``in_sq``: block row ``i``, earlier block row ``j < i``, ``sq``.

    Every id retained before the block is below every id in it, so a row with a pair in ``r_*``
    takes its lowest ``r_id``. The other rows are decided in arrival order: row ``i`` takes the
    lowest earlier row ``j`` that is itself retained (decided before ``i``, since ``j < i``), else
    ``i`` is retained.

    Returns ``(π, sq, keep)`` for the block: representatives (global ids), their ``sq`` (0.0
    for retained rows) and the mask of retained rows.
    """
    pi = np.arange(first_id, first_id + n, dtype=np.int64)
    sq = np.zeros(n, dtype=np.float64)
    keep = np.ones(n, dtype=bool)
    if r_rows.size:
        order = np.lexsort((r_ids, r_rows))  # by row, then by id: each row's first entry is its lowest id
        rows = r_rows[order]
        best = order[np.flatnonzero(np.r_[True, rows[1:] != rows[:-1]])]
        pi[r_rows[best]] = r_ids[best]
        sq[r_rows[best]] = r_sq[best]
        keep[r_rows[best]] = False
    if in_rows.size:
        order = np.lexsort((in_cols, in_rows))  # by row (arrival order), then by earlier row (id)
        rows, cols, s = in_rows[order], in_cols[order], in_sq[order]
        starts = np.flatnonzero(np.r_[True, rows[1:] != rows[:-1]])
        ends = np.r_[starts[1:], rows.size]
        for a, z in zip(starts.tolist(), ends.tolist()):
            i = int(rows[a])
            if not keep[i]:
                continue  # matched a chunk retained before the block: a lower id
            alive = np.flatnonzero(keep[cols[a:z]])
            if alive.size:
                j = a + int(alive[0])
                pi[i] = first_id + int(cols[j])
                sq[i] = s[j]
                keep[i] = False
    return pi, sq, keep


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
