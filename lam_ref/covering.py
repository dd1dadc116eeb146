"""Exact covering and packing numbers, greedy ceilings and the token optimum (paper App. C.2–C.3).

Definitions (SPEC §11, paper §C.3), all with the merge rule of :mod:`lam_ref.geometry` (``x`` is
*within δ* of ``c`` iff ``sq(x, c) <= δ² = 2 - 2t``):

* internal covering number ``N(S, δ)``: least ``|C|``, ``C ⊆ S``, every ``x`` within δ of some
  ``c ∈ C`` (a minimum dominating set of the δ-graph; claims ``PROP2``, ``THM2``, ``COR3``);
* packing number ``M(S, δ)``: greatest ``|P|``, ``P ⊆ S``, pairwise ``sq > δ²`` (a maximum
  independent set of the δ-graph; ``PROP2``);
* ``ρ*(δ) = 1 - N(S, δ)/|S|`` (eq. 6), the most any δ-substitution can remove;
* ``T(δ)`` (eq. 5): the least token weight of a retained set of a δ-substitution — a
  minimum-weight dominating set.

Each is solved exactly with :func:`scipy.optimize.milp` (HiGHS branch and bound) and every
returned witness is re-checked with the exact rule; :func:`brute_force_covering` and
:func:`brute_force_packing` enumerate subsets for cross-checks on small sets. Radius ``2δ`` is
the threshold ``t' = 4t - 3`` (Theorem 2, :func:`~lam_ref.geometry.t_prime`) and radius ``δ/2``
is ``(3 + t)/4`` (:func:`t_half`). Distances to convex hulls (claim ``HULL``) are computed by
Wolfe's minimum-norm-point algorithm with a duality certificate (:func:`hull_distance`).
"""

from __future__ import annotations

import itertools
import math
import time
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np
import scipy.sparse as sp
from scipy.optimize import Bounds, LinearConstraint, milp

from .geometry import (
    LamValueError,
    delta_sq,
    sq_dist_rows,
    t_prime,
    validate_embeddings,
    validate_int,
    validate_threshold,
)
from .substitution import substitute

__all__ = [
    "BRUTE_FORCE_LIMIT",
    "Bracket",
    "Ceiling",
    "ExactResult",
    "HullDistance",
    "all_pairs_sq",
    "bracket_bits",
    "brute_force_covering",
    "brute_force_packing",
    "brute_force_weighted_covering",
    "connected_components_map",
    "covering_number",
    "delta_graph",
    "greedy_ceiling",
    "greedy_kept",
    "hull_distance",
    "is_covering",
    "is_packing",
    "packing_number",
    "t_half",
    "token_weighted_optimum",
]

#: Largest set on which the brute-force solvers agree to run (``2^N`` subsets).
BRUTE_FORCE_LIMIT = 16


# ---------------------------------------------------------------------------------------------
# the δ-graph
# ---------------------------------------------------------------------------------------------
def all_pairs_sq(embeddings: np.ndarray) -> np.ndarray:
    """Exact ``N × N`` squared distances by the SPEC §2 rule (:func:`~lam_ref.geometry.sq_dist_rows`).

    ``O(N² D)``, row by row; for the small sets of exact solvers and property tests.
    """
    e = np.asarray(embeddings)
    n = e.shape[0]
    out = np.zeros((n, n), dtype=np.float64)
    idx = np.arange(n, dtype=np.int64)
    for i in range(n):
        out[i] = sq_dist_rows(e, idx, np.broadcast_to(e[i], e.shape))
    return out


def _radius_sq(t: float) -> float:
    """``2 - 2t`` for a threshold that may lie below -1 (radius ``2δ`` at ``t < 1/2``)."""
    t = float(t)
    if not math.isfinite(t) or t > 1.0:
        raise LamValueError(f"t must be finite and <= 1, got {t!r}")
    return delta_sq(t) if t >= -1.0 else math.inf


