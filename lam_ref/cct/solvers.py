r"""Exact solvers for small games: the protocol side of Context Compaction Theory (§4).

By Theorem 1 (claim ``CCT-THM1``) the least GEN budget is the one-way communication complexity of
the induced problem; these functions compute it *from the value table alone* — the one-way
problem — never by playing algorithms, so comparing them with exhaustive play
(:mod:`lam_ref.cct.games`) checks the theorem rather than restating it.

A deterministic one-way protocol with ``m`` messages is a partition of the inputs into at most
``m`` blocks (Alice's message) plus Bob's answer for each (block, query). Refining a partition
never hurts Bob, so only partitions into exactly ``min(m, r)`` blocks are searched.

* :func:`zero_error_budget`: least zero-error deterministic budget — distinct rows ``r`` give
  ``⌈log2(r+1)⌉ - 1`` bits for variable-length messages (``{0,1}^{<=B}``) and ``⌈log2 r⌉`` fixed-length;
  relations (several correct answers) by set cover / partition search.
* :func:`distributional_optimum`: least expected error under ``μ`` at budget ``B`` (exhaustive over
  partitions, or ``scipy.optimize.milp``); randomness does not help against a fixed ``μ``.
* :func:`worst_case_optimum`: least worst-case expected error of public-coin protocols, by LP
  (``scipy.optimize.linprog``) over mixtures of partitions with Bob's answers randomised per
  (block, query); its dual is a hardest distribution ``μ*`` (Yao's minimax).
* SELECT (Corollary 2, ``CCT-COR2``): :func:`select_distributional_optimum` (exhaustive or MILP),
  :func:`min_select_budget` (zero error: bipartite matching when rows are distinct, an ILP when
  inputs share rows) and :func:`identity_worst_case` (one query with distinct answers: a
  fractional bipartite matching LP, exact because the matching polytope is integral).

Instances beyond the limits raise :class:`~lam_ref.geometry.LamValueError` naming the limit and
the LP/ILP method to use instead.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass
from typing import Any

import numpy as np
import scipy.sparse as sp
from scipy.optimize import Bounds, LinearConstraint, linprog, milp
from scipy.sparse.csgraph import maximum_bipartite_matching

from ..geometry import LamValueError
from .games import Game, message_count, validate_bits_budget, validate_budget

__all__ = [
    "EXHAUSTIVE_LIMIT",
    "LP_PARTITION_LIMIT",
    "Distributional",
    "WorstCase",
    "ZeroErrorBudget",
    "bits_for_messages",
    "distributional_optimum",
    "identity_worst_case",
    "min_select_budget",
    "partitions",
    "select_distributional_optimum",
    "select_options",
    "stirling2",
    "worst_case_optimum",
    "zero_error_budget",
]

#: Most deterministic protocols (partitions, or selector maps) an exhaustive search visits.
EXHAUSTIVE_LIMIT = 200_000
#: Most partitions the worst-case LP carries.
LP_PARTITION_LIMIT = 2_000
_TOL = 1e-9


def _partitions_within(game: Game, r: int, k: int, limit_name: str, limit: int, advice: str) -> np.ndarray:
    """The partitions of ``r`` inputs into ``k`` blocks, or :class:`LamValueError` naming the limit
    and what to use instead when there are more than ``limit``."""
    count = stirling2(r, k)
    if count > limit:
        raise LamValueError(f"{game.name}: S({r}, {k}) = {count} partitions exceeds {limit_name} = {limit}; {advice}")
    return partitions(r, k)


def stirling2(r: int, k: int) -> int:
    """Stirling number of the second kind ``S(r, k)``: partitions of ``r`` items into ``k`` blocks."""
    return sum((-1) ** i * math.comb(k, i) * (k - i) ** r for i in range(k + 1)) // math.factorial(k)


def partitions(r: int, k: int) -> np.ndarray:
    """Every partition of ``range(r)`` into exactly ``k`` non-empty blocks, as restricted growth
    strings (block labels ``0..k-1`` in order of first appearance); shape ``(S(r, k), r)``."""
    if not 1 <= k <= max(r, 1):
        raise LamValueError(f"k must be in [1, r = {r}], got {k}")
    out: list[list[int]] = []

    def rec(prefix: list[int], used: int) -> None:
        i = len(prefix)
        if i == r:
            if used == k:
                out.append(prefix.copy())
            return
        if used + (r - i) < k:
            return
        for lab in range(min(used + 1, k)):
            prefix.append(lab)
            rec(prefix, max(used, lab + 1))
            prefix.pop()

    rec([], 0)
    return np.asarray(out, dtype=np.int64).reshape(len(out), r)


def bits_for_messages(m: int) -> tuple[int, int]:
    """``(variable, fixed)``: least ``B`` with ``2^{B+1} - 1 >= m`` (= ``⌈log2(m+1)⌉ - 1``) and with
    ``2^B >= m`` (= ``⌈log2 m⌉``)."""
    if m < 1:
        raise LamValueError(f"m must be >= 1 message, got {m}")
    return m.bit_length() - 1, (m - 1).bit_length()


def _mu(game: Game, mu: Any) -> np.ndarray:
    r, c = len(game.inputs), len(game.queries)
    if mu is None:
        return np.full((r, c), 1.0 / (r * c))
    w = np.asarray(mu, dtype=np.float64)
    if w.shape != (r, c):
        raise LamValueError(f"mu must have shape (inputs, queries) = ({r}, {c}), got {w.shape}")
    if not np.all(np.isfinite(w)) or w.min() < 0 or not math.isclose(float(w.sum()), 1.0, abs_tol=1e-9):
        raise LamValueError(f"mu must be a probability table (>= 0, sum 1), got sum {float(w.sum())!r}")
    return w


def _best_response_errors(w: np.ndarray, labels: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """For each labelling (row of ``labels``, values ``0..k-1``): the least expected error and Bob's
    best answers ``(k, c)``; ``w[i, q, a] = μ(i, q)·v(i, q, a)``."""
    errs = np.empty(labels.shape[0])
    answers = np.empty((labels.shape[0], k, w.shape[1]), dtype=np.int64)
    flat = w.reshape(w.shape[0], -1)
    for s in range(0, labels.shape[0], 2048):
        lab = labels[s : s + 2048]
        onehot = (lab[:, None, :] == np.arange(k)[None, :, None]).astype(np.float64)  # (P, k, r)
        sums = (onehot @ flat).reshape(lab.shape[0], k, w.shape[1], w.shape[2])
        errs[s : s + 2048] = -sums.max(axis=3).sum(axis=(1, 2))
        answers[s : s + 2048] = sums.argmax(axis=3)
    return 1.0 + errs, answers  # μ has mass 1: error = 1 - Σ_blocks Σ_q max_a Σ_i w


@dataclass(frozen=True)
class ZeroErrorBudget:
    """Least zero-error deterministic GEN budget: ``messages`` needed, ``variable_bits``
    (``{0,1}^{<=B}``) and ``fixed_bits`` (``{0,1}^B``); ``rows`` = distinct rows when every
    (input, query) has one correct answer, else ``None``."""

    messages: int
    variable_bits: int
    fixed_bits: int
    rows: int | None
    method: str


def _correct_sets(game: Game) -> np.ndarray:
    v = game.value_table()
    ok = v >= 1.0 - _TOL
    bad = np.argwhere(~ok.any(axis=2))
    if bad.size:
        i, j = bad[0]
        raise LamValueError(
            f"{game.name}: input {game.inputs[i]!r} with query {game.queries[j]!r} has no answer of value 1; "
            "no protocol has zero error"
        )
    return ok


def zero_error_budget(game: Game) -> ZeroErrorBudget:
    """Least budget of a zero-error deterministic GEN algorithm (claims ``CCT-THM1``, ``CCT-THM3``).

    Two inputs may share a message iff, for every query, some answer is correct for both (for all
    members of a block at once). With one correct answer per (input, query) that means equal rows.

    Raises:
        LamValueError: no zero-error protocol exists, or a relation instance is beyond the
            exhaustive limit (``EXHAUSTIVE_LIMIT`` partitions).
    """
    ok = _correct_sets(game)
    r, c, _ = ok.shape
    if np.all(ok.sum(axis=2) == 1):
        rows = np.unique(ok.argmax(axis=2), axis=0).shape[0]
        var, fixed = bits_for_messages(rows)
        return ZeroErrorBudget(rows, var, fixed, rows, "distinct rows")
    if c == 1:  # one query: a message ↦ one answer; least number of answers covering every input
        a = ok[:, 0, :].astype(np.float64)
        res = milp(
            np.ones(a.shape[1]),
            constraints=LinearConstraint(sp.csr_matrix(a), np.ones(r), np.full(r, np.inf)),
            integrality=np.ones(a.shape[1]),
            bounds=Bounds(0, 1),
            options={"disp": False, "mip_rel_gap": 0.0},
        )
        if res.status != 0:  # pragma: no cover - a covering always exists (checked above)
            raise LamValueError(f"{game.name}: set cover MILP failed ({res.message})")
        m = int(round(res.fun))
        var, fixed = bits_for_messages(m)
        return ZeroErrorBudget(m, var, fixed, None, "set cover (milp)")
    for k in range(1, r + 1):
        for lab in _partitions_within(game, r, k, "EXHAUSTIVE_LIMIT", EXHAUSTIVE_LIMIT,
                                      "bound it with distributional_optimum(..., method='milp') instead"):
            if all(np.logical_and.reduce(ok[lab == b], axis=0).any(axis=1).all() for b in range(k)):
                var, fixed = bits_for_messages(k)
                return ZeroErrorBudget(k, var, fixed, None, "partition search")
    raise AssertionError("unreachable: singletons always work")  # pragma: no cover


@dataclass(frozen=True)
class Distributional:
    """Least expected error under ``μ`` at a budget: ``error``, the witness protocol (``labels``:
    the message block of each input; ``answers[block, query]``: index into ``game.outputs``)."""

    error: float
    labels: np.ndarray
    answers: np.ndarray
    blocks: int
    method: str
    optimal: bool = True


def distributional_optimum(game: Game, mu: Any = None, budget: int = 0, *, method: str = "exhaustive") -> Distributional:
    """``R^→_{μ,·}``: the least expected error of a budget-``B`` one-way protocol under ``μ``
    (Theorem 1, Property 1; claim ``CCT-THM1``).

    Args:
        game: the game (its value table is the one-way problem).
        mu: ``(inputs, queries)`` probability table; default uniform.
        budget: message budget ``B`` in bits (``2^{B+1} - 1`` messages).
        method: ``"exhaustive"`` (partitions into ``min(m, r)`` blocks) or ``"milp"``.

    Raises:
        LamValueError: a bad argument, or more than ``EXHAUSTIVE_LIMIT`` partitions (use ``milp``).
    """
    b = validate_bits_budget(budget)
    w = _mu(game, mu)[:, :, None] * game.value_table()
    r = w.shape[0]
    k = min(message_count(b), r)
    if method == "exhaustive":
        labs = _partitions_within(game, r, k, "EXHAUSTIVE_LIMIT", EXHAUSTIVE_LIMIT, "use method='milp'")
        errs, answers = _best_response_errors(w, labs, k)
        best = int(np.argmin(errs))
        return Distributional(max(0.0, float(errs[best])), labs[best], answers[best], k, "exhaustive")
    if method == "milp":
        return _distributional_milp(game, w, k)
    raise LamValueError(f"method must be 'exhaustive' or 'milp', got {method!r}")


def _assignment_milp(w: np.ndarray, options: list[list[int]], n_labels: int, name: str) -> tuple[float, np.ndarray, np.ndarray, bool]:
    """Max Σ w[i,q,a]·[i→s]·[Bob answers a to (s,q)] over assignments of each input i to one label
    s in ``options[i]`` and Bob's answers; returns (error, labels, answers, optimal)."""
    r, c, a = w.shape
    pairs = [(i, s) for i in range(r) for s in options[i]]
    zi = {p: n for n, p in enumerate(pairs)}
    ny = n_labels * c * a
    yoff = len(pairs)

    def yid(s: int, q: int, k: int) -> int:
        return yoff + (s * c + q) * a + k

    woff = yoff + ny
    wvars = [(i, s, q, k) for (i, s) in pairs for q in range(c) for k in range(a) if w[i, q, k] > 0]
    nv = woff + len(wvars)
    cost = np.zeros(nv)
    rows, cols, vals, lo, hi = [], [], [], [], []
    nrow = 0

    def add(entries, lb, ub):
        nonlocal nrow
        for col, val in entries:
            rows.append(nrow)
            cols.append(col)
            vals.append(val)
        lo.append(lb)
        hi.append(ub)
        nrow += 1

    for i in range(r):
        add([(zi[(i, s)], 1.0) for s in options[i]], 1.0, 1.0)
    for s in range(n_labels):
        for q in range(c):
            add([(yid(s, q, k), 1.0) for k in range(a)], 1.0, 1.0)
    for n, (i, s, q, k) in enumerate(wvars):
        col = woff + n
        cost[col] = -w[i, q, k]
        add([(col, 1.0), (zi[(i, s)], -1.0)], -np.inf, 0.0)
        add([(col, 1.0), (yid(s, q, k), -1.0)], -np.inf, 0.0)
    a_mat = sp.csr_matrix((vals, (rows, cols)), shape=(nrow, nv))
    integrality = np.zeros(nv)
    integrality[:woff] = 1
    res = milp(cost, constraints=LinearConstraint(a_mat, lo, hi), integrality=integrality, bounds=Bounds(0, 1),
               options={"disp": False, "mip_rel_gap": 0.0})
    if res.x is None:
        raise LamValueError(f"{name}: the MILP solver returned no solution ({res.message})")
    x = res.x
    labels = np.array([max(options[i], key=lambda s: x[zi[(i, s)]]) for i in range(r)], dtype=np.int64)
    answers = np.array([[max(range(a), key=lambda k: x[yid(s, q, k)]) for q in range(c)] for s in range(n_labels)],
                       dtype=np.int64).reshape(n_labels, c)
    got = sum(w[i, q, answers[labels[i], q]] for i in range(r) for q in range(c))
    return max(0.0, 1.0 - float(got)), labels, answers, res.status == 0


