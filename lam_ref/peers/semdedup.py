"""SemDeDup (Abbas et al., 2023) as a chunk compactor, as its authors' code defines it (paper §3.1–3.2,
App. D, F.8, Table 17; SPEC §16; facebookresearch/SemDeDup: ``clustering/clustering.py``,
``clustering/sort_clusters.py``, ``semdedup.py``).

1. **Spherical k-means** with ``k`` clusters (a parameter; :func:`n_clusters_for` derives it from a
   chunks-per-cluster ratio, App. D: 27,986 chunks in 559 clusters, 50.1 per cluster), following
   faiss' ``Kmeans(spherical=True)`` that the official code runs (:func:`spherical_kmeans`):
   initial centroids are ``k`` distinct chunks drawn uniformly at random (``seed``); each round
   assigns every chunk to the centroid of largest inner product, sets each centroid to the mean of
   its members renormalised to unit length, and re-seeds an empty cluster by splitting a large one
   (faiss' ``split_clusters``: a copy of the chosen centroid with a symmetric ``1 ± 1/1024``
   perturbation); at most :data:`NITER` = 100 rounds (the official ``niter``), stopping early at a
   fixed point; at most :data:`MAX_POINTS_PER_CENTROID` ``· k`` chunks train it (faiss'
   subsampling). Labels are the final assignment of every chunk.
2. **Order within a cluster** (``keep``, the official ``which_to_keep``): ``"hard"`` (default)
   sorts members by cosine distance to their centroid, **farthest first** (stable: ties in id
   order), so the member farthest from the centroid survives; ``"easy"`` is that list reversed
   (the nearest survives); ``"random"`` shuffles each cluster (one generator seeded with ``seed``,
   clusters of two or more members in cluster-id order); ``"earliest"`` (ours, not the authors')
   is arrival order, so that the earliest copy survives as in LAM and only the rule differs.
3. **Per cluster**, member ``j`` of the ordered cluster is dropped iff its largest cosine to an
   earlier member **exceeds** ``1 - eps`` — earlier members count whether kept or dropped (unlike
   LAM, which compares only with retained chunks: the chain ``a ~ b ~ c`` with ``a`` not near ``c``
   in arrival order loses ``b`` and ``c`` here and keeps ``a`` and ``c`` under LAM).

Where we still differ from the official code (docs/peers.md, SemDeDup): no faiss — numpy's
generator draws the initial sample and the split choices (the same distributions as faiss' own
generator, not the same draws), and the arithmetic is float64 (faiss and the official torch rule
use float32), so decisions can differ where two cosines agree to float32 rounding. A dropped chunk
is deleted without a stub (SemDeDup keeps no pointer), so its net and gross removal agree.

Scope: ``"trajectory"`` clusters each trajectory's chunks on their own (LAM's reach, App. F.8);
``"corpus"`` clusters all trajectories' chunks together and may match across them (the main
configuration of Table 17). SemDeDup rewrites the whole memory when it reclusters, so it is not
prefix-stable. Seed sensitivity (App. D): :func:`seed_agreement` over the deletion sets of several
seeds (paper: pairwise Jaccard 0.731 and 50.9 % of the union shared by all seeds at ``cos 0.95``).
"""

from __future__ import annotations

import itertools
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..geometry import LamValueError, validate_embeddings
from ..text.chunking import Chunk, Tokenizer
from ..text.pipeline import _snap
from ..text.records import Trajectory
from .base import PeerResult, build_result

__all__ = [
    "DEFAULT_KEEP",
    "DEFAULT_PER_CLUSTER",
    "KEEP",
    "MAX_POINTS_PER_CENTROID",
    "NITER",
    "Clustering",
    "apply_deletions",
    "cluster_order",
    "cluster_rule",
    "n_clusters_for",
    "seed_agreement",
    "semdedup_deleted",
    "spherical_kmeans",
    "validate_eps",
    "validate_keep",
]

DEFAULT_PER_CLUSTER = 50
#: k-means rounds (the official ``niter: 100``).
NITER = 100
#: Former name of :data:`NITER`.
MAX_ITER = NITER
#: faiss trains on at most this many points per centroid (a uniform sample beyond it).
MAX_POINTS_PER_CENTROID = 256
#: Which member of a group of near-duplicates survives (``which_to_keep``; ``earliest`` is ours).
KEEP = ("hard", "easy", "random", "earliest")
DEFAULT_KEEP = "hard"
_SPLIT_EPS = 1.0 / 1024.0
_SPLIT_SEED = 1234  # faiss' split_clusters uses its own generator seeded with 1234