def delta_graph(embeddings: Any, t: float, *, normalize: bool = False) -> np.ndarray:
    """Boolean adjacency ``A[i, j] = sq(e_i, e_j) <= 2 - 2t`` (diagonal ``True``; SPEC §2 rule).

    ``t`` may be below -1 (a radius above 2, as ``t' = 4t - 3`` is for ``t < 1/2``): every pair
    of unit vectors is then adjacent.
    """
    e = validate_embeddings(embeddings, normalize=normalize)
    d2 = _radius_sq(t)
    adj = all_pairs_sq(e) <= d2
    np.fill_diagonal(adj, True)
    return adj


def t_half(t: float) -> float:
    """Threshold of radius ``δ/2``: ``2 - 2t_h = (2 - 2t)/4`` gives ``t_h = (3 + t)/4`` (Prop. 2)."""
    return (3.0 + validate_threshold(t)) / 4.0


def is_covering(adj: np.ndarray, members: np.ndarray) -> bool:
    """Every vertex is adjacent (closed neighbourhood) to some member: an internal covering."""
    members = np.asarray(members, dtype=np.int64)
    if adj.shape[0] == 0:
        return True
    return bool(members.size) and bool(adj[:, members].any(axis=1).all())


def is_packing(adj: np.ndarray, members: np.ndarray) -> bool:
    """No two distinct members are adjacent: a packing (pairwise ``sq > δ²``)."""
    members = np.asarray(members, dtype=np.int64)
    sub = adj[np.ix_(members, members)].copy()
    np.fill_diagonal(sub, False)
    return not sub.any()


# ---------------------------------------------------------------------------------------------
# exact solvers
# ---------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class ExactResult:
    """An exact (or bounded) optimum: ``value`` of ``witness``; ``lower <= optimum <= upper``.

    ``optimal`` is ``True`` when the solver proved optimality (then ``lower == upper == value``
    up to the MILP gap, which is zero here). ``method`` is ``milp`` or ``brute``.
    """

    value: float
    witness: np.ndarray
    optimal: bool
    lower: float
    upper: float
    method: str
    wall_time_s: float

    def to_json(self) -> dict[str, Any]:
        out = asdict(self)
        out["witness"] = self.witness.tolist()
        return out


def _milp(
    c: np.ndarray, a: sp.spmatrix, lb: np.ndarray, ub: np.ndarray, time_limit: float | None, node_limit: int | None
):
    options: dict[str, Any] = {"disp": False, "mip_rel_gap": 0.0}
    if time_limit is not None:
        options["time_limit"] = float(time_limit)
    if node_limit is not None:
        options["node_limit"] = validate_int(node_limit, "node_limit")
    return milp(
        c,
        constraints=LinearConstraint(a, lb, ub),
        integrality=np.ones(c.shape[0]),
        bounds=Bounds(0, 1),
        options=options,
    )


def _as_adjacency(adj_or_embeddings: Any, t: float | None) -> np.ndarray:
    if t is None:
        adj = np.asarray(adj_or_embeddings)
        if adj.dtype != bool or adj.ndim != 2 or adj.shape[0] != adj.shape[1]:
            raise LamValueError(f"adj must be a square boolean matrix when t is None, got {adj.dtype} {adj.shape}")
        if not np.array_equal(adj, adj.T):
            raise LamValueError("adj must be symmetric")
        adj = adj.copy()
        np.fill_diagonal(adj, True)
        return adj
    return delta_graph(adj_or_embeddings, t)


def _weighted_cover(
    adj: np.ndarray, w: np.ndarray, time_limit: float | None, node_limit: int | None, what: str
) -> ExactResult:
    n = adj.shape[0]
    start = time.perf_counter()
    if n == 0:
        return ExactResult(0.0, np.zeros(0, np.int64), True, 0.0, 0.0, "milp", 0.0)
    res = _milp(w, sp.csr_matrix(adj.astype(np.float64)), np.ones(n), np.full(n, np.inf), time_limit, node_limit)
    if res.x is None:
        raise LamValueError(f"{what}: the MILP solver returned no solution ({res.message})")
    witness = np.flatnonzero(res.x > 0.5).astype(np.int64)
    if not is_covering(adj, witness):  # pragma: no cover - solver bug guard
        raise LamValueError(f"{what}: the MILP solution is not a covering ({res.message})")
    value = float(w[witness].sum())
    optimal = res.status == 0
    lower = value if optimal else float(getattr(res, "mip_dual_bound", 0.0) or 0.0)
    return ExactResult(value, witness, optimal, lower, value, "milp", time.perf_counter() - start)


