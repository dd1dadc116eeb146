"""SemDeDup (Abbas et al., 2023) as a chunk compactor (paper §3.1–3.2, App. D, F.8, Table 17; SPEC §16).

1. **Spherical k-means** on the unit chunk embeddings: k-means++ seeding
   (:func:`sklearn.cluster.kmeans_plusplus`, ``random_state=seed``), then Lloyd iterations that
   assign each chunk to the centroid of largest cosine and renormalise each centroid (an empty
   cluster keeps its centroid), until no assignment changes (at most :data:`MAX_ITER` rounds).
   The number of clusters is ``max(1, round(n / per_cluster))`` with ``per_cluster = 50`` by
   default (App. D: 27,986 chunks in 559 clusters, 50.1 per cluster).
2. **Per cluster**, in the cluster's order, chunk ``j`` is dropped iff its largest cosine to an
   earlier chunk of the cluster **exceeds** ``1 - eps`` — earlier chunks count whether they were
   kept or dropped (unlike LAM, which compares only with retained chunks: the chain ``a ~ b ~ c``
   with ``a`` not near ``c`` loses ``b`` and ``c`` here and keeps ``a`` and ``c`` under LAM).

Choices that are ours (the paper leaves them open): the cluster order is **arrival order** (chunk
id), not the original code's distance-to-centroid order, so that the earliest copy survives as in
LAM and the comparison is about the rule, not the order; the comparison is strict (``>``) as in the
SemDeDup paper, in float64 cosines. A dropped chunk is deleted without a stub (SemDeDup keeps no
pointer), so its net and gross removal agree.

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
from typing import Any

import numpy as np

from ..geometry import LamValueError, validate_embeddings
from ..text.chunking import Chunk, Tokenizer
from ..text.pipeline import _snap
from ..text.records import Trajectory
from .base import PeerResult, build_result

__all__ = [
    "DEFAULT_PER_CLUSTER",
    "MAX_ITER",
    "apply_deletions",
    "cluster_rule",
    "n_clusters_for",
    "seed_agreement",
    "semdedup_deleted",
    "spherical_kmeans",
    "validate_eps",
]

DEFAULT_PER_CLUSTER = 50
MAX_ITER = 100


def validate_eps(eps: Any, name: str = "eps") -> float:
    """``eps`` as a float in the open interval ``(0, 1)``; otherwise an error naming it."""
    if isinstance(eps, bool) or not isinstance(eps, (int, float)) or not 0.0 < float(eps) < 1.0:
        raise LamValueError(f"{name} must be in (0, 1) (SemDeDup drops cos > 1 - eps), got {eps!r}")
    return float(eps)


def n_clusters_for(n: int, per_cluster: int = DEFAULT_PER_CLUSTER) -> int:
    """``max(1, round(n / per_cluster))`` clusters for ``n`` chunks (at most ``n``)."""
    if isinstance(per_cluster, bool) or not isinstance(per_cluster, int) or per_cluster < 1:
        raise LamValueError(f"per_cluster must be an integer >= 1, got {per_cluster!r}")
    return max(1, min(int(n), int(round(n / per_cluster)))) if n else 0


def spherical_kmeans(x: np.ndarray, k: int, seed: int) -> np.ndarray:
    """Cluster labels ``int64[n]`` of unit rows ``x`` by spherical k-means (module docstring).

    Raises:
        LamValueError: ``x`` not unit rows, or ``k`` outside ``[1, n]``.
    """
    from sklearn.cluster import kmeans_plusplus

    x = validate_embeddings(x, name="x")
    n = x.shape[0]
    if isinstance(k, bool) or not isinstance(k, int) or not 1 <= k <= max(n, 1):
        raise LamValueError(f"k must be an integer in [1, {n}], got {k!r}")
    if n == 0:
        return np.zeros(0, np.int64)
    x64 = x.astype(np.float64)
    centers, _ = kmeans_plusplus(x64, k, random_state=int(seed))
    centers /= np.linalg.norm(centers, axis=1, keepdims=True)
    labels = np.full(n, -1, np.int64)
    for _ in range(MAX_ITER):
        new = np.argmax(x64 @ centers.T, axis=1).astype(np.int64)
        if np.array_equal(new, labels):
            break
        labels = new
        for c in range(k):
            members = x64[labels == c]
            if members.shape[0]:
                s = members.sum(axis=0)
                norm = float(np.linalg.norm(s))
                if norm > 0.0:
                    centers[c] = s / norm
    return labels


def cluster_rule(x: np.ndarray, labels: np.ndarray, eps: float) -> np.ndarray:
    """SemDeDup's per-cluster rule: boolean ``deleted[n]`` (module docstring, step 2).

    Within each cluster, members in id order; member ``j`` is deleted iff
    ``max_{i < j in the cluster} cos(x_i, x_j) > 1 - eps`` (float64), dropped members included.
    """
    eps = validate_eps(eps)
    x = np.asarray(x, dtype=np.float64)
    labels = np.asarray(labels, dtype=np.int64)
    if labels.shape != (x.shape[0],):
        raise LamValueError(f"labels must have shape ({x.shape[0]},), got {labels.shape}")
    deleted = np.zeros(x.shape[0], dtype=bool)
    for c in np.unique(labels):
        ids = np.flatnonzero(labels == c)
        if ids.size < 2:
            continue
        g = x[ids] @ x[ids].T
        g[np.tril_indices(ids.size)] = -np.inf  # only earlier members (row i < column j)
        best = g.max(axis=0)
        deleted[ids[best > 1.0 - eps]] = True
    return deleted


def semdedup_deleted(x: np.ndarray, eps: float, seed: int, *, per_cluster: int = DEFAULT_PER_CLUSTER,
                     labels: np.ndarray | None = None) -> np.ndarray:
    """Deleted chunk ids (sorted ``int64``) of SemDeDup on unit rows ``x`` (clusters from ``labels``
    when given, else :func:`spherical_kmeans` with ``seed``)."""
    x = validate_embeddings(x, name="x")
    if x.shape[0] == 0:
        return np.zeros(0, np.int64)
    if labels is None:
        labels = spherical_kmeans(x, n_clusters_for(x.shape[0], per_cluster), seed)
    return np.flatnonzero(cluster_rule(x, labels, eps)).astype(np.int64)


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
    """Stability of deletion sets (any hashable unit ids) across seeds (App. D): mean pairwise Jaccard, the share of the
    union deleted under every seed, and how many units change status. Empty sets agree (1.0)."""
    sets = [set(s) for s in deletion_sets]
    if not sets:
        raise LamValueError("deletion_sets is empty: need at least one seed's deletion set")
    union = set().union(*sets)
    inter = set.intersection(*sets)
    pairs = [(len(a & b) / len(a | b)) if (a | b) else 1.0 for a, b in itertools.combinations(sets, 2)]
    return {
        "seeds": len(sets),
        "pairwise_jaccard": float(np.mean(pairs)) if pairs else 1.0,
        "shared_of_union": len(inter) / len(union) if union else 1.0,
        "changed_status": len(union - inter),
        "union": len(union),
    }