def validate_eps(eps: Any, name: str = "eps") -> float:
    """``eps`` as a float in the open interval ``(0, 1)``; otherwise an error naming it."""
    if isinstance(eps, bool) or not isinstance(eps, (int, float)) or not 0.0 < float(eps) < 1.0:
        raise LamValueError(f"{name} must be in (0, 1) (SemDeDup drops cos > 1 - eps), got {eps!r}")
    return float(eps)


def validate_keep(keep: Any, name: str = "keep") -> str:
    """``keep`` as one of :data:`KEEP`; otherwise an error naming it."""
    if keep not in KEEP:
        raise LamValueError(f"{name} must be one of {', '.join(KEEP)}, got {keep!r}")
    return str(keep)


def n_clusters_for(n: int, per_cluster: int = DEFAULT_PER_CLUSTER) -> int:
    """``max(1, round(n / per_cluster))`` clusters for ``n`` chunks (at most ``n``)."""
    if isinstance(per_cluster, bool) or not isinstance(per_cluster, int) or per_cluster < 1:
        raise LamValueError(f"per_cluster must be an integer >= 1, got {per_cluster!r}")
    return max(1, min(int(n), int(round(n / per_cluster)))) if n else 0


@dataclass(frozen=True)
class Clustering:
    """Result of :func:`spherical_kmeans`: ``labels`` ``int64[n]``, unit ``centroids``
    ``float64[k, d]``, the rounds run and the empty clusters re-seeded by splitting."""

    labels: np.ndarray
    centroids: np.ndarray
    iterations: int
    splits: int

    @property
    def k(self) -> int:
        return int(self.centroids.shape[0])


def _unit_rows(c: np.ndarray) -> np.ndarray:
    norm = np.linalg.norm(c, axis=1, keepdims=True)
    return np.divide(c, norm, out=c.copy(), where=norm > 0.0)


def _split_empty(centers: np.ndarray, counts: np.ndarray, n: int) -> int:
    """faiss' ``split_clusters``: each empty cluster ``ci`` takes a perturbed copy of a cluster
    ``cj`` chosen by scanning ``cj = 0, 1, ...`` (cyclically) and accepting it with probability
    ``(|cj| - 1) / (n - k)``; the two split ``cj``'s count evenly. Returns the number of splits."""
    k = counts.shape[0]
    rng = np.random.default_rng(_SPLIT_SEED)
    sign = np.where(np.arange(centers.shape[1]) % 2 == 0, 1.0, -1.0)
    splits = 0
    for ci in range(k):
        if counts[ci]:
            continue
        if n == k:  # p = (|cj| - 1) / 0: only a cluster with two or more members is accepted
            cj = int(np.flatnonzero(counts >= 2)[0])
        else:
            cj = 0
            while rng.random() >= (counts[cj] - 1.0) / (n - k):
                cj = (cj + 1) % k
        centers[ci] = centers[cj] * (1.0 + _SPLIT_EPS * sign)
        centers[cj] = centers[cj] * (1.0 - _SPLIT_EPS * sign)
        counts[ci] = counts[cj] // 2
        counts[cj] -= counts[ci]
        splits += 1
    return splits


