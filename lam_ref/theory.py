r"""The theory of paper §2.4 and Appendix C as functions on a set of rows: the quantities the
claims are stated about (score deficits, top-k covers, rank deficits, the map's entropy,
Definition 1, eq. 1's identity, captured energy, the hull deficit, packings).

Library code: :mod:`lam_ref.verify` and the claim records of :mod:`lam_ref.claims` (which hold
each claim's metadata, its ``measure`` on a set, the rule that decides it and its aggregation)
call these, importing them from here. The
merge decision itself is always the exact rule of :mod:`lam_ref.geometry`; tolerances are stated
where floating point enters (:data:`FP_TOL`).
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from .covering import hull_distance
from .geometry import (
    LamValueError,
    delta_from_t,
    delta_sq,
    kept_mask,
    sq_dist_rows,
    validate_embeddings,
    validate_map,
    validate_threshold,
    within_delta_pairs,
)

__all__ = [
    "FP_TOL",
    "HullDeficit",
    "RankDeficit",
    "SubstitutionCheck",
    "adversarial_queries",
    "captured_energy",
    "eq1_residuals",
    "gem_energy_bound",
    "hull_deficit",
    "is_packing",
    "map_entropy",
    "measure_substitution",
    "random_queries",
    "rank_deficits",
    "score_deficits",
    "top_k_cover",
]

#: Slack for float64 round-off in inner products of unit rows (Cauchy–Schwarz checks).
FP_TOL = 1e-12


# ----------------------------------------------------------------------------------------------
# THM1: score deficits (paper §2.4, Theorem 1; App. C.2)


def random_queries(dim: int, n: int, seed: int = 0) -> np.ndarray:
    """``n`` unit queries uniform on the sphere of ``R^dim`` (float64).

    Examples:
        >>> q = random_queries(3, 4, seed=1)
        >>> q.shape, bool(np.allclose(np.linalg.norm(q, axis=1), 1.0))
        ((4, 3), True)
    """
    rng = np.random.default_rng(seed)
    q = rng.standard_normal((n, dim))
    return q / np.linalg.norm(q, axis=1, keepdims=True)


def adversarial_queries(embeddings: Any, pi: Any) -> np.ndarray:
    """``q = normalize(x - π(x))`` for every deleted ``x`` (float64): the direction in which the
    substitution of ``x`` loses most (Theorem 1's tightness witness generalised).

    Examples:
        >>> adversarial_queries(np.array([[1.0, 0.0], [0.6, 0.8]]), [0, 0]).round(3).tolist()
        [[-0.447, 0.894]]
    """
    e = np.asarray(embeddings, dtype=np.float64)
    p = validate_map(pi, e.shape[0], structure=False)
    deleted = np.flatnonzero(~kept_mask(p))
    diff = e[deleted] - e[p[deleted]]
    norms = np.linalg.norm(diff, axis=1)
    ok = norms > 0
    return diff[ok] / norms[ok, None]


def score_deficits(embeddings: Any, kept: Any, queries: Any) -> np.ndarray:
    """``max_{x∈S} q·x - max_{z∈R} q·z`` for each query row (Theorem 1's quantity; float64).

    Args:
        embeddings: ``(N, D)`` rows ``S``.
        kept: boolean mask of the retained rows ``R`` (non-empty).
        queries: one query or a ``(Q, D)`` array of queries.

    Returns:
        float64 array of ``Q`` deficits.

    Raises:
        LamValueError: when ``kept`` is not a non-empty mask of shape ``(N,)``.

    Examples:
        >>> score_deficits(np.array([[1.0, 0.0], [0.6, 0.8]]), [True, False], [0.0, 1.0]).tolist()
        [0.8]
    """
    e = np.asarray(embeddings, dtype=np.float64)
    k = np.asarray(kept, dtype=bool)
    if k.shape != (e.shape[0],) or not k.any():
        raise LamValueError(
            f"kept must be a non-empty boolean mask of shape ({e.shape[0]},), got shape {k.shape} with {int(k.sum())} retained"
        )
    q = np.atleast_2d(np.asarray(queries, dtype=np.float64))
    scores = q @ e.T
    return scores.max(axis=1) - scores[:, k].max(axis=1)


# ----------------------------------------------------------------------------------------------
# COR1: top-k δ-cover (App. C.2, Corollary 1)


def top_k_cover(embeddings: Any, pi: Any, query: Any, k: int, t: float) -> bool:
    """Corollary 1 (claim ``COR1``) for one query: every member ``x`` of the true top-``k`` is
    retained or has ``π(x)`` retained within δ, and ``|q·x - q·π(x)| <= δ``.

    Args:
        embeddings: ``(N, D)`` rows.
        pi: the map.
        query: one query vector.
        k: size of the top list.
        t: cosine threshold (``δ = sqrt(2 - 2t)``).

    Returns:
        Whether the top-``k`` is covered.

    Examples:
        >>> e = np.array([[1.0, 0.0], [0.6, 0.8]])
        >>> top_k_cover(e, [0, 0], [0.0, 1.0], 2, 0.5), top_k_cover(e, [0, 0], [0.0, 1.0], 2, 0.9)
        (True, False)
    """
    e = np.asarray(embeddings, dtype=np.float64)
    p = validate_map(pi, e.shape[0], structure=False)
    q = np.asarray(query, dtype=np.float64)
    scores = e @ q
    top = np.argsort(-scores, kind="stable")[:k]
    delta = delta_from_t(t)
    kept = kept_mask(p)
    for x in top:
        r = int(p[x])
        if not kept[r]:
            return False
        if float(np.linalg.norm(e[x] - e[r])) > delta + FP_TOL:
            return False
        if abs(scores[x] - scores[r]) > delta + FP_TOL:
            return False
    return True


# ----------------------------------------------------------------------------------------------
# PROP1: rank deficits (App. C.2, Proposition 1)


@dataclass(frozen=True)
class RankDeficit:
    """Proposition 1 for one query: ``gaps[j-1] = s_j - r_j`` (``j <= min(k, |R|)``); ``injective``
    says whether ``π`` is injective on the true top-``k``; ``collapse`` is the largest distance
    between two top-``k`` members sharing a representative (``<= 2δ`` always)."""

    gaps: np.ndarray
    injective: bool
    collapse: float


def rank_deficits(embeddings: Any, pi: Any, query: Any, k: int) -> RankDeficit:
    """Rank-wise deficits ``s_j - r_j`` of Proposition 1 (claim ``PROP1``).

    Examples:
        >>> rd = rank_deficits(np.array([[1.0, 0.0], [0.6, 0.8]]), [0, 0], [0.0, 1.0], 1)
        >>> rd.gaps.round(3).tolist(), rd.injective
        ([0.8], True)
    """
    e = np.asarray(embeddings, dtype=np.float64)
    p = validate_map(pi, e.shape[0], structure=False)
    q = np.asarray(query, dtype=np.float64)
    scores = e @ q
    kept = kept_mask(p)
    s = np.sort(scores)[::-1]
    r = np.sort(scores[kept])[::-1]
    m = min(k, r.size, s.size)
    top = np.argsort(-scores, kind="stable")[:k]
    reps = p[top]
    injective = np.unique(reps).size == reps.size
    collapse = 0.0
    if not injective:
        for a in range(top.size):
            for b in range(a + 1, top.size):
                if reps[a] == reps[b]:
                    collapse = max(collapse, float(np.linalg.norm(e[top[a]] - e[top[b]])))
    return RankDeficit(s[:m] - r[:m], bool(injective), collapse)


# ----------------------------------------------------------------------------------------------
# COR2: the entropy of the map (App. C.2, Corollary 2, eq. 3)


def map_entropy(pi: Any, p: Any) -> dict[str, float]:
    """Corollary 2 (claim ``COR2``) for a source ``X ~ p`` on ``S``.

    Args:
        pi: the map (``N`` ids).
        p: a probability vector of length ``N``.

    Returns:
        ``H_pi`` (``H(π(X))``), ``I`` (``I(X; π(X))``, computed from the joint law independently
        of the identity ``I = H(π(X))``), ``H_X`` and ``log2_R``, all in bits.

    Raises:
        LamValueError: for a map of the wrong shape or ``p`` not a probability vector.

    Examples:
        >>> m = map_entropy([0, 0, 2, 2], [0.25] * 4)
        >>> m["H_pi"], m["I"], m["log2_R"]
        (1.0, 1.0, 1.0)
    """
    pm = np.asarray(p, dtype=np.float64)
    n = pm.shape[0]
    pi_arr = validate_map(pi, n, structure=False)
    if np.any(pm < 0) or not np.all(np.isfinite(pm)) or not math.isclose(pm.sum(), 1.0, rel_tol=0, abs_tol=1e-9):
        raise LamValueError(f"p must be a probability vector (>= 0, sums to 1), got sum {pm.sum()!r}")
    kept = np.flatnonzero(kept_mask(pi_arr))
    q = np.bincount(pi_arr, weights=pm, minlength=n)

    def h(v: np.ndarray) -> float:
        v = v[v > 0]
        return float(-(v * np.log2(v)).sum())

    # mutual information from the joint p(x, r) = p_x·[π(x) = r]
    mi = 0.0
    for x in range(n):
        if pm[x] > 0:
            joint = pm[x]
            mi += joint * math.log2(joint / (pm[x] * q[pi_arr[x]]))
    return {"H_pi": h(q), "I": float(mi), "H_X": h(pm), "log2_R": math.log2(kept.size) if kept.size else 0.0}


# ----------------------------------------------------------------------------------------------
# DEF1: δ-substitution (§2.4, Definition 1)


@dataclass(frozen=True)
class SubstitutionCheck:
    """Result of :func:`measure_substitution`: ``valid`` iff ``(R, π)`` is a δ-substitution (DEF1).

    ``ordered`` additionally says every representative has a smaller id (SPEC §1 convention);
    ``problems`` lists the first violations found (row ids named).
    """

    valid: bool
    ordered: bool
    n: int
    kept: int
    delta: float
    delta_hat: float
    problems: tuple[str, ...]

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def measure_substitution(embeddings: Any, pi: Any, t: float) -> SubstitutionCheck:
    """Check Definition 1 (claim ``DEF1``): ``R = {i : π[i] = i}``, ``π`` maps into ``R``
    (``π|_R = id``) and ``sq(e_i, e_π[i]) <= δ²`` by the exact rule, for every row.

    Args:
        embeddings: ``(N, D)`` unit rows.
        pi: the map, ``N`` integer ids (violations are reported, not raised).
        t: cosine threshold.

    Returns:
        A :class:`SubstitutionCheck` with the measured bound ``δ̂ = max ||e_i - e_π[i]||``
        (0.0 if nothing merged, §C.5).

    Raises:
        LamValueError: for bad rows, a bad threshold, or a map of the wrong shape or dtype.

    Examples:
        >>> e = np.array([[1, 0], [0.6, 0.8]], dtype=np.float32)
        >>> measure_substitution(e, [0, 0], 0.5).valid
        True
        >>> measure_substitution(e, [0, 0], 0.9).problems[0][:30]
        'row 1 is 0.894427191 from pi[1'
    """
    e = validate_embeddings(embeddings)
    t = validate_threshold(t)
    n = e.shape[0]
    p = validate_map(pi, n, structure=False)
    problems: list[str] = []
    ids = np.arange(n, dtype=np.int64)
    in_range = (p >= 0) & (p < n)
    if not in_range.all():
        i = int(np.flatnonzero(~in_range)[0])
        problems.append(f"pi[{i}] = {int(p[i])} is not a row id")
        return SubstitutionCheck(False, False, n, 0, delta_from_t(t), math.nan, tuple(problems))
    kept = kept_mask(p)
    not_into_r = ~kept[p]
    if not_into_r.any():
        i = int(np.flatnonzero(not_into_r)[0])
        problems.append(f"pi[{i}] = {int(p[i])} is not retained (pi[{int(p[i])}] = {int(p[p[i]])})")
    sq = sq_dist_rows(e, ids, e[p])
    d2 = delta_sq(t)
    far = sq > d2
    if far.any():
        i = int(np.flatnonzero(far)[0])
        problems.append(f"row {i} is {math.sqrt(sq[i]):.9g} from pi[{i}] = {int(p[i])}, more than delta = {math.sqrt(d2):.9g}")
    merged = ~kept
    delta_hat = float(np.sqrt(sq[merged].max())) if merged.any() else 0.0
    ordered = bool(np.all(p <= ids))
    return SubstitutionCheck(not problems, ordered, n, int(kept.sum()), math.sqrt(d2), delta_hat, tuple(problems))


# ----------------------------------------------------------------------------------------------
# EQ1: the merge rule's identity ||x - y||² = 2 - 2 cos (§2.4, eq. 1)


def eq1_residuals(embeddings: Any, t: float, *, max_pairs: int = 100_000, seed: int = 0) -> dict[str, Any]:
    """Claim ``EQ1`` on data: ``sq = 2 - 2 a·b`` up to the rows' norm error, and the merge rule
    ``sq <= δ²`` agrees with ``cos >= t`` on every sampled pair outside that slack.

    Args:
        embeddings: ``(N, D)`` unit rows.
        t: cosine threshold in ``[-1, 1]``.
        max_pairs: all pairs when there are at most this many, else this many random pairs.
        seed: seed of the pair sample.

    Returns:
        ``pairs``, ``max_residual`` (``max |sq - (2 - 2a·b)|``), ``slack`` (``|‖a‖²-1| +
        |‖b‖²-1|`` max plus the float64 round-off bound ``8(D+2)·eps``), ``within_slack`` and
        ``disagreements`` (pairs outside the slack band decided differently).

    Raises:
        LamValueError: for rows that are not unit vectors or a threshold outside ``[-1, 1]``.

    Examples:
        >>> e = np.array([[1, 0], [0.6, 0.8]], dtype=np.float32)
        >>> r = eq1_residuals(e, 0.5)
        >>> r["pairs"], r["disagreements"], r["within_slack"]
        (1, 0, True)
    """
    e = validate_embeddings(embeddings)
    t = validate_threshold(t)
    n = e.shape[0]
    if n < 2:
        return {"pairs": 0, "max_residual": 0.0, "slack": 0.0, "disagreements": 0, "within_slack": True}
    rng = np.random.default_rng(seed)
    total = n * (n - 1) // 2
    if total <= max_pairs:
        i, j = np.triu_indices(n, k=1)
    else:
        i = rng.integers(0, n, size=max_pairs)
        j = rng.integers(0, n, size=max_pairs)
        keep = i != j
        i, j = i[keep], j[keep]
    e64 = e.astype(np.float64)
    sq = sq_dist_rows(e, i, e[j])
    dot = np.einsum("ij,ij->i", e64[i], e64[j])
    norms_sq = np.einsum("ij,ij->i", e64, e64)
    # norm error of the rows plus float64 summation round-off over D terms (|terms| sum to <= 8)
    roundoff = 8.0 * (e.shape[1] + 2) * np.finfo(np.float64).eps
    slack_pair = np.abs(norms_sq[i] - 1.0) + np.abs(norms_sq[j] - 1.0) + roundoff
    residual = np.abs(sq - (2.0 - 2.0 * dot))
    d2 = delta_sq(t)
    cos = dot / np.sqrt(norms_sq[i] * norms_sq[j])
    clear = np.abs(sq - d2) > 2 * slack_pair + 4 * np.abs(1 - np.sqrt(norms_sq[i] * norms_sq[j]))
    disagree = ((sq <= d2) != (cos >= t)) & clear
    return {
        "pairs": int(i.size),
        "max_residual": float(residual.max()),
        "slack": float(slack_pair.max()),
        "disagreements": int(disagree.sum()),
        "within_slack": bool(np.all(residual <= slack_pair)),
    }


# ----------------------------------------------------------------------------------------------
# GEMLINK: captured energy (App. C.6)


def captured_energy(embeddings: Any, kept: Any) -> float:
    """GEM's captured energy (seed 002, eq. 3): ``E(R) = (1/n) Σ_i ||Q_Rᵀ x_i||²`` with ``Q_R`` an
    orthonormal basis of ``span(R)`` (SVD, rank tolerance ``1e-10·σ_max``). Claim ``GEMLINK``.

    Raises:
        LamValueError: for an empty set.

    Examples:
        >>> round(captured_energy(np.array([[1.0, 0.0], [0.6, 0.8]]), [True, False]), 6)
        0.68
    """
    e = np.asarray(embeddings, dtype=np.float64)
    k = np.asarray(kept, dtype=bool)
    n = e.shape[0]
    if n == 0:
        raise LamValueError("embeddings is empty: captured energy needs n >= 1")
    r = e[k]
    if r.shape[0] == 0:
        return 0.0
    u, s, vt = np.linalg.svd(r, full_matrices=False)
    basis = vt[s > 1e-10 * s[0]]
    proj = e @ basis.T
    return float(np.einsum("ij,ij->", proj, proj) / n)


def gem_energy_bound(n: int, n_deleted: int, delta: float) -> float:
    """``1 - (|D|/n)·δ²``: the energy every δ-substitution captures (claim ``GEMLINK``).

    Proof: a retained ``x`` lies in ``span(R)``; a deleted ``x`` has ``dist(x, span R)² <=
    ||x - π(x)||² <= δ²``, so ``||Q_Rᵀ x||² >= 1 - δ²`` for unit ``x``.

    Raises:
        LamValueError: for ``n < 1``.

    Examples:
        >>> gem_energy_bound(4, 1, 0.5)
        0.9375
    """
    if n <= 0:
        raise LamValueError(f"n must be >= 1, got {n!r}")
    return 1.0 - (n_deleted / n) * delta * delta


# ----------------------------------------------------------------------------------------------
# HULL: the worst-case deficit is the distance to the hull


@dataclass(frozen=True)
class HullDeficit:
    """Claim ``HULL`` on a set: ``value = max_x dist(x, conv R)`` (the exact worst-case deficit),
    attained by ``query`` (``None`` when 0); ``lower`` is the certified lower bound; ``argmax``
    the row; ``solved`` how many deleted rows were solved (``complete`` if all of them)."""

    value: float
    lower: float
    argmax: int
    query: np.ndarray | None
    solved: int
    complete: bool


def hull_deficit(embeddings: Any, kept: Any, *, limit: int | None = None) -> HullDeficit:
    """``sup_{|q|=1} deficit(q) = max_{x∈S} dist(x, conv R)`` (claim ``HULL``), by solving one QP
    (:func:`~lam_ref.covering.hull_distance`) per deleted row (retained rows are at distance 0).

    Args:
        embeddings: ``(N, D)`` rows.
        kept: boolean mask of the retained rows.
        limit: solve only the ``limit`` deleted rows farthest from their nearest retained row;
            the result is then a lower bound on the supremum (``complete=False``).

    Returns:
        A :class:`HullDeficit`.

    Examples:
        >>> e = np.array([[1.0, 0.0], [0.0, 1.0], [0.6, 0.8]])
        >>> round(hull_deficit(e, [True, True, False]).value, 6)
        0.282843
    """
    e = np.asarray(embeddings, dtype=np.float64)
    k = np.asarray(kept, dtype=bool)
    deleted = np.flatnonzero(~k)
    r = e[k]
    if deleted.size == 0:
        return HullDeficit(0.0, 0.0, -1, None, 0, True)
    order = deleted
    if limit is not None and deleted.size > limit:
        nearest = np.array([np.min(np.linalg.norm(r - e[i], axis=1)) for i in deleted])
        order = deleted[np.argsort(-nearest, kind="stable")[:limit]]
    best, best_lower, best_i, best_q = 0.0, 0.0, -1, None
    for i in order:
        h = hull_distance(e[i], r)
        if h.distance > best:
            best, best_lower, best_i, best_q = h.distance, h.lower, int(i), h.direction
    return HullDeficit(best, best_lower, best_i, best_q, int(order.size), order.size == deleted.size)


# ----------------------------------------------------------------------------------------------
# PROP2: greedy's retained rows are a δ-packing (App. C.3, Proposition 2)


def is_packing(rows: np.ndarray, d2: float) -> bool:
    """Whether no two of ``rows`` are within ``sqrt(d2)`` by the exact rule (a δ-packing).

    Examples:
        >>> from lam_ref.geometry import delta_sq
        >>> is_packing(np.array([[1, 0], [0, 1]], dtype=np.float32), delta_sq(0.5))
        True
    """
    if rows.shape[0] < 2:
        return True
    found, _ = within_delta_pairs(np.ascontiguousarray(rows, dtype=np.float32), 0, rows.shape[0], d2)
    return found.size == 0