def _distributional_milp(game: Game, w: np.ndarray, k: int) -> Distributional:
    r = w.shape[0]
    options = [list(range(min(i, k - 1) + 1)) for i in range(r)]  # input i uses a block <= i
    err, labels, answers, optimal = _assignment_milp(w, options, k, game.name)
    return Distributional(err, labels, answers, k, "milp", optimal)


@dataclass(frozen=True)
class WorstCase:
    """Least worst-case expected error of public-coin protocols at a budget (LP), with the dual
    distribution ``mu`` (a hardest ``μ``: its distributional optimum equals ``error``)."""

    error: float
    mu: np.ndarray
    partitions: int
    method: str = "linprog"


def worst_case_optimum(game: Game, budget: int = 0) -> WorstCase:
    """``R^→_ε``'s error at budget ``B``: min ε over public-coin protocols (Theorem 1, Property 2).

    LP variables: a weight ``λ_P`` per partition ``P`` into ``min(m, r)`` blocks and, per
    (``P``, block, query), Bob's answer distribution ``w_{P,b,q,·}`` summing to ``λ_P`` (the error
    on an input depends only on these marginals, so this is exact). ``ε`` bounds every input's
    expected error. Raises :class:`LamValueError` beyond ``LP_PARTITION_LIMIT`` partitions.
    """
    b = validate_bits_budget(budget)
    v = game.value_table()
    r, c, a = v.shape
    k = min(message_count(b), r)
    labs = _partitions_within(game, r, k, "LP_PARTITION_LIMIT", LP_PARTITION_LIMIT,
                              "use distributional_optimum(..., method='milp') at a hard mu for a lower bound instead")
    n_p = labs.shape[0]
    n_w = n_p * k * c * a
    nv = 1 + n_p + n_w

    def wid(p: int, blk: int, q: int, ans: int) -> int:
        return 1 + n_p + ((p * k + blk) * c + q) * a + ans

    eq_r, eq_c, eq_v, eq_b = [], [], [], []
    row = 0
    for p in range(n_p):
        eq_r.append(row)
        eq_c.append(1 + p)
        eq_v.append(1.0)
    eq_b.append(1.0)
    row += 1
    for p in range(n_p):
        for blk in range(k):
            for q in range(c):
                for ans in range(a):
                    eq_r.append(row)
                    eq_c.append(wid(p, blk, q, ans))
                    eq_v.append(1.0)
                eq_r.append(row)
                eq_c.append(1 + p)
                eq_v.append(-1.0)
                eq_b.append(0.0)
                row += 1
    ub_r, ub_c, ub_v = [], [], []
    for i in range(r):
        for q in range(c):
            rid = i * c + q
            for p in range(n_p):
                for ans in range(a):
                    loss = 1.0 - v[i, q, ans]
                    if loss > 0:
                        ub_r.append(rid)
                        ub_c.append(wid(p, int(labs[p, i]), q, ans))
                        ub_v.append(loss)
            ub_r.append(rid)
            ub_c.append(0)
            ub_v.append(-1.0)
    cost = np.zeros(nv)
    cost[0] = 1.0
    res = linprog(
        cost,
        A_ub=sp.csr_matrix((ub_v, (ub_r, ub_c)), shape=(r * c, nv)),
        b_ub=np.zeros(r * c),
        A_eq=sp.csr_matrix((eq_v, (eq_r, eq_c)), shape=(row, nv)),
        b_eq=np.asarray(eq_b),
        bounds=[(0, None)] * nv,
        method="highs",
    )
    if res.status != 0:  # pragma: no cover - the LP is always feasible and bounded
        raise LamValueError(f"{game.name}: worst-case LP failed ({res.message})")
    mu = np.clip(-np.asarray(res.ineqlin.marginals), 0.0, None).reshape(r, c)
    mu = mu / mu.sum() if mu.sum() > 0 else np.full((r, c), 1.0 / (r * c))
    return WorstCase(max(0.0, float(res.fun)), mu, n_p)