def covering_number(
    adj_or_embeddings: Any, t: float | None = None, *, time_limit: float | None = None, node_limit: int | None = None
) -> ExactResult:
    """Exact internal covering number ``N(S, δ)`` with a minimum witness (``scipy.optimize.milp``).

    ``min Σ x_i`` s.t. ``A x >= 1``, ``x ∈ {0,1}^N`` with ``A`` the closed δ-graph
    (:func:`delta_graph`). Pass embeddings and ``t``, or a boolean adjacency with ``t=None``.
    With ``time_limit`` (seconds) or ``node_limit`` (branch-and-bound nodes, deterministic) the
    result may be a bound: ``optimal=False``, ``value = upper`` from the best covering found and
    ``lower`` from HiGHS's dual bound, ``lower <= N <= upper``.
    Claims ``PROP2``, ``THM2``, ``COR3``.
    """
    adj = _as_adjacency(adj_or_embeddings, t)
    res = _weighted_cover(adj, np.ones(adj.shape[0]), time_limit, node_limit, "covering_number")
    lower = math.ceil(res.lower - 1e-9)
    return ExactResult(res.value, res.witness, res.optimal, float(lower), res.upper, "milp", res.wall_time_s)


def token_weighted_optimum(
    adj_or_embeddings: Any,
    t: float | None = None,
    *,
    weights: Any,
    time_limit: float | None = 60.0,
    node_limit: int | None = None,
) -> ExactResult:
    """``T(δ)`` of eq. 5: least total weight (tokens) of an internal δ-covering (min-weight
    dominating set), exact by MILP for up to a few hundred chunks. ``weights`` must be finite
    and ``>= 0``, one per row. ``time_limit``/``node_limit`` as in :func:`covering_number`.
    Claim ``COR3`` (§C.2 "From bits to tokens")."""
    adj = _as_adjacency(adj_or_embeddings, t)
    w = np.asarray(weights, dtype=np.float64)
    if w.shape != (adj.shape[0],):
        raise LamValueError(f"weights must have shape ({adj.shape[0]},), got {w.shape}")
    if not np.all(np.isfinite(w)) or np.any(w < 0):
        bad = int(np.flatnonzero(~np.isfinite(w) | (w < 0))[0])
        raise LamValueError(f"weights[{bad}] must be finite and >= 0, got {float(w[bad])!r}")
    return _weighted_cover(adj, w, time_limit, node_limit, "token_weighted_optimum")


def _greedy_cliques(adj: np.ndarray) -> list[np.ndarray]:
    """A family of cliques covering every edge (valid ``Σ_{j∈K} x_j <= 1`` cuts for packing)."""
    n = adj.shape[0]
    off = adj.copy()
    np.fill_diagonal(off, False)
    cliques: list[np.ndarray] = []
    covered = np.zeros_like(off)
    for i in range(n):
        for j in np.flatnonzero(off[i] & ~covered[i]):
            if j < i:
                continue
            clique = [i, int(j)]
            cand = np.flatnonzero(off[i] & off[j])
            for k in cand:
                if all(off[k, m] for m in clique):
                    clique.append(int(k))
            members = np.array(sorted(clique), dtype=np.int64)
            covered[np.ix_(members, members)] = True
            cliques.append(members)
    return cliques


