"""The corpus-scope greedy on Dask: one global order over all rows, identical to the serial oracle.

Paper §2.4 / Appendix A (Algorithm 2; claims ``DEF1``, ``THM1``) define the greedy over one
sequence of chunks. Over a corpus the sequence is the manifest of :mod:`lam_ref.distributed.shards`
(shards in order, prefix-summed row counts). The work splits into three steps:

1. **Fold identical rows** (one task per tile): rows whose float32 bytes are identical (checked
   byte for byte, not only by hash) are folded onto their first occurrence ``r``; the greedy then
   runs over first occurrences only and every copy ``i`` gets ``π[i] = π[r]`` (proof in
   ``docs/scale.md``). Identical observations are the dense clusters of real trajectories; folding
   them first keeps the edge list linear in them.
2. **Within-δ pairs** (no order, any worker, any retry):

   * ``exhaustive``: one task per tile pair ``(a, b <= a)`` over the first occurrences: the float32
     product ``A·Bᵀ`` filtered with the provable rounding margin of
     :mod:`lam_ref.substitution`, every surviving candidate confirmed in float64 with
     :func:`lam_ref.geometry.sq_dist_rows` (the serial path's exact, non-BLAS rule); it returns the
     pairs ``(i, j)``, ``j < i``, with ``sq <= δ²``.
   * ``banded``: band keys computed once per tile (:func:`lam_ref.bands.band_keys`), shuffled by
     ``(band, key)`` into partitions (files), and verified within each bucket; a pair is emitted
     only in the lowest band its two rows share, so once; a bucket larger than ``split`` rows is
     split into tasks of ``split`` rows, each verified against every earlier row of the bucket
     (never capped).
3. **Resolve** (this process, row order): row ``i`` is retained iff none of its partners
   ``j < i`` is retained; otherwise ``π[i]`` is the smallest retained partner. Whether a pair is
   within δ does not depend on which rows were kept, so the pair set is the same however the tiles
   were scheduled, split or retried, and the resolve is the serial greedy's decision sequence.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import time
import tracemalloc
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import xxhash

from .. import digest as _digest
from .._io import load_npy
from ..bands import BandSettings, band_keys
from ..geometry import delta_sq, sq_dist_rows, validate_positive_int, validate_threshold
from ..geometry import filter_threshold as _filter_threshold
from ..substitution import ThresholdMapView
from .shards import ShardReader, ShardSet, check_file, checksum_file

__all__ = ["CorpusGreedyResult", "corpus_greedy", "fold_identical", "resolve_edges", "tile_pairs"]

_GEMM_ROWS = 1024  # rows of A per float32 product block inside one tile task


# ----------------------------------------------------------------------------------------------
# tasks (run on workers; pure functions of their arguments and the shard files)


def row_hashes(shards: ShardSet, start: int, stop: int) -> np.ndarray:
    """XXH3-128 of each row's float32 bytes for global rows ``start .. stop-1``, as ``uint64[n, 2]``."""
    rows = shards.read_range(start, stop)
    out = np.empty((rows.shape[0], 2), dtype=np.uint64)
    for k in range(rows.shape[0]):
        h = xxhash.xxh3_128_intdigest(rows[k].tobytes())
        out[k, 0], out[k, 1] = h >> 64, h & 0xFFFFFFFFFFFFFFFF
    return out