# ---------------------------------------------------------------------------------------------
# SELECT (Corollary 2)
# ---------------------------------------------------------------------------------------------
def select_options(game: Game, budget: float) -> tuple[list[list[int]], list[tuple]]:
    """Every retained multiset a selector may produce within ``budget``: ``(options, retained)``
    where ``retained`` lists the distinct sorted value tuples and ``options[i]`` the indices of
    those affordable on input ``i`` (sub-multisets of ``X_i``). Inputs of more than 16 items are refused."""
    bud = validate_budget(budget)
    index: dict[tuple, int] = {}
    retained: list[tuple] = []
    options: list[list[int]] = []
    for x in game.inputs:
        if len(x) > 16:
            raise LamValueError(f"{game.name}: an input of {len(x)} items exceeds the 16 the SELECT enumeration allows")
        opts: set[int] = set()
        for size in range(len(x) + 1):
            for pos in itertools.combinations(range(len(x)), size):
                vals = tuple(sorted((x[p] for p in pos), key=repr))
                if game.cost(vals) <= bud + 1e-9:
                    if vals not in index:
                        index[vals] = len(retained)
                        retained.append(vals)
                    opts.add(index[vals])
        options.append(sorted(opts))
    return options, retained


def select_distributional_optimum(game: Game, mu: Any = None, budget: float = 0.0, *,
                                  method: str = "exhaustive") -> Distributional:
    """Least expected error under ``μ`` of a deterministic SELECT algorithm within ``budget``
    (Corollary 2: a protocol whose message is the retained multiset and whose answer depends on
    it alone; claim ``CCT-COR2``). ``labels[i]`` indexes :func:`select_options`' retained list.

    ``method="exhaustive"`` visits every selector map (at most ``EXHAUSTIVE_LIMIT``) with Bob's best
    answers; ``"milp"`` solves the same assignment problem with ``scipy.optimize.milp``.
    """
    w = _mu(game, mu)[:, :, None] * game.value_table()
    options, retained = select_options(game, budget)
    if method == "exhaustive":
        count = math.prod(len(o) for o in options)
        if count > EXHAUSTIVE_LIMIT:
            raise LamValueError(
                f"{game.name}: {count} selector maps exceed EXHAUSTIVE_LIMIT = {EXHAUSTIVE_LIMIT}; use method='milp'"
            )
        labs = np.array(list(itertools.product(*options)), dtype=np.int64).reshape(count, len(options))
        errs, answers = _best_response_errors(w, labs, len(retained))
        best = int(np.argmin(errs))
        return Distributional(max(0.0, float(errs[best])), labs[best], answers[best], len(retained), "exhaustive")
    if method == "milp":
        err, labels, answers, optimal = _assignment_milp(w, options, len(retained), game.name)
        return Distributional(err, labels, answers, len(retained), "milp", optimal)
    raise LamValueError(f"method must be 'exhaustive' or 'milp', got {method!r}")