def packing_number(
    adj_or_embeddings: Any, t: float | None = None, *, time_limit: float | None = None, node_limit: int | None = None
) -> ExactResult:
    """Exact packing number ``M(S, δ)`` with a maximum witness (``scipy.optimize.milp``).

    ``max Σ x_i`` s.t. ``Σ_{j∈K} x_j <= 1`` for a family of cliques ``K`` of the δ-graph covering
    every edge (equivalent to the edge constraints ``x_i + x_j <= 1``, with a tighter LP).
    With ``time_limit`` or ``node_limit`` the result may be a bound (``optimal=False``,
    ``lower = value`` of the packing found, ``upper`` from HiGHS's dual bound). Claim ``PROP2``.
    """
    adj = _as_adjacency(adj_or_embeddings, t)
    n = adj.shape[0]
    start = time.perf_counter()
    if n == 0:
        return ExactResult(0.0, np.zeros(0, np.int64), True, 0.0, 0.0, "milp", 0.0)
    cliques = _greedy_cliques(adj)
    if not cliques:  # no edges: everything packs
        return ExactResult(float(n), np.arange(n), True, float(n), float(n), "milp", time.perf_counter() - start)
    rows = np.concatenate([np.full(len(k), r) for r, k in enumerate(cliques)])
    cols = np.concatenate(cliques)
    a = sp.csr_matrix((np.ones(rows.size), (rows, cols)), shape=(len(cliques), n))
    res = _milp(-np.ones(n), a, np.full(len(cliques), -np.inf), np.ones(len(cliques)), time_limit, node_limit)
    if res.x is None:
        raise LamValueError(f"packing_number: the MILP solver returned no solution ({res.message})")
    witness = np.flatnonzero(res.x > 0.5).astype(np.int64)
    if not is_packing(adj, witness):  # pragma: no cover - solver bug guard
        raise LamValueError(f"packing_number: the MILP solution is not a packing ({res.message})")
    value = float(witness.size)
    optimal = res.status == 0
    upper = value if optimal else float(math.floor(-float(getattr(res, "mip_dual_bound", -n) or -n) + 1e-9))
    return ExactResult(value, witness, optimal, value, upper, "milp", time.perf_counter() - start)


def _check_brute(n: int) -> None:
    if n > BRUTE_FORCE_LIMIT:
        raise LamValueError(f"brute force is limited to {BRUTE_FORCE_LIMIT} points, got N = {n}")


def brute_force_covering(adj: np.ndarray) -> ExactResult:
    """``N(S, δ)`` by enumerating subsets in order of size (``N <= 16``); cross-checks the MILP."""
    adj = _as_adjacency(adj, None)
    n = adj.shape[0]
    _check_brute(n)
    start = time.perf_counter()
    for k in range(0 if n == 0 else 1, n + 1):
        for combo in itertools.combinations(range(n), k):
            if is_covering(adj, np.array(combo, dtype=np.int64)) or n == 0:
                w = np.array(combo, dtype=np.int64)
                return ExactResult(float(k), w, True, float(k), float(k), "brute", time.perf_counter() - start)
    raise AssertionError("unreachable: S itself is a covering")  # pragma: no cover


def brute_force_packing(adj: np.ndarray) -> ExactResult:
    """``M(S, δ)`` by enumerating subsets from the largest down (``N <= 16``)."""
    adj = _as_adjacency(adj, None)
    n = adj.shape[0]
    _check_brute(n)
    start = time.perf_counter()
    for k in range(n, -1, -1):
        for combo in itertools.combinations(range(n), k):
            if is_packing(adj, np.array(combo, dtype=np.int64)):
                w = np.array(combo, dtype=np.int64)
                return ExactResult(float(k), w, True, float(k), float(k), "brute", time.perf_counter() - start)
    raise AssertionError("unreachable: the empty set is a packing")  # pragma: no cover