def spherical_kmeans(x: np.ndarray, k: int, seed: int, *, niter: int = NITER) -> Clustering:
    """Spherical k-means of unit rows ``x`` as faiss runs it for SemDeDup (module docstring, step 1).

    Raises:
        LamValueError: ``x`` not unit rows, ``k`` outside ``[1, n]`` or ``niter < 1``.
    """
    x = validate_embeddings(x, name="x")
    n = x.shape[0]
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or not 1 <= k <= max(n, 1):
        raise LamValueError(f"k must be an integer in [1, {n}], got {k!r}")
    if isinstance(niter, bool) or not isinstance(niter, int) or niter < 1:
        raise LamValueError(f"niter must be an integer >= 1, got {niter!r}")
    k = int(k)
    if n == 0:
        return Clustering(np.zeros(0, np.int64), np.zeros((0, x.shape[1])), 0, 0)
    x64 = x.astype(np.float64)
    rng = np.random.default_rng(int(seed))
    train = x64
    if n > MAX_POINTS_PER_CENTROID * k:
        train = x64[np.sort(rng.choice(n, MAX_POINTS_PER_CENTROID * k, replace=False))]
    m = train.shape[0]
    centers = _unit_rows(train[rng.choice(m, k, replace=False)].copy())
    labels = np.full(m, -1, np.int64)
    splits = rounds = 0
    while rounds < niter:
        rounds += 1
        new = np.argmax(train @ centers.T, axis=1).astype(np.int64)
        counts = np.bincount(new, minlength=k)
        if np.array_equal(new, labels) and counts.all():
            break  # a fixed point: every further round computes the same centroids
        labels = new
        sums = np.zeros_like(centers)
        np.add.at(sums, labels, train)
        nonempty = counts > 0
        centers[nonempty] = sums[nonempty] / counts[nonempty, None]
        splits += _split_empty(centers, counts.copy(), m)
        centers = _unit_rows(centers)
    final = np.argmax(x64 @ centers.T, axis=1).astype(np.int64)
    return Clustering(final, centers, rounds, splits)


def _centroids_of(x: np.ndarray, labels: np.ndarray) -> dict[int, np.ndarray]:
    """Unit mean direction of each cluster (faiss' final centroid of a converged clustering)."""
    out = {}
    for c in np.unique(labels):
        s = x[labels == c].sum(axis=0)
        norm = float(np.linalg.norm(s))
        out[int(c)] = s / norm if norm > 0.0 else s
    return out


def cluster_order(x: np.ndarray, labels: np.ndarray, *, keep: str = DEFAULT_KEEP,
                  centroids: np.ndarray | None = None, seed: int = 0) -> list[np.ndarray]:
    """Each cluster's member ids (clusters in id order) in the order the rule visits them
    (module docstring, step 2): the first member always survives.

    ``centroids`` (row ``c`` for cluster ``c``) default to each cluster's unit mean direction.
    """
    keep = validate_keep(keep)
    x = np.asarray(x, dtype=np.float64)
    labels = np.asarray(labels, dtype=np.int64)
    if labels.shape != (x.shape[0],):
        raise LamValueError(f"labels must have shape ({x.shape[0]},), got {labels.shape}")
    cents = _centroids_of(x, labels) if centroids is None else None
    rng = np.random.default_rng(int(seed)) if keep == "random" else None
    out = []
    for c in np.unique(labels):
        ids = np.flatnonzero(labels == c)
        if ids.size >= 2 and keep != "earliest":
            if keep == "random":
                assert rng is not None
                ids = ids[rng.permutation(ids.size)]
            else:
                cen = cents[int(c)] if cents is not None else np.asarray(centroids, np.float64)[int(c)]
                dist = 1.0 - x[ids] @ cen
                ids = ids[np.argsort(-dist, kind="stable")]  # farthest first, ties in id order
                if keep == "easy":
                    ids = ids[::-1]
        out.append(ids)
    return out


def cluster_rule(x: np.ndarray, labels: np.ndarray, eps: float, *, keep: str = DEFAULT_KEEP,
                 centroids: np.ndarray | None = None, seed: int = 0) -> np.ndarray:
    """SemDeDup's per-cluster rule: boolean ``deleted[n]`` (module docstring, steps 2–3).

    Within each cluster, members in :func:`cluster_order`; member ``j`` is deleted iff
    ``max_{i before j} cos(x_i, x_j) > 1 - eps`` (float64), dropped members included.
    """
    eps = validate_eps(eps)
    x = np.asarray(x, dtype=np.float64)
    deleted = np.zeros(x.shape[0], dtype=bool)
    for ids in cluster_order(x, labels, keep=keep, centroids=centroids, seed=seed):
        if ids.size < 2:
            continue
        g = x[ids] @ x[ids].T
        g[np.tril_indices(ids.size)] = -np.inf  # only earlier members (row i < column j)
        best = g.max(axis=0)
        deleted[ids[best > 1.0 - eps]] = True
    return deleted