def _row_classes(game: Game) -> np.ndarray:
    ok = _correct_sets(game)
    if not np.all(ok.sum(axis=2) == 1):
        raise LamValueError(f"{game.name}: min_select_budget needs one correct answer per (input, query)")
    _, cls = np.unique(ok.argmax(axis=2), axis=0, return_inverse=True)
    return np.asarray(cls).reshape(-1)


def _select_feasible(game: Game, budget: float, cls: np.ndarray) -> tuple[bool, str]:
    options, retained = select_options(game, budget)
    r = len(options)
    if any(not o for o in options):
        return False, "matching"
    if np.unique(cls).size == r:  # distinct rows: each retained multiset serves one input
        rows = [i for i in range(r) for _ in options[i]]
        cols = [s for i in range(r) for s in options[i]]
        g = sp.csr_matrix((np.ones(len(rows)), (rows, cols)), shape=(r, len(retained)))
        match = maximum_bipartite_matching(g, perm_type="column")
        return bool(np.all(match >= 0)), "bipartite matching"
    # inputs of one class may share a retained multiset; a multiset is owned by at most one class
    pairs = [(i, s) for i in range(r) for s in options[i]]
    owners = sorted({(int(cls[i]), s) for i, s in pairs})
    zid = {p: n for n, p in enumerate(pairs)}
    uid = {p: len(pairs) + n for n, p in enumerate(owners)}
    nv = len(pairs) + len(owners)
    rws, cl, vl, lo, hi = [], [], [], [], []
    n = 0
    for i in range(r):
        for s in options[i]:
            rws.append(n)
            cl.append(zid[(i, s)])
            vl.append(1.0)
        lo.append(1.0)
        hi.append(1.0)
        n += 1
    for i, s in pairs:
        rws += [n, n]
        cl += [zid[(i, s)], uid[(int(cls[i]), s)]]
        vl += [1.0, -1.0]
        lo.append(-np.inf)
        hi.append(0.0)
        n += 1
    by_s: dict[int, list[int]] = {}
    for (_cls, s), col in uid.items():
        by_s.setdefault(s, []).append(col)
    for cols in by_s.values():
        if len(cols) > 1:
            for col in cols:
                rws.append(n)
                cl.append(col)
                vl.append(1.0)
            lo.append(-np.inf)
            hi.append(1.0)
            n += 1
    res = milp(np.zeros(nv), constraints=LinearConstraint(sp.csr_matrix((vl, (rws, cl)), shape=(n, nv)), lo, hi),
               integrality=np.ones(nv), bounds=Bounds(0, 1), options={"disp": False})
    return res.status == 0, "ilp"