def brute_force_weighted_covering(adj: np.ndarray, weights: Any) -> ExactResult:
    """``T(δ)`` by enumerating every subset (``N <= 16``); cross-checks :func:`token_weighted_optimum`.

    Of several minimum-weight coverings the witness is the first in increasing bitmask order
    (bit ``i`` is row ``i``)."""
    adj = _as_adjacency(adj, None)
    n = adj.shape[0]
    _check_brute(n)
    w = np.asarray(weights, dtype=np.float64)
    start = time.perf_counter()
    best, best_set = math.inf, np.zeros(0, np.int64)
    for mask in range(1 << n) if n else [0]:
        members = np.array([i for i in range(n) if mask >> i & 1], dtype=np.int64)
        if n and not is_covering(adj, members):
            continue
        val = float(w[members].sum())
        if val < best:
            best, best_set = val, members
    return ExactResult(best, best_set, True, best, best, "brute", time.perf_counter() - start)


# ---------------------------------------------------------------------------------------------
# greedy passes, ceilings and the bracket
# ---------------------------------------------------------------------------------------------
def greedy_kept(embeddings: Any, t: float) -> np.ndarray:
    """Retained ids of greedy first-occurrence (the oracle, exhaustive Algorithm 2) at threshold ``t``.

    ``t`` may be ``t' = 4t - 3 < -1`` (radius ``2δ > 2``): every unit vector is then within the
    radius of the first, and only id 0 is kept.
    """
    e = validate_embeddings(embeddings)
    if t < -1.0:
        return np.arange(min(1, e.shape[0]), dtype=np.int64)
    res = substitute(e, t, exhaustive=True)
    return np.flatnonzero(res.kept).astype(np.int64)


@dataclass(frozen=True)
class Ceiling:
    """Theorem 2 for one set: attained removal at ``t``, ceiling ``ρ_greedy(2δ)`` at ``t' = 4t-3``,
    and (when computed) the exact optimum ``ρ*(δ) = 1 - N(S,δ)/|S|``.

    ``attained_of_ceiling`` is the paper's Table 6 ratio; ``attained_of_optimum`` is ours (the
    fraction of the *exact* optimum attained; ``None`` when ``N`` was not proven or ``ρ* = 0``).
    """

    n: int
    t: float
    t_prime: float
    kept: int
    kept_2delta: int
    covering: int | None
    covering_optimal: bool

    @property
    def attained(self) -> float:
        return 0.0 if self.n == 0 else 1.0 - self.kept / self.n

    @property
    def ceiling(self) -> float:
        return 0.0 if self.n == 0 else 1.0 - self.kept_2delta / self.n

    @property
    def optimum(self) -> float | None:
        if self.covering is None or not self.covering_optimal or self.n == 0:
            return None
        return 1.0 - self.covering / self.n

    @property
    def attained_of_ceiling(self) -> float | None:
        return None if self.ceiling == 0 else self.attained / self.ceiling

    @property
    def attained_of_optimum(self) -> float | None:
        opt = self.optimum
        return None if opt is None or opt == 0 else self.attained / opt

    def to_json(self) -> dict[str, Any]:
        out = asdict(self)
        for key in ("attained", "ceiling", "optimum", "attained_of_ceiling", "attained_of_optimum"):
            out[key] = getattr(self, key)
        return out


def greedy_ceiling(
    embeddings: Any, t: float, *, exact: bool = True, time_limit: float | None = 30.0
) -> Ceiling:
    """Theorem 2's one-pass ceiling ``ρ*(δ) <= ρ_greedy(2δ)`` (with ``t' = 4t - 3``), plus the exact
    ``N(S, δ)`` by MILP when ``exact`` (claim ``THM2``)."""
    t = validate_threshold(t)
    e = validate_embeddings(embeddings)
    n = e.shape[0]
    tp = t_prime(t)
    kept = greedy_kept(e, t).size
    kept2 = greedy_kept(e, tp).size
    cov, opt = None, False
    if exact:
        res = covering_number(e, t, time_limit=time_limit)
        cov, opt = (int(res.value), res.optimal)
    return Ceiling(n, t, tp, kept, kept2, cov, opt)