def tile_pairs(shards: ShardSet, ids_a: np.ndarray, ids_b: np.ndarray | None, d2: float) -> tuple[np.ndarray, np.ndarray, int]:
    """Exact within-δ pairs between tile ``a`` and an earlier tile ``b`` (``ids_b=None``: tile ``a``
    with itself). Returns ``(i, j, candidates)``: global ids with ``j < i`` and ``sq <= δ²``, and the
    number of candidates the float32 filter passed to the exact check.

    The filter is :mod:`lam_ref.substitution`'s: ``fl32(a·b) >= thr`` with a margin that provably
    keeps every pair with ``sq <= δ²``; the check is :func:`lam_ref.geometry.sq_dist_rows`.
    """
    reader = shards.reader()
    a = reader.read(ids_a)
    diagonal = ids_b is None
    b = a if diagonal else reader.read(ids_b)
    jb = ids_a if diagonal else np.asarray(ids_b, dtype=np.int64)
    dim = a.shape[1]
    na = np.einsum("ij,ij->i", a.astype(np.float64), a.astype(np.float64))
    nb = na if diagonal else np.einsum("ij,ij->i", b.astype(np.float64), b.astype(np.float64))
    if a.shape[0] == 0 or b.shape[0] == 0:
        z = np.zeros(0, np.int64)
        return z, z, 0
    min_nb = float(nb.min())
    out_i, out_j = [], []
    candidates = 0
    for s in range(0, a.shape[0], _GEMM_ROWS):
        blk = a[s : s + _GEMM_ROWS]
        g = blk @ b.T
        thr = _filter_threshold(na[s : s + _GEMM_ROWS], min_nb, d2, dim)
        mask = g >= thr[:, None]
        if diagonal:  # pairs (i, j) with j < i only
            mask &= np.arange(b.shape[0])[None, :] < (np.arange(blk.shape[0]) + s)[:, None]
        r, c = np.nonzero(mask)
        candidates += int(r.size)
        if r.size:
            ok = sq_dist_rows(blk, r, b[c]) <= d2
            out_i.append(np.asarray(ids_a, dtype=np.int64)[r[ok] + s])
            out_j.append(jb[c[ok]])
    if not out_i:
        z = np.zeros(0, np.int64)
        return z, z, candidates
    return np.concatenate(out_i), np.concatenate(out_j), candidates


def _part_of(keys: np.ndarray, band: int, parts: int) -> np.ndarray:
    with np.errstate(over="ignore"):
        return ((keys ^ np.uint64((band * 0x9E3779B97F4A7C15) & 0xFFFFFFFFFFFFFFFF)) % np.uint64(parts)).astype(np.int64)


_REC = np.dtype([("band", "<i4"), ("key", "<u8"), ("row", "<i8")])


def band_map(shards: ShardSet, ids: np.ndarray, tile: int, settings: BandSettings, parts: int,
             work: str) -> dict[str, str]:
    """Band keys of one tile (computed once, saved for the lowest-shared-band test) and the shuffle:
    the records ``(band, key, row)`` of the tile, one file per destination partition. Returns the
    XXH3-128 of every file written, by its path under ``work`` (the tasks that read them check
    them: :func:`_load_checked`)."""
    rows = shards.read(ids)
    keys = band_keys(rows, settings, validated_unit=True)
    w = Path(work)
    sums = {f"keys/tile-{tile:06d}.npy": _save(w / "keys" / f"tile-{tile:06d}.npy", keys)}
    nb = keys.shape[1]
    recs = np.empty(keys.size, dtype=_REC)
    recs["band"] = np.tile(np.arange(nb, dtype=np.int32), keys.shape[0])
    recs["key"] = keys.reshape(-1)
    recs["row"] = np.repeat(np.asarray(ids, dtype=np.int64), nb)
    dest = np.concatenate([_part_of(keys[:, b], b, parts)[:, None] for b in range(nb)], axis=1).reshape(-1)
    for p in range(parts):
        name = f"shuffle/part-{p:05d}/tile-{tile:06d}.npy"
        sums[name] = _save(w / name, recs[dest == p])
    return sums


def _save(path: Path, arr: np.ndarray) -> str:
    """Write ``arr`` to ``path`` atomically; its XXH3-128."""
    from .._io import atomic_write

    return checksum_file(atomic_write(path, lambda fh: np.save(fh, arr, allow_pickle=False)))


def _load_checked(work: Path, name: str, sums: dict[str, str], mmap_mode: str | None = None) -> np.ndarray:
    """``work/name``, a file :func:`band_map` wrote in this run, after checking its XXH3-128."""
    check_file(work / name, sums[name], "band file")
    return load_npy(work / name, mmap_mode=mmap_mode, allow_pickle=False)