@dataclass(frozen=True)
class MinSelect:
    """Least zero-error SELECT budget (``budget``) among the achievable retained sizes, and how it
    was decided (``bipartite matching`` when every input has its own row, else ``ilp``)."""

    budget: float
    method: str


def min_select_budget(game: Game) -> MinSelect:
    """Least budget of a zero-error deterministic SELECT algorithm (claims ``CCT-THM3``,
    ``CCT-COUNT``, ``CCT-KRAFT``): the least retained size at which every input can be given a
    retained sub-multiset such that inputs with different rows never share one.

    Randomised SELECT needs the same budget at zero error (zero error on every coin outcome).
    """
    cls = _row_classes(game)
    costs = sorted({round(game.cost(tuple(x[p] for p in pos)), 9)
                    for x in game.inputs for k in range(len(x) + 1) for pos in itertools.combinations(range(len(x)), k)})
    lo, hi = 0, len(costs) - 1
    method = "bipartite matching"
    ok, method = _select_feasible(game, costs[hi], cls)
    if not ok:  # pragma: no cover - keeping everything always works
        raise AssertionError("keeping every item must have zero error")
    while lo < hi:
        mid = (lo + hi) // 2
        ok, method = _select_feasible(game, costs[mid], cls)
        if ok:
            hi = mid
        else:
            lo = mid + 1
    return MinSelect(float(costs[lo]), method)