@dataclass(frozen=True)
class Bracket:
    """Corollary 3 in bits: ``log2|R_greedy(2δ)| <= H_δ(S) = log2 N(S,δ) <= log2|R_greedy(δ)|``."""

    lower_bits: float
    upper_bits: float
    exact_bits: float | None
    lossless_bits: float

    @property
    def holds(self) -> bool:
        tol = 1e-12
        ok = self.lower_bits <= self.upper_bits + tol
        if self.exact_bits is not None:
            ok = ok and self.lower_bits <= self.exact_bits + tol <= self.upper_bits + 2 * tol
        return ok

    def to_json(self) -> dict[str, Any]:
        out = asdict(self)
        out["holds"] = self.holds
        return out


def bracket_bits(embeddings: Any, t: float, *, exact: bool = True, time_limit: float | None = 30.0) -> Bracket:
    """The measured bracket of Corollary 3 (claim ``COR3``), with ``H_δ(S)`` exact when ``exact``
    and the MILP proves optimality; ``lossless_bits = log2|S|``."""
    t = validate_threshold(t)
    e = validate_embeddings(embeddings)
    n = e.shape[0]
    if n == 0:
        raise LamValueError("embeddings is empty: the bracket needs |S| >= 1")
    lo = math.log2(greedy_kept(e, t_prime(t)).size)
    hi = math.log2(greedy_kept(e, t).size)
    exact_bits = None
    if exact:
        res = covering_number(e, t, time_limit=time_limit)
        if res.optimal:
            exact_bits = math.log2(res.value)
    return Bracket(lo, hi, exact_bits, math.log2(n))