def semdedup_deleted(x: np.ndarray, eps: float, seed: int, *, k: int | None = None,
                     per_cluster: int = DEFAULT_PER_CLUSTER, keep: str = DEFAULT_KEEP,
                     clustering: Clustering | None = None, labels: np.ndarray | None = None) -> np.ndarray:
    """Deleted chunk ids (sorted ``int64``) of SemDeDup on unit rows ``x``.

    Clusters come from ``clustering`` (its centroids order the members), else from ``labels``
    (centroids: each cluster's mean direction), else from :func:`spherical_kmeans` with ``seed``
    and ``k`` clusters (default :func:`n_clusters_for` ``(n, per_cluster)``; capped at ``n``).
    ``seed`` also seeds the ``"random"`` order.
    """
    x = validate_embeddings(x, name="x")
    keep = validate_keep(keep)
    n = x.shape[0]
    if n == 0:
        return np.zeros(0, np.int64)
    centroids = None
    if clustering is not None:
        labels, centroids = clustering.labels, clustering.centroids
    elif labels is None:
        kk = n_clusters_for(n, per_cluster) if k is None else min(_validate_k(k), n)
        cl = spherical_kmeans(x, kk, seed)
        labels, centroids = cl.labels, cl.centroids
    return np.flatnonzero(cluster_rule(x, labels, eps, keep=keep, centroids=centroids, seed=seed)).astype(np.int64)


def _validate_k(k: Any, name: str = "k") -> int:
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k < 1:
        raise LamValueError(f"{name} must be an integer >= 1 (the number of k-means clusters), got {k!r}")
    return int(k)


def apply_deletions(
    traj: Trajectory,
    chunks: Sequence[Chunk],
    deleted: Sequence[int],
    tokenizer: Tokenizer,
    operating_point: dict[str, Any],
    *,
    method: str = "semdedup",
    prefix_stable: bool = False,
    extra: dict[str, Any] | None = None,
) -> PeerResult:
    """The residual of a trajectory whose chunks ``deleted`` (ids within the trajectory) are cut
    out without stubs; each character belongs to the chunk holding its first byte."""
    t0 = time.perf_counter()
    gone = set(int(i) for i in deleted)
    ids = {c.id for c in chunks}
    bad = gone - ids
    if bad:
        raise LamValueError(f"deleted chunk ids {sorted(bad)[:5]} are not chunks of trajectory {traj.id!r}")
    by_rec: dict[int, list[Chunk]] = {}
    for c in chunks:
        by_rec.setdefault(c.record, []).append(c)
    edits: dict[int, tuple[str, list[tuple[int, int, bytes]]]] = {}
    for rec, cs in by_rec.items():
        if not any(c.id in gone for c in cs):
            continue
        b = traj.records[rec].text.encode("utf-8", errors="surrogatepass")
        out = bytearray()
        patches: list[tuple[int, int, bytes]] = []
        run = bytearray()
        for c in cs:
            s0, s1 = _snap(b, c.byte_start), _snap(b, c.byte_end)
            if c.id in gone:
                run += b[s0:s1]
                continue
            if run:
                patches.append((len(out), len(out), bytes(run)))
                run = bytearray()
            out += b[s0:s1]
        if run:
            patches.append((len(out), len(out), bytes(run)))
        edits[rec] = (out.decode("utf-8", errors="surrogatepass"), patches)
    kept = [c.id for c in chunks if c.id not in gone]
    return build_result(method, operating_point, traj, tokenizer, edits=edits, unit="chunk", kept_units=kept,
                        deleted_units=sorted(gone), prefix_stable=prefix_stable,
                        wall_s=time.perf_counter() - t0, extra=extra)


def seed_agreement(deletion_sets: Sequence[Sequence[int]]) -> dict[str, Any]:
    """Stability of deletion sets (any hashable unit ids) across seeds (App. D): mean and smallest
    pairwise Jaccard, the share of the union deleted under every seed, and how many units change
    status. Empty sets agree (1.0)."""
    sets = [set(s) for s in deletion_sets]
    if not sets:
        raise LamValueError("deletion_sets is empty: need at least one seed's deletion set")
    union = set().union(*sets)
    inter = set.intersection(*sets)
    pairs = [(len(a & b) / len(a | b)) if (a | b) else 1.0 for a, b in itertools.combinations(sets, 2)]
    return {
        "seeds": len(sets),
        "pairwise_jaccard": float(np.mean(pairs)) if pairs else 1.0,
        "min_pairwise_jaccard": float(min(pairs)) if pairs else 1.0,
        "shared_of_union": len(inter) / len(union) if union else 1.0,
        "changed_status": len(union - inter),
        "union": len(union),
    }