__all__ += ["MinSelect"]


def identity_worst_case(game: Game, budget: float, kind: str) -> WorstCase:
    """Least worst-case error of randomized ``kind`` (``"gen"`` or ``"select"``) algorithms on a
    one-query game whose inputs all have different correct answers (e.g. Theorem 3's "output X").

    A deterministic algorithm is correct exactly on the inputs it matches to distinct messages
    (GEN: any of the ``2^{B+1} - 1`` messages; SELECT: affordable retained sub-multisets of the
    input); randomized ones are points of the bipartite matching polytope, which is integral, so
    the LP ``max t : Σ_s y_{i,s} >= t, Σ_i y_{i,s} <= 1`` is exact (claim ``CCT-THM3``).

    Returns:
        :class:`WorstCase` with ``error = 1 - t`` and ``mu`` the LP dual on the inputs (shape
        ``(inputs, 1)``), a hardest input distribution.

    Raises:
        LamValueError: more than one query, two inputs with the same correct answer, or an
            unknown ``kind``.
    """
    if len(game.queries) != 1:
        raise LamValueError(f"{game.name}: identity_worst_case needs exactly one query, got {len(game.queries)}")
    cls = _row_classes(game)
    r = len(game.inputs)
    if np.unique(cls).size != r:
        raise LamValueError(f"{game.name}: identity_worst_case needs a different correct answer for every input")
    if kind == "gen":
        m = message_count(validate_bits_budget(budget))
        options = [list(range(min(m, r)))] * r  # more messages than inputs never help
        n_s = min(m, r)
    elif kind == "select":
        options, retained = select_options(game, budget)
        n_s = len(retained)
    else:
        raise LamValueError(f"kind must be 'gen' or 'select', got {kind!r}")
    pairs = [(i, s) for i in range(r) for s in options[i]]
    nv = 1 + len(pairs)
    rws, cl, vl = [], [], []
    for n, (i, s) in enumerate(pairs):
        rws.append(i)
        cl.append(1 + n)
        vl.append(-1.0)
        rws.append(r + s)
        cl.append(1 + n)
        vl.append(1.0)
    for i in range(r):
        rws.append(i)
        cl.append(0)
        vl.append(1.0)
    a_ub = sp.csr_matrix((vl, (rws, cl)), shape=(r + n_s, nv))
    b_ub = np.concatenate([np.zeros(r), np.ones(n_s)])
    cost = np.zeros(nv)
    cost[0] = -1.0
    res = linprog(cost, A_ub=a_ub, b_ub=b_ub, bounds=[(0, 1)] * nv, method="highs")
    if res.status != 0:  # pragma: no cover
        raise LamValueError(f"{game.name}: matching LP failed ({res.message})")
    dual = np.clip(-np.asarray(res.ineqlin.marginals[:r]), 0.0, None)
    mu = dual / dual.sum() if dual.sum() > 0 else np.full(r, 1.0 / r)
    return WorstCase(max(0.0, 1.0 + float(res.fun)), mu.reshape(r, 1), 0, "matching LP")