def connected_components_map(embeddings: Any, t: float) -> np.ndarray:
    """The connected-components grouping (union–find over δ-graph edges; Figure 5's "DSU"): each
    row maps to the lowest id of its component. *Not* a δ-substitution in general (claim ``C4``):
    on a chain the far end is more than δ from the component's representative."""
    adj = delta_graph(embeddings, t)
    n = adj.shape[0]
    parent = np.arange(n)

    def find(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = int(parent[i])
        return i

    for i, j in zip(*np.nonzero(np.triu(adj, k=1))):
        ri, rj = find(int(i)), find(int(j))
        if ri != rj:
            parent[max(ri, rj)] = min(ri, rj)
    return np.array([find(i) for i in range(n)], dtype=np.int64)


# ---------------------------------------------------------------------------------------------
# distance to a convex hull (claim HULL)
# ---------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class HullDistance:
    """``dist(x, conv V)`` with a certificate: ``lower <= dist <= upper`` and ``upper - lower`` tiny.

    ``upper = ||x - p||`` for the hull point ``p = weightsᵀ V``; ``lower`` comes from the
    separating direction ``w = x - p``: every ``y ∈ conv V`` has ``w·(x - y) >= min_j w·(x - v_j)``.
    ``direction`` is ``w/||w||`` (the query that attains the deficit, see :func:`~lam_ref.theory.hull_deficit`),
    made exactly normal to the final face so that round-off in ``p`` cannot tilt it (``_face_normal``),
    ``None`` when ``x`` lies in the hull up to round-off (``upper <= 1e-12·√scale`` with
    ``scale = max(1, max_j ||v_j - x||²)``; then ``lower = 0``).
    """

    distance: float
    lower: float
    upper: float
    weights: np.ndarray
    point: np.ndarray
    direction: np.ndarray | None


def hull_distance(x: np.ndarray, vertices: np.ndarray, *, tol: float = 1e-12, max_iter: int = 10_000) -> HullDistance:
    """Euclidean distance from ``x`` to ``conv(vertices)`` by Wolfe's minimum-norm-point algorithm
    (an exact active-set QP solver: ``min ||x - Vᵀλ||²``, ``λ >= 0``, ``Σλ = 1``), in float64.

    Claim ``HULL``: the worst-case score deficit of a retained set ``R`` is ``max_x dist(x, conv R)``.
    """
    x64 = np.asarray(x, dtype=np.float64).reshape(-1)
    v = np.asarray(vertices, dtype=np.float64)
    if v.ndim != 2 or v.shape[0] == 0 or v.shape[1] != x64.shape[0]:
        raise LamValueError(f"vertices must be a non-empty (m, {x64.shape[0]}) array, got shape {v.shape}")
    p = v - x64  # min-norm point of conv(p_j) is p* = y* - x
    scale = max(1.0, float(np.max(np.einsum("ij,ij->i", p, p))))
    j0 = int(np.argmin(np.einsum("ij,ij->i", p, p)))
    active = [j0]
    lam = np.array([1.0])
    z = p[j0].copy()
    for _ in range(max_iter):
        scores = p @ z
        j = int(np.argmin(scores))
        if float(z @ z) - float(scores[j]) <= tol * scale or j in active:
            break
        active.append(j)
        lam = np.append(lam, 0.0)
        while True:  # minor cycle: affine minimiser of the active set, clipped back into the simplex
            ps = p[active]
            g = ps @ ps.T
            m = len(active)
            kkt = np.zeros((m + 1, m + 1))
            kkt[:m, :m] = g
            kkt[:m, m] = 1.0
            kkt[m, :m] = 1.0
            rhs = np.zeros(m + 1)
            rhs[m] = 1.0
            alpha = np.linalg.lstsq(kkt, rhs, rcond=None)[0][:m]
            if np.all(alpha > 1e-15):
                lam = alpha
                break
            neg = alpha <= 1e-15
            denom = lam[neg] - alpha[neg]
            ratio = np.where(denom > 0, lam[neg] / np.where(denom > 0, denom, 1.0), np.inf)
            theta = float(min(1.0, ratio.min()))
            lam = theta * alpha + (1.0 - theta) * lam
            keep = lam > 1e-15
            if keep.all():  # numerical safety: drop the smallest weight
                keep[int(np.argmin(lam))] = False
            active = [a for a, k in zip(active, keep) if k]
            lam = lam[keep]
            lam = lam / lam.sum()
            if len(active) == 1:
                lam = np.array([1.0])
                break
        z = lam @ p[active]
    weights = np.zeros(v.shape[0])
    weights[active] = lam
    weights /= weights.sum()
    point = weights @ v
    w = x64 - point
    upper = float(np.linalg.norm(w))
    if upper > 1e-12 * math.sqrt(scale):  # below that, x is in the hull up to round-off
        direction = _face_normal(w, v[active])
        lower = max(0.0, float(np.min((x64 - v) @ direction)))
    else:
        direction, lower = None, 0.0
    return HullDistance(upper, min(lower, upper), upper, weights, point, direction)


def _face_normal(w: np.ndarray, face: np.ndarray) -> np.ndarray:
    """The unit direction of ``w = x − point`` with its component along the face removed.

    ``point`` lies on the face spanned by the rows of ``face`` (Wolfe's active set), so the exact
    ``x − point`` is orthogonal to the face's edges. The computed ``point`` carries rounding of
    order ``ε·|v|`` in every coordinate, which depends on the BLAS kernel's summation order; when
    ``|w|`` is many orders below ``|v|`` that error tilts ``w / |w|`` along the face by
    ``ε·|v| / |w|``, and the bound ``min_j (x − v_j)·u`` loses ``|x − v_j|`` times the tilt (at
    ``|w| = 1.2e-12``, ``|v| = 0.25`` the tilt alone makes it 0). Projecting the face's edge
    directions out of ``w`` (twice: one projection leaves ``ε·|w|``) leaves a tilt of order ``ε``
    whatever the kernel, so the bound keeps its value to a relative ``O(D·ε·|x − v| / dist)``.
    Any unit vector gives a valid lower bound; this only makes it tight and stable. Should the
    projection remove more than half of ``w`` (``point`` not the foot of ``x`` on the face, which
    Wolfe's affine minimiser rules out), ``w`` itself is kept.
    """
    norm = float(np.linalg.norm(w))
    if face.shape[0] > 1:
        edges = (face[1:] - face[0]).T
        n = w
        for _ in range(2):
            n = n - edges @ np.linalg.lstsq(edges, n, rcond=None)[0]
        if float(np.linalg.norm(n)) >= 0.5 * norm:
            return n / float(np.linalg.norm(n))
    return w / norm