class _Keys:
    """Band keys of any unique row (by global id), from the per-tile key files of :func:`band_map`
    (each file checked and memory-mapped once per task)."""

    def __init__(self, work: str, unique: np.ndarray, tile: int, sums: dict[str, str]) -> None:
        self.work, self.unique, self.tile, self.sums = Path(work), unique, tile, sums
        self._open: dict[int, np.ndarray] = {}

    def _tile(self, k: int) -> np.ndarray:
        arr = self._open.get(k)
        if arr is None:
            arr = self._open[k] = _load_checked(self.work, f"keys/tile-{k:06d}.npy", self.sums, "r")
        return arr

    def get(self, ids: np.ndarray) -> np.ndarray:
        pos = np.searchsorted(self.unique, ids)
        t = pos // self.tile
        out = None
        for k in np.unique(t).tolist():
            arr = self._tile(k)
            if out is None:
                out = np.empty((ids.size, arr.shape[1]), dtype=np.uint64)
            sel = t == k
            out[sel] = arr[pos[sel] - k * self.tile]
        return out if out is not None else np.zeros((0, 0), np.uint64)


def _verify_bucket_pairs(reader: ShardReader, keys: _Keys, i: np.ndarray, j: np.ndarray, band: np.ndarray,
                         d2: float) -> tuple[np.ndarray, np.ndarray, int]:
    """Keep candidate pairs whose lowest shared band is ``band`` (each pair once) and ``sq <= δ²``."""
    out_i, out_j = [], []
    cand = 0
    for s in range(0, i.size, 262144):
        ii, jj, bb = i[s : s + 262144], j[s : s + 262144], band[s : s + 262144]
        ki, kj = keys.get(ii), keys.get(jj)
        first = np.argmax(ki == kj, axis=1)  # the lowest band the two rows share
        own = first == bb
        ii, jj = ii[own], jj[own]
        cand += int(ii.size)
        if ii.size:
            ok = sq_dist_rows(reader.read(ii), np.arange(ii.size), reader.read(jj)) <= d2
            out_i.append(ii[ok])
            out_j.append(jj[ok])
    if not out_i:
        z = np.zeros(0, np.int64)
        return z, z, cand
    return np.concatenate(out_i), np.concatenate(out_j), cand


def _bucket_pairs(starts: np.ndarray, sizes: np.ndarray, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """All pairs ``(x, y)``, ``y < x``, of positions within each bucket (vectorised); returns
    ``(x, y, bucket)`` as indices into ``rows``/``starts``."""
    npairs = sizes * (sizes - 1) // 2
    total = int(npairs.sum())
    if total == 0:
        z = np.zeros(0, np.int64)
        return z, z, z
    bucket = np.repeat(np.arange(sizes.size), npairs)
    k = np.arange(total, dtype=np.int64) - np.repeat(np.cumsum(npairs) - npairs, npairs)
    x = np.floor((1 + np.sqrt(1 + 8 * k.astype(np.float64))) / 2).astype(np.int64)  # k-th pair (x, y<x)
    x -= (x * (x - 1) // 2 > k).astype(np.int64)
    x += ((x + 1) * x // 2 <= k).astype(np.int64)
    y = k - x * (x - 1) // 2
    base = starts[bucket]
    return base + x, base + y, bucket


def band_reduce(shards: ShardSet, part: int, work: str, unique: np.ndarray, tile: int, d2: float,
                split: int, sums: dict[str, str]) -> tuple[np.ndarray, np.ndarray, int, list[tuple[int, np.ndarray]]]:
    """Verify the buckets of one shuffle partition (the files :func:`band_map` wrote for it in this
    run, named with their XXH3-128 in ``sums``). Buckets larger than ``split`` rows are returned
    (``(band, rows)``) for block-pair tasks instead of being verified here."""
    prefix = f"shuffle/part-{part:05d}/"
    files = sorted(name for name in sums if name.startswith(prefix))
    recs = np.concatenate([_load_checked(Path(work), f, sums) for f in files]) if files else np.zeros(0, _REC)
    z = np.zeros(0, np.int64)
    if recs.size < 2:
        return z, z, 0, []
    recs = recs[np.lexsort((recs["row"], recs["key"], recs["band"]))]
    new = np.r_[True, (recs["band"][1:] != recs["band"][:-1]) | (recs["key"][1:] != recs["key"][:-1])]
    starts = np.flatnonzero(new)
    sizes = np.diff(np.r_[starts, recs.size])
    big = sizes > split
    large = [(int(recs["band"][s]), recs["row"][s : s + m].copy()) for s, m in zip(starts[big], sizes[big])]
    small = (sizes >= 2) & ~big
    rows = recs["row"]
    keys = _Keys(work, unique, tile, sums)
    reader = shards.reader()
    out_i, out_j, cand = [], [], 0
    st, sz = starts[small], sizes[small]
    # bound the pairs materialised at once: runs of buckets with about a million pairs
    cum = np.cumsum(sz * (sz - 1) // 2)
    lo = 0
    while lo < st.size:
        base = int(cum[lo - 1]) if lo else 0
        hi = max(lo + 1, int(np.searchsorted(cum, base + 1_000_000, side="right")))
        x, y, bk = _bucket_pairs(st[lo:hi], sz[lo:hi], rows)
        band = recs["band"][st[lo:hi]][bk].astype(np.int64)
        i, j, c = _verify_bucket_pairs(reader, keys, rows[x], rows[y], band, d2)
        out_i.append(i)
        out_j.append(j)
        cand += c
        lo = hi
    i = np.concatenate(out_i) if out_i else z
    j = np.concatenate(out_j) if out_j else z
    return i, j, cand, large


def bucket_block(shards: ShardSet, band: int, rows: np.ndarray, lo: int, hi: int, work: str,
                 unique: np.ndarray, tile: int, d2: float, sums: dict[str, str]) -> tuple[np.ndarray, np.ndarray, int]:
    """One slice of a large bucket (rows ascending): the pairs ``(rows[x], rows[y])`` with
    ``lo <= x < hi`` and ``y < x``, generated and verified a block of ``hi - lo`` partners at a time."""
    keys = _Keys(work, unique, tile, sums)
    u = rows[lo:hi]
    x, y, _ = _bucket_pairs(np.zeros(1, np.int64), np.array([u.size]), u)  # the slice with itself: y < x
    parts_i, parts_j = [u[x]], [u[y]]
    step = max(1, 1_000_000 // max(u.size, 1))
    for s in range(0, lo, step):  # every earlier row of the bucket, about a million pairs at a time
        v = rows[s : min(s + step, lo)]
        parts_i.append(np.repeat(u, v.size))
        parts_j.append(np.tile(v, u.size))
    i, j = np.concatenate(parts_i), np.concatenate(parts_j)
    return _verify_bucket_pairs(shards.reader(), keys, i, j, np.full(i.size, band, np.int64), d2)


# ----------------------------------------------------------------------------------------------
# the resolve (one process)


def resolve_edges(n: int, edges: list[tuple[np.ndarray, np.ndarray]]) -> np.ndarray:
    """The greedy over within-δ pairs, in row order: ``π[i]`` is the smallest retained ``j < i``
    paired with ``i``, else ``i`` (paper §2.4; SPEC §5). ``edges`` is consumed (emptied) to bound memory.

    Memory: one int64 key per edge (``i·n + j``, sorted in place), then the row column built
    from it and the key turned into the column in place: 16 bytes per edge (as much as the edge
    list, which is freed chunk by chunk while the keys are filled) plus ``O(n)`` for ``π``.
    """
    total = sum(int(i.size) for i, _ in edges)
    pi = np.arange(n, dtype=np.int64)
    if total == 0:
        edges.clear()
        return pi
    key = np.empty(total, dtype=np.int64)
    pos = 0
    while edges:
        i, j = edges.pop()
        key[pos : pos + i.size] = i * n + j
        pos += i.size
        del i, j
    key.sort()
    rows = key // n  # in place from here on: at most two int64 arrays of the edge count
    rows *= n
    key -= rows
    rows //= n
    cols = key
    new_row = np.empty(rows.size, dtype=bool)
    new_row[0] = True
    np.not_equal(rows[1:], rows[:-1], out=new_row[1:])
    starts = np.flatnonzero(new_row)
    del new_row
    keep = np.ones(n, dtype=bool)
    last = starts.size - 1
    for g in range(starts.size):  # rows in increasing order; no Python list of all the groups
        a = int(starts[g])
        z = int(starts[g + 1]) if g < last else rows.size
        alive = np.flatnonzero(keep[cols[a:z]])
        if alive.size:
            i = int(rows[a])
            pi[i] = cols[a + int(alive[0])]
            keep[i] = False
    return pi


# ----------------------------------------------------------------------------------------------
# the driver


@dataclass(frozen=True)
class CorpusGreedyResult(ThresholdMapView):
    """The corpus-scope map ``π`` over all rows of a manifest, and what the run measured."""

    pi: np.ndarray
    distances: np.ndarray
    t: float
    mode: str
    tile: int
    unique_rows: int
    edges: int
    candidates: int
    tasks: int
    wall_time_s: float
    resolver_peak_bytes: int
    settings: BandSettings | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def edge_list_bytes(self) -> int:
        """Size of the edge list the resolver receives: two int64 ids per pair."""
        return 16 * self.edges

    def to_json(self) -> dict[str, Any]:
        out = {
            "n": self.n, "mode": self.mode, "scope": "corpus", "t": self.t, "delta": self.delta,
            "kept": self.kept_count, "deleted": self.n - self.kept_count,
            "delta_hat": _digest.fmt17(self.delta_hat), "tile": self.tile, "unique_rows": self.unique_rows,
            "folded_rows": self.n - self.unique_rows, "edges": self.edges, "candidates": self.candidates,
            "tasks": self.tasks, "wall_time_s": self.wall_time_s,
            "resolver_peak_bytes": self.resolver_peak_bytes, "edge_list_bytes": self.edge_list_bytes,
            "settings": self.settings.to_json() if self.settings else None,
            "deletion_digest": self.deletion_digest, "map_digest": self.map_digest,
        }
        out.update(self.extra)
        return out


def fold_identical(client: Any, shards: ShardSet, tile: int) -> np.ndarray:
    """``rep[i]``: the first row whose float32 bytes equal row ``i``'s (``rep[i] = i`` for first
    occurrences). Hashes come from tasks; every fold is then confirmed byte for byte here."""
    n = shards.n
    futs = [client.submit(row_hashes, shards, s, min(s + tile, n), pure=False) for s in range(0, n, tile)]
    h = np.concatenate(client.gather(futs)) if futs else np.zeros((0, 2), np.uint64)
    rep = np.arange(n, dtype=np.int64)
    if n == 0:
        return rep
    code = h.view([("hi", "<u8"), ("lo", "<u8")]).reshape(-1)
    _, first, inverse = np.unique(code, return_index=True, return_inverse=True)
    cand = first[inverse.reshape(-1)]
    copies = np.flatnonzero(cand != rep)
    reader = shards.reader()
    for s in range(0, copies.size, 65536):  # a hash collision must never fold two different rows
        c = copies[s : s + 65536]
        same = (reader.read(c).view(np.uint32) == reader.read(cand[c]).view(np.uint32)).all(axis=1)
        rep[c[same]] = cand[c[same]]
    return rep


def corpus_greedy(
    client: Any,
    shards: ShardSet,
    t: float,
    *,
    mode: str = "exhaustive",
    tile: int = 4096,
    settings: BandSettings | None = None,
    split: int = 4096,
    parts: int | None = None,
    work_dir: str | os.PathLike[str] | None = None,
    progress: Any = None,
) -> CorpusGreedyResult:
    """The greedy of Algorithm 2 over every row of ``shards`` in manifest order, on Dask.

    ``mode="exhaustive"`` equals :func:`lam_ref.substitution.oracle` (and ``substitute(...,
    exhaustive=True)``); ``mode="banded"`` equals ``substitute(..., r, rel)`` (banded) — at any
    ``tile``, ``split``, ``parts`` and worker count.

    Args:
        client: a ``distributed.Client``.
        shards: the manifest (:class:`~lam_ref.distributed.shards.ShardSet`).
        t: cosine threshold (``δ² = 2 - 2t``, SPEC §2).
        mode: ``"exhaustive"`` or ``"banded"``.
        tile: rows per tile (>= 1).
        settings: band settings (banded mode; default ``r = 4, rel = 0.2``).
        split: banded mode: a bucket with more rows is verified as tasks of this many rows each.
        parts: banded mode: shuffle partitions (default: one per 4 tiles, at least 1).
        work_dir: folder for the banded shuffle files (its ``bands/``, emptied first: files an
            earlier run left there are never read; default: a temporary folder).
        progress: callable ``(futures, desc) -> iterable of (future, result)`` (default: as completed).

    Returns:
        CorpusGreedyResult.

    Raises:
        LamValueError: bad ``t``, ``tile``, ``split``, ``parts`` or ``mode``;
            :class:`~lam_ref.distributed.shards.ShardError` for a corrupt or missing shard.
    """
    from distributed import as_completed

    from ..geometry import LamValueError

    t = validate_threshold(t)
    tile = validate_positive_int(tile, "tile")
    split = validate_positive_int(split, "split")
    if mode not in ("exhaustive", "banded"):
        raise LamValueError(f"mode must be 'exhaustive' or 'banded', got {mode!r}")
    settings = settings if settings is not None else BandSettings()
    d2 = delta_sq(t)
    start = time.perf_counter()
    # the futures are tracked on this client's loop, never the default client's (see wait_with_progress)
    wait = progress or (lambda futs, desc: as_completed(futs, loop=client.loop, with_results=True))
    n = shards.n
    rep = fold_identical(client, shards, tile)
    unique = np.flatnonzero(rep == np.arange(n))
    tiles = [unique[s : s + tile] for s in range(0, unique.size, tile)]
    edges: list[tuple[np.ndarray, np.ndarray]] = []
    candidates = tasks = 0
    if mode == "exhaustive":
        futs = []
        for a in range(len(tiles)):
            for b in range(a + 1):
                futs.append(client.submit(tile_pairs, shards, tiles[a], None if a == b else tiles[b], d2, pure=False))
        tasks = len(futs)
        for _, (i, j, c) in wait(futs, "tile pairs"):
            edges.append((i, j))
            candidates += c
    else:
        parts = validate_positive_int(parts, "parts") if parts is not None else max(1, len(tiles) // 4)
        tmp = None
        if work_dir is None:
            tmp = tempfile.TemporaryDirectory(prefix="lam-ref-bands-")
            work_dir = tmp.name
        work = str(Path(work_dir) / "bands")
        shutil.rmtree(work, ignore_errors=True)  # an earlier run's keys and shuffle files are never read
        try:
            maps = [client.submit(band_map, shards, ids, a, settings, parts, work, pure=False) for a, ids in enumerate(tiles)]
            written: dict[str, str] = {}  # every band file of this run and its XXH3-128
            for _, sums in wait(maps, "band keys"):
                written.update(sums)
            uf = client.scatter(unique, broadcast=True)
            sf = client.scatter(written, broadcast=True)
            reds = [client.submit(band_reduce, shards, p, work, uf, tile, d2, split, sf, pure=False) for p in range(parts)]
            blocks = []
            for _, (i, j, c, large) in wait(reds, "buckets"):
                edges.append((i, j))
                candidates += c
                for band, rows in large:  # split into slices of `split` rows, each against all earlier rows
                    rf = client.scatter(rows)
                    for lo in range(0, rows.size, split):
                        blocks.append(client.submit(bucket_block, shards, band, rf, lo, min(lo + split, rows.size),
                                                    work, uf, tile, d2, sf, pure=False))
            for _, (i, j, c) in wait(blocks, "large buckets") if blocks else ():
                edges.append((i, j))
                candidates += c
            tasks = len(maps) + len(reds) + len(blocks)
        finally:
            if tmp is not None:
                tmp.cleanup()
    n_edges = sum(int(i.size) for i, _ in edges)
    tracemalloc.start()
    try:
        pi_u = resolve_edges(n, edges)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    pi = pi_u[rep]  # a copy of row r gets π[r] (r itself when r is retained)
    dist = np.zeros(n, dtype=np.float64)
    deleted = np.flatnonzero(pi != np.arange(n))
    reader = shards.reader()
    for s in range(0, deleted.size, 65536):
        d = deleted[s : s + 65536]
        dist[d] = np.sqrt(sq_dist_rows(reader.read(d), np.arange(d.size), reader.read(pi[d])))
    return CorpusGreedyResult(
        pi=pi, distances=dist, t=t, mode=mode, tile=tile, unique_rows=int(unique.size), edges=n_edges,
        candidates=candidates, tasks=tasks, wall_time_s=time.perf_counter() - start, resolver_peak_bytes=int(peak),
        settings=settings if mode == "banded" else None,
    )
