"""Unit tests of :mod:`lam_ref.covering`: exact N and M (MILP) against brute force and hand
counts, T(δ), greedy passes, the bracket, components, and the hull-distance QP."""

from __future__ import annotations

import json
import math
import time

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from lam_ref.covering import (
    BRUTE_FORCE_LIMIT,
    Bracket,
    Ceiling,
    all_pairs_sq,
    bracket_bits,
    brute_force_covering,
    brute_force_packing,
    brute_force_weighted_covering,
    connected_components_map,
    covering_number,
    delta_graph,
    greedy_ceiling,
    greedy_kept,
    hull_distance,
    is_covering,
    is_packing,
    packing_number,
    t_half,
    token_weighted_optimum,
)
from lam_ref.geometry import LamValueError
from lam_ref.strategies import embeddings_and_threshold


def circle(degrees) -> np.ndarray:
    ang = np.radians(np.asarray(degrees, dtype=float))
    return np.stack([np.cos(ang), np.sin(ang)], axis=1).astype(np.float32)


# ------------------------------------------------------------------------------------------------
# Exact covering and packing numbers (paper App. C.3, SPEC §11): the MILP equals brute force, counts by hand,
# empty and edgeless sets, the brute-force limit and its results
# ------------------------------------------------------------------------------------------------


@pytest.mark.claim("PROP2")
@given(embeddings_and_threshold(min_n=1, max_n=10, spread=2.0))
def test_milp_matches_brute_force(data):
    """N, M and T(δ) by MILP equal exhaustive enumeration on <= 10 points, and every witness is
    a covering / packing. Shown to fail on an adjacency without its diagonal (tried by hand:
    isolated rows are then uncoverable and the MILP reports infeasible)."""
    e, t = data
    adj = delta_graph(e, t)
    for exact, brute in ((covering_number(adj), brute_force_covering(adj)), (packing_number(adj), brute_force_packing(adj))):
        assert exact.optimal and exact.value == brute.value, f"{exact.method} {exact.value} != brute {brute.value}"
    assert is_covering(adj, covering_number(adj).witness), "covering witness"
    assert is_packing(adj, packing_number(adj).witness), "packing witness"
    w = np.arange(1, e.shape[0] + 1, dtype=float)[::-1] ** 1.5
    tw, tb = token_weighted_optimum(adj, weights=w), brute_force_weighted_covering(adj, w)
    assert abs(tw.value - tb.value) < 1e-9 and is_covering(adj, tw.witness), f"T milp {tw.value} != brute {tb.value}"


@pytest.mark.parametrize(
    "degrees, t, n_cov, m_pack",
    [
        ([0, 90, 180, 270], 0.0, 2, 2),  # square at t = 0 (δ = √2): neighbours merge, opposite do not
        ([0, 90, 180, 270], 0.5, 4, 4),  # δ = 1 < √2: nothing merges
        ([0, 10, 20, 30, 40], float(np.cos(np.radians(15))), 2, 3),  # path of 10° steps, δ = chord 15°: {10°, 30°} cover, {0°, 20°, 40°} pack
        ([0, 1, 2], 0.9, 1, 1),  # one tight cluster
    ],
)
def test_exact_numbers_by_hand(degrees, t, n_cov, m_pack):
    """Covering/packing numbers counted by hand on points of the unit circle."""
    e = circle(degrees)
    assert covering_number(e, t).value == n_cov, f"N for {degrees} at t={t}"
    assert packing_number(e, t).value == m_pack, f"M for {degrees} at t={t}"


def test_empty_and_single():
    """Empty set: N = M = 0; one row: N = M = 1 (by definition)."""
    empty = np.zeros((0, 3), np.float32)
    assert covering_number(empty, 0.9).value == 0 and packing_number(empty, 0.9).value == 0, "empty"
    one = np.array([[1.0, 0, 0]], np.float32)
    assert covering_number(one, 0.9).value == 1 and packing_number(one, 0.9).value == 1, "single"
    assert all_pairs_sq(one).tolist() == [[0.0]], "self distance"


def test_empty_and_edgeless_sets():
    """Empty set: every optimum is 0 with an empty witness, optimal. A set with no edges: the
    packing is everything (``M = N = |S|``)."""
    empty_adj = np.zeros((0, 0), dtype=bool)
    for res in (
        covering_number(empty_adj),
        packing_number(empty_adj),
        token_weighted_optimum(empty_adj, weights=[]),
        brute_force_covering(empty_adj),
        brute_force_packing(empty_adj),
        brute_force_weighted_covering(empty_adj, []),
    ):
        assert (res.value, res.witness.size, res.optimal, res.lower, res.upper) == (0.0, 0, True, 0.0, 0.0), f"{res}"
    eye = np.eye(3, dtype=bool)
    pk = packing_number(eye)
    assert pk.value == 3.0 and pk.witness.tolist() == [0, 1, 2] and pk.optimal, f"no edges: {pk}"
    assert (pk.lower, pk.upper, pk.method) == (3.0, 3.0, "milp"), f"no edges: bounds {pk}"
    assert covering_number(eye).value == 3.0, "no edges: every row covers only itself"


def test_is_covering_and_is_packing_edge_cases():
    """The empty set is covered by the empty set; a non-empty set never is; a single member
    always packs; two adjacent members do not."""
    assert is_covering(np.zeros((0, 0), dtype=bool), np.zeros(0, np.int64)), "the empty set is covered by nothing"
    adj = np.array([[True, True], [True, True]])
    assert not is_covering(adj, np.zeros(0, np.int64)), "a non-empty set needs at least one member"
    assert is_covering(adj, [1]), "one member adjacent to all covers"
    assert is_packing(adj, [0]) and not is_packing(adj, [0, 1]), "adjacent members do not pack"
    assert is_packing(np.eye(3, dtype=bool), [0, 1, 2]), "no edges: everything packs"


def test_brute_force_limit_is_inclusive():
    """Brute force runs on exactly ``BRUTE_FORCE_LIMIT`` points and refuses one more, naming N."""
    full = np.ones((BRUTE_FORCE_LIMIT, BRUTE_FORCE_LIMIT), dtype=bool)
    assert brute_force_covering(full).value == 1.0, "16 points: one row covers a complete graph"
    with pytest.raises(LamValueError, match=rf"^brute force is limited to {BRUTE_FORCE_LIMIT} points, got N = 17$"):
        brute_force_packing(np.ones((17, 17), dtype=bool))


def test_brute_force_results_and_the_first_bad_weight():
    """Brute-force results say ``method = "brute"`` with a wall time between 0 and the call's;
    the refusal of bad weights names the first bad one, after valid zero and fractional weights."""
    adj = np.array([[True, True, False], [True, True, True], [False, True, True]])
    for solve in (brute_force_covering, brute_force_packing, lambda a: brute_force_weighted_covering(a, [1.0, 3.0, 1.0])):
        t0 = time.perf_counter()
        res = solve(adj)
        took = time.perf_counter() - t0
        assert res.method == "brute" and 0.0 <= res.wall_time_s <= took, f"{res.method}, {res.wall_time_s} vs {took}"
        assert res.optimal and res.lower == res.value == res.upper, f"{res}"
    assert brute_force_weighted_covering(adj, [1.0, 3.0, 1.0]).value == 2.0, "the two light ends beat the heavy middle"
    with pytest.raises(LamValueError, match=r"^weights\[2\] must be finite and >= 0, got -1\.0$"):
        token_weighted_optimum(adj, weights=[0.0, 0.5, -1.0])


def test_empty_results_and_witness_dtypes():
    """The empty set's results are MILP (or brute-force) results with zero wall time and int64
    witnesses; the edgeless shortcut of the packing reports the time it took; the empty set
    packs; the brute-force witnesses are int64 (also for the empty set)."""
    empty = np.zeros((0, 0), dtype=bool)
    for res in (covering_number(empty), packing_number(empty), token_weighted_optimum(empty, weights=[])):
        assert (res.method, res.wall_time_s) == ("milp", 0.0), f"empty set: {res}"
        assert res.witness.dtype == np.int64, f"empty witness dtype {res.witness.dtype}"
    for res in (brute_force_covering(empty), brute_force_packing(empty), brute_force_weighted_covering(empty, [])):
        assert res.witness.dtype == np.int64 and res.method == "brute", f"brute force on the empty set: {res}"
    t0 = time.perf_counter()
    pk = packing_number(np.eye(4, dtype=bool))
    took = time.perf_counter() - t0
    assert 0.0 <= pk.wall_time_s <= took, f"edgeless packing wall time {pk.wall_time_s} not in [0, {took}]"
    adj = np.ones((3, 3), dtype=bool)
    assert is_packing(adj, []) and is_packing(adj, np.zeros(0, np.int64)), "the empty set is a packing"
    with pytest.raises(LamValueError, match=r"^adj must be a square boolean matrix when t is None, got bool \(2, 3\)$"):
        packing_number(np.zeros((2, 3), dtype=bool))


def test_exact_results_carry_tight_bounds_and_a_plausible_time():
    """A proven optimum has ``lower == value == upper``; the JSON form is serialisable with the
    witness as a list; ``wall_time_s`` lies between 0 and the time the call took."""
    e = np.array([[1.0, 0.0], [0.0, 1.0], [-1.0, 0.0], [0.0, -1.0]], dtype=np.float32)  # square
    for solve in (covering_number, packing_number):
        t0 = time.perf_counter()
        res = solve(e, 0.0)
        took = time.perf_counter() - t0
        assert res.optimal and res.lower == res.value == res.upper == 2.0, f"{solve.__name__}: {res}"
        assert res.method == "milp", f"{solve.__name__} is solved by MILP"
        assert 0.0 <= res.wall_time_s <= took, f"{solve.__name__}: wall time {res.wall_time_s} not in [0, {took}]"
        j = json.loads(json.dumps(res.to_json()))
        assert j["witness"] == res.witness.tolist() and j["value"] == 2.0, f"JSON form: {j}"
    tw = token_weighted_optimum(e, 0.0, weights=[1, 1, 1, 1])
    assert tw.optimal and tw.lower == tw.value == tw.upper == 2.0, f"T(δ) with unit weights is N: {tw}"


# ------------------------------------------------------------------------------------------------
# The solver (HiGHS): time and node limits give certified bounds; silent; only options scipy knows
# ------------------------------------------------------------------------------------------------


def test_time_limit_reaches_the_solver():
    """``time_limit`` is passed to HiGHS: with a limit of 0 s the solver stops before any
    solution and the refusal says so (instead of solving without a limit)."""
    rng = np.random.default_rng(0)
    e = rng.standard_normal((60, 3))
    e = (e / np.linalg.norm(e, axis=1, keepdims=True)).astype(np.float32)
    with pytest.raises(LamValueError, match=r"^covering_number: the MILP solver returned no solution \(Time limit reached"):
        greedy_ceiling(e, 0.5, time_limit=0.0)
    with pytest.raises(LamValueError, match="returned no solution"):
        bracket_bits(e, 0.5, time_limit=0.0)
    with pytest.raises(LamValueError, match=r"^packing_number: the MILP solver returned no solution"):
        packing_number(e, 0.5, time_limit=0.0)
    with pytest.raises(LamValueError, match=r"^token_weighted_optimum: the MILP solver returned no solution"):
        token_weighted_optimum(e, 0.5, weights=np.ones(60), time_limit=0.0)


def _unit_rows(n: int, dim: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    e = rng.standard_normal((n, dim))
    return (e / np.linalg.norm(e, axis=1, keepdims=True)).astype(np.float32)


def _lp_bound(c: np.ndarray, a_ub: np.ndarray, b_ub: np.ndarray) -> float:
    """``min cᵀx`` over ``A x <= b``, ``0 <= x <= 1`` (the LP relaxation, by HiGHS's simplex)."""
    from scipy.optimize import linprog

    res = linprog(c, A_ub=a_ub, b_ub=b_ub, bounds=(0, 1), method="highs")
    assert res.status == 0, f"LP relaxation not solved: {res.message}"
    return float(res.fun)


def test_node_limit_gives_a_certified_covering_bound():
    """With a node limit of 1 HiGHS stops at the root with a covering but no proof (an instance
    found by search: 60 unit rows in 6-D at t = 0.4). The result is a bound, not an optimum:
    ``optimal`` is False, ``value = upper`` is the size of the returned witness (a covering,
    checked here with numpy), and ``lower`` lies between the LP relaxation's bound (valid for
    any covering, computed here with ``linprog``) and the value. ``N(S, δ)`` is integral, so the
    covering number's ``lower`` is an integer; the token optimum's is the raw dual bound."""
    e = _unit_rows(60, 6, 4)
    adj = delta_graph(e, 0.4)
    lp = _lp_bound(np.ones(60), -adj.astype(np.float64), -np.ones(60))
    res = covering_number(e, 0.4, node_limit=1)
    assert not res.optimal and res.method == "milp", f"node limit 1 must leave the optimum unproven: {res}"
    assert bool(adj[:, res.witness].any(axis=1).all()), "the witness of a bounded result is still a covering"
    assert res.value == res.upper == float(res.witness.size), f"value and upper are the witness size: {res}"
    assert math.ceil(lp - 1e-9) <= res.lower < res.upper, f"lower {res.lower} not in [ceil(LP {lp}), upper)"
    assert res.lower == float(int(res.lower)), f"N is integral: lower {res.lower} is rounded up"
    tw = token_weighted_optimum(e, 0.4, weights=np.ones(60), node_limit=1)
    assert not tw.optimal and tw.value == tw.upper == float(tw.witness.size), f"token optimum bound: {tw}"
    assert lp - 1e-9 <= tw.lower < tw.upper, f"raw dual bound {tw.lower} vs LP {lp}"
    assert math.ceil(tw.lower - 1e-9) == res.lower, f"N rounds the same dual bound up: {tw.lower} vs {res.lower}"
    with pytest.raises(LamValueError, match=r"^node_limit must be a non-negative integer, got -1$"):
        covering_number(e, 0.4, node_limit=-1)


def test_node_limit_gives_a_certified_packing_bound():
    """Packing under a node limit of 1 (80 unit rows in 6-D at t = 0.5, found by search): a
    packing is returned (``lower = value``), ``upper`` is HiGHS's dual bound rounded down, above
    the value and below the edge LP relaxation's bound. Adding an isolated vertex (it joins
    every packing and every bound, being in no clique) raises value and upper by exactly one:
    a variable outside every clique constraint is bounded by ``x <= 1`` alone."""
    e = _unit_rows(80, 6, 3)
    adj = delta_graph(e, 0.5)
    edges = np.argwhere(np.triu(adj, k=1))
    a_ub = np.zeros((len(edges), 80))
    a_ub[np.arange(len(edges)), edges[:, 0]] = 1.0
    a_ub[np.arange(len(edges)), edges[:, 1]] = 1.0
    lp = -_lp_bound(-np.ones(80), a_ub, np.ones(len(edges)))
    res = packing_number(adj, node_limit=1)
    assert not res.optimal and res.method == "milp", f"node limit 1 must leave the optimum unproven: {res}"
    assert is_packing(adj, res.witness) and res.value == res.lower == float(res.witness.size), f"{res}"
    assert res.value < res.upper <= math.floor(lp + 1e-9), f"upper {res.upper} not in (value, floor(LP {lp})]"
    big = np.zeros((81, 81), dtype=bool)
    big[:80, :80] = adj
    big[80, 80] = True
    iso = packing_number(big, node_limit=1)
    assert not iso.optimal and 80 in iso.witness.tolist(), f"the isolated vertex joins the packing: {iso}"
    assert (iso.value, iso.upper) == (res.value + 1, res.upper + 1), f"isolated vertex: {iso} vs {res}"


def test_solver_is_silent_and_takes_only_known_options(capfd):
    """HiGHS runs without a log on stdout and with options scipy knows (an unknown option name
    would raise a RuntimeWarning, an error here)."""
    import warnings

    e = np.array([[1.0, 0.0], [0.0, 1.0], [-1.0, 0.0], [0.0, -1.0]], dtype=np.float32)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert covering_number(e, 0.0, time_limit=5.0, node_limit=100).value == 2.0, "square at t = 0: N = 2"
        assert packing_number(e, 0.0).value == 2.0, "square at t = 0: M = 2"
    out = capfd.readouterr()
    assert out.out == "" and out.err == "", f"the solver printed: {out.out[:200]!r} {out.err[:200]!r}"


# ------------------------------------------------------------------------------------------------
# The token optimum T(δ) (Corollary 3) and its weights
# ------------------------------------------------------------------------------------------------


def test_token_optimum_prefers_light_rows():
    """Three rows in a 10°-step chain at δ = chord 15°: the middle row covers all (N = 1), but
    if it weighs 100 and the ends 1 each, T(δ) = 2 with the two ends (by hand)."""
    e = circle([0, 10, 20])
    t = float(np.cos(np.radians(15)))
    assert covering_number(e, t).value == 1, "middle row covers the chain"
    res = token_weighted_optimum(e, t, weights=[1, 100, 1])
    assert res.value == 2 and res.witness.tolist() == [0, 2], f"T = {res.value} with {res.witness.tolist()}"


def test_token_weights_zero_is_valid_and_bad_weights_are_named():
    """Weights are finite and ``>= 0`` (a weight of 0 is allowed); a bad one is named by index
    and value."""
    adj = np.ones((3, 3), dtype=bool)
    res = token_weighted_optimum(adj, weights=[5.0, 0.0, 2.0])
    assert res.value == 0.0 and res.witness.tolist() == [1], f"the zero-weight row covers all: {res}"
    with pytest.raises(LamValueError, match=r"^weights\[1\] must be finite and >= 0, got -1\.0$"):
        token_weighted_optimum(adj, weights=[1.0, -1.0, 1.0])
    with pytest.raises(LamValueError, match=r"^weights\[2\] must be finite and >= 0, got inf$"):
        token_weighted_optimum(adj, weights=[1.0, 1.0, np.inf])
    with pytest.raises(LamValueError, match=r"^weights must have shape \(3,\), got \(2,\)$"):
        token_weighted_optimum(adj, weights=[1.0, 1.0])


def test_optimal_token_bound_is_the_witness_weight():
    """At a proven optimum ``lower == value == upper == Σ w[witness]`` exactly (20 unit rows in
    3-D at t = 0.5 with random weights: an instance on which HiGHS's dual bound differs from the
    witness weight in the last bit, so the bound must come from the witness)."""
    rng = np.random.default_rng(1)
    e = rng.standard_normal((20, 3))
    e = (e / np.linalg.norm(e, axis=1, keepdims=True)).astype(np.float32)
    w = rng.uniform(0.1, 3.0, 20)
    res = token_weighted_optimum(e, 0.5, weights=w)
    assert res.optimal and res.lower == res.value == res.upper == float(w[res.witness].sum()), f"{res}"
    assert res.method == "milp" and res.witness.dtype == np.int64, f"method and witness dtype: {res}"


def test_brute_force_weighted_witness_is_the_first_minimum():
    """Ties between minimum-weight coverings go to the first subset in bitmask order: on the
    path 0-1-2 with weights 1, 2, 1 both ``{1}`` (mask 0b010) and ``{0, 2}`` (mask 0b101) weigh 2."""
    adj = np.array([[True, True, False], [True, True, True], [False, True, True]])
    res = brute_force_weighted_covering(adj, [1.0, 2.0, 1.0])
    assert res.value == 2.0 and res.witness.tolist() == [1], f"first minimum in bitmask order: {res.witness}"


def test_weights_are_summed_in_float64_and_witnesses_are_int64():
    """Token weights given in float32 are summed in float64 (three rows without edges: every row
    is kept and the value is the float64 sum of the float32 weights), by the MILP and by brute
    force; the packing witness is int64."""
    w = np.array([0.1, 0.2, 0.3], dtype=np.float32)
    expected = float(np.float64(w[0]) + np.float64(w[1]) + np.float64(w[2]))
    assert expected != float(w.sum()), "the instance separates float32 from float64 sums"
    eye = np.eye(3, dtype=bool)
    for res in (token_weighted_optimum(eye, weights=w), brute_force_weighted_covering(eye, w)):
        assert res.value == expected, f"{res.method}: value {res.value!r} is not the float64 sum {expected!r}"
    square = np.array([[1.0, 0.0], [0.0, 1.0], [-1.0, 0.0], [0.0, -1.0]], dtype=np.float32)
    assert packing_number(square, 0.0).witness.dtype == np.int64, "packing witness dtype"


# ------------------------------------------------------------------------------------------------
# The greedy ceiling and the bracket (Theorem 2, Corollary 3): radius 2δ, t' = 4t - 3, degenerate sets, the bracket's tolerance
# ------------------------------------------------------------------------------------------------


def test_greedy_passes_and_radius_above_two():
    """``t' < -1`` (t < 1/2) keeps exactly the first row; at t' >= -1 greedy_kept is the oracle."""
    e = circle([0, 90, 180, 270])
    assert greedy_kept(e, -2.0).tolist() == [0], "radius > 2 merges everything into row 0"
    assert greedy_kept(e, 0.0).tolist() == [0, 2], "square at δ = √2 keeps 0° and 180°"
    assert greedy_kept(np.zeros((0, 2), np.float32), -2.0).size == 0, "empty set keeps nothing"
    assert delta_graph(e, -2.0).all(), "every pair is within a radius above 2"


def _antipodal(norm: float) -> np.ndarray:
    """Two opposite rows of the given norm (within the unit-norm tolerance)."""
    return np.array([[norm, 0.0], [-norm, 0.0]], dtype=np.float64)


def test_radius_two_is_the_exact_rule_and_thresholds_above_one_are_refused():
    """At ``t = -1`` the radius is exactly 2 (``δ² = 4``), not unbounded: antipodal rows of norm
    ``1 + 5e-5`` (accepted as unit) lie at ``sq ≈ 4.0004 > 4`` and are neither adjacent nor merged.
    Only below ``t = -1`` (radius ``2δ > 2``) is every pair adjacent. ``t`` above 1 or NaN is
    refused, naming ``t`` and the value."""
    e = _antipodal(1.0 + 5e-5)
    assert not delta_graph(e, -1.0)[0, 1], "sq > 4 = δ² at t = -1: not adjacent"
    assert delta_graph(e, -1.0001)[0, 1], "t < -1: radius above 2, every pair adjacent"
    assert greedy_kept(e, -1.0).tolist() == [0, 1], "t = -1 is the exact rule: both antipodal rows kept"
    assert greedy_kept(e, -1.0001).tolist() == [0], "t < -1 keeps only row 0"
    same = np.array([[1.0, 0.0], [1.0, 0.0], [0.0, 1.0]], dtype=np.float32)
    assert delta_graph(same, 1.0).tolist() == [[True, True, False], [True, True, False], [False, False, True]], (
        "t = 1 (δ = 0) is valid: identical rows only"
    )
    with pytest.raises(LamValueError, match=r"^t must be finite and <= 1, got 1\.5$"):
        delta_graph(same, 1.5)
    with pytest.raises(LamValueError, match=r"^t must be finite and <= 1, got nan$"):
        delta_graph(same, float("nan"))
    with pytest.raises(LamValueError, match=r"row 0 has norm 2"):
        delta_graph(same * 2.0, 0.5)  # rows are not normalised unless asked
    assert delta_graph(same * 2.0, 0.5, normalize=True).sum() == 5, "normalize=True rescales"


def test_bracket_and_ceiling_by_hand():
    """Square at t = 0.5 (δ = 1): greedy keeps 4 (log2 4 = 2 bits), at t' = -1 (radius 2) every
    pair merges: 1 kept (0 bits); N = 4. Ceiling 3/4, optimum 0, attained 0."""
    e = circle([0, 90, 180, 270])
    b = bracket_bits(e, 0.5)
    assert (b.lower_bits, b.exact_bits, b.upper_bits, b.lossless_bits) == (0.0, 2.0, 2.0, 2.0) and b.holds, f"{b}"
    c = greedy_ceiling(e, 0.5)
    assert (c.kept, c.kept_2delta, c.covering) == (4, 1, 4) and c.ceiling == 0.75 and c.optimum == 0.0, f"{c}"
    assert c.attained_of_optimum is None and c.attained_of_ceiling == 0.0, "no optimum to attain"
    assert set(c.to_json()) >= {"attained", "ceiling", "optimum"}, "json carries the rates"


def test_t_half():
    """(3 + t)/4 at hand points."""
    assert t_half(1.0) == 1.0 and t_half(-1.0) == 0.5 and abs(t_half(0.95) - 0.9875) < 1e-15, "t_half values"


def test_ceiling_and_bracket_of_degenerate_sets():
    """``Ceiling`` of an empty set has rates 0 and no optimum; an unproven covering gives no
    optimum; ``greedy_ceiling(exact=False)`` solves no MILP; the bracket needs ``|S| >= 1``."""
    c0 = Ceiling(0, 0.9, 0.6, 0, 0, 0, True)
    assert (c0.attained, c0.ceiling, c0.optimum, c0.attained_of_ceiling) == (0.0, 0.0, None, None), f"{c0}"
    unproven = Ceiling(4, 0.5, -1.0, 4, 1, 3, False)
    assert unproven.optimum is None and unproven.attained_of_optimum is None, f"no proven N: {unproven}"
    half = Ceiling(4, 0.5, -1.0, 3, 1, 2, True)
    assert (half.attained, half.ceiling, half.optimum) == (0.25, 0.75, 0.5), f"rates of {half}"
    assert half.attained_of_ceiling == pytest.approx(1 / 3) and half.attained_of_optimum == 0.5, f"ratios of {half}"
    j = half.to_json()
    assert (j["attained"], j["ceiling"], j["optimum"], j["attained_of_optimum"]) == (0.25, 0.75, 0.5, 0.5), f"{j}"
    e = np.array([[1.0, 0.0], [0.0, 1.0], [-1.0, 0.0], [0.0, -1.0]], dtype=np.float32)
    c = greedy_ceiling(e, 0.5, exact=False)
    assert (c.covering, c.covering_optimal, c.kept, c.kept_2delta) == (None, False, 4, 1), f"{c}"
    b = bracket_bits(e, 0.5, exact=False)
    assert b.exact_bits is None and (b.lower_bits, b.upper_bits) == (0.0, 2.0) and b.holds, f"{b}"
    assert b.to_json()["holds"] is True, "JSON carries the verdict"
    with pytest.raises(LamValueError, match=r"^embeddings is empty: the bracket needs \|S\| >= 1$"):
        bracket_bits(np.zeros((0, 2), dtype=np.float32), 0.5)


def test_bracket_holds_within_exactly_its_tolerance():
    """Corollary 3's bracket ``lower <= exact <= upper`` is checked with a 1e-12 slack (bits
    computed by ``log2`` may differ in the last place): within it the bracket holds, beyond it
    not, for each inequality."""
    assert Bracket(1.0 + 0.5e-12, 1.0, None, 2.0).holds, "lower above upper by half the slack: holds"
    assert not Bracket(1.0 + 1.5e-12, 1.0, None, 2.0).holds, "lower above upper beyond the slack: fails"
    assert Bracket(1.0, 2.0, 1.0 - 0.5e-12, 2.0).holds, "exact below lower within the slack: holds"
    assert not Bracket(1.0, 2.0, 1.0 - 1.5e-12, 2.0).holds, "exact below lower beyond the slack: fails"
    assert Bracket(1.0, 2.0, 2.0 + 0.5e-12, 2.0).holds, "exact above upper within the slack: holds"
    assert not Bracket(1.0, 2.0, 2.0 + 1.5e-12, 2.0).holds, "exact above upper beyond the slack: fails"
    assert not Bracket(1.0, 2.0, 0.5, 2.0).holds and not Bracket(1.0, 2.0, 2.5, 2.0).holds, "exact outside the bracket"


def test_ceiling_records_both_thresholds_and_hull_takes_a_row_vector():
    """The ceiling record carries ``t`` and ``t' = 4t - 3`` (Theorem 2); ``hull_distance`` takes
    the point as a flat vector or a ``(1, D)`` row alike."""
    from lam_ref.covering import hull_distance

    e = np.array([[1.0, 0.0], [0.0, 1.0], [-1.0, 0.0], [0.0, -1.0]], dtype=np.float32)
    c = greedy_ceiling(e, 0.75, exact=False)
    assert (c.n, c.t, c.t_prime) == (4, 0.75, 0.0), f"n, t and t' of {c}"
    v = np.array([[1.0, 0.0], [0.0, 1.0]])
    x = np.array([1.0, 1.0])
    flat, row = hull_distance(x, v), hull_distance(x.reshape(1, 2), v)
    assert flat.distance == row.distance == pytest.approx(np.sqrt(0.5), abs=1e-12), f"{flat.distance}, {row.distance}"


# ------------------------------------------------------------------------------------------------
# Connected components (C4)
# ------------------------------------------------------------------------------------------------


def test_components_by_hand():
    """Two chains far apart: {0°, 10°, 20°} and {180°, 190°}: DSU maps to 0 and 3."""
    e = circle([0, 10, 20, 180, 190])
    dsu = connected_components_map(e, float(np.cos(np.radians(15))))
    assert dsu.tolist() == [0, 0, 0, 3, 3], f"components {dsu.tolist()}"


# ------------------------------------------------------------------------------------------------
# The distance to the hull (HULL): Wolfe's method and its certificate
# ------------------------------------------------------------------------------------------------


@pytest.mark.claim("HULL")
def test_hull_distance_by_hand():
    """A vertex: 0; the segment midpoint direction: 1 - cos 30°; a point beyond one end: chord."""
    v = circle([-30, 30]).astype(np.float64)
    assert hull_distance(v[0], v).distance < 1e-15, "a vertex is in the hull"
    h = hull_distance(np.array([1.0, 0.0]), v)
    assert abs(h.distance - (1 - math.cos(math.radians(30)))) < 1e-7, f"midpoint distance {h.distance}"
    assert abs(h.weights[0] - 0.5) < 1e-7 and h.upper - h.lower < 1e-12, "symmetric weights, tight certificate"
    far = circle([90])[0].astype(np.float64)
    hf = hull_distance(far, v)
    assert abs(hf.distance - np.linalg.norm(far - v[1])) < 1e-12, "beyond the end: distance to vertex c"
    inside = (v[0] + v[1]) / 2
    assert hull_distance(inside, v).distance < 1e-15 and hull_distance(inside, v).direction is None, "inside"


def _assert_hull_certificate(h, x, v, spread: float = 1.0) -> None:
    """HULL's certificate of ``h = hull_distance(x, v)``, the one check of it in this file: the
    weights are feasible (>= 0, sum 1) and reproduce the point, so ``upper = |x - p|`` is attained
    and is the distance; the lower bound recomputed here from the separating direction
    ``(x - p)/|x - p|`` (``min_j w·(x - v_j)``, valid for any ``w`` by duality) is within
    ``1e-9·spread`` of it, and both equal the result's ``lower`` and ``upper``.

    Tolerance: ``hull_distance`` takes the direction normal to its final face, this check
    ``(x − p)/|x − p|``; they differ by the rounding of ``p`` and of Wolfe's last affine solve
    (``O(κ·D·u·|v|/|x − p|)``, ``κ`` the condition of the face), at most 2.5e-14·spread on the
    instances below (measured), inside ``1e-12·spread``; with ``x`` inside the hull both are 0."""
    assert h.weights.min() >= 0 and abs(h.weights.sum() - 1) < 1e-12, f"weights off the simplex: {h.weights}"
    assert np.allclose(h.weights @ v, h.point, atol=1e-12 * spread), "weights do not reproduce the point"
    upper = float(np.linalg.norm(x - h.point))
    lower = max(0.0, float(np.min((x - v) @ ((x - h.point) / upper)))) if upper > 1e-12 else 0.0
    assert abs(h.distance - upper) <= 1e-12 * spread and upper - lower <= 1e-9 * spread, f"certificate [{lower}, {upper}]"
    assert h.lower == pytest.approx(lower, abs=1e-12 * spread) and h.upper == pytest.approx(upper, abs=1e-12 * spread), \
        f"the result's bounds [{h.lower}, {h.upper}] are not the certificate's [{lower}, {upper}]"


@pytest.mark.claim("HULL")
@given(st.integers(2, 6), st.integers(1, 30), st.integers(0, 2**31))
def test_hull_distance_certificate(dim, m, seed):
    """Random instances: the weights are feasible (>= 0, sum 1) and reproduce the point, so
    ``upper`` is attained; a lower bound recomputed here from the separating direction
    (``min_j w·(x - v_j)/|w|``, valid for any ``w`` by duality) is within 1e-9 of it. Shown to fail
    on the affine-hull projection (negative weights) and on the nearest vertex (gap), by hand."""
    rng = np.random.default_rng(seed)
    v = rng.standard_normal((m, dim))
    x = rng.standard_normal(dim) * 2
    _assert_hull_certificate(hull_distance(x, v), x, v)


@pytest.mark.claim("HULL")
@pytest.mark.parametrize(("dim", "m", "seed"), [(2, 3, 19), (2, 4, 1), (2, 5, 2), (2, 6, 3), (3, 3, 101), (3, 4, 3), (3, 5, 3), (3, 6, 3)])
def test_hull_distance_when_the_affine_minimiser_leaves_the_simplex(dim, m, seed):
    """Instances (found by search) on which Wolfe's minor cycle runs: the affine minimiser of the
    active set has a weight ``<= 0`` and is clipped back into the simplex. The result is still
    certified: weights on the simplex reproduce the point, and the lower bound recomputed here
    from the separating direction (valid for any direction, by duality) meets the distance.

    Tolerance: ``hull_distance`` takes the direction normal to its final face, this test
    ``(x − p)/|x − p|``; they differ by the rounding of ``p`` and of Wolfe's last affine solve
    (``O(κ·D·u·|v|/|x − p|)``, ``κ`` the condition of the face), which moves ``min_j (x − v_j)·w``
    by at most 2.5e-14 on these instances (measured; ``|x − p| >= 0.02``), inside ``1e-12``."""
    from lam_ref.covering import hull_distance

    rng = np.random.default_rng(seed)
    v = rng.standard_normal((m, dim))
    x = rng.standard_normal(dim) * 2
    h = hull_distance(x, v)
    assert h.distance > 1e-6 and h.direction is not None, "x lies outside the hull in these instances"
    _assert_hull_certificate(h, x, v)


#: Instances (dim, m, seed; found by search) on which Wolfe's minor cycle clips twice in a row:
#: the clipped weights of the first clip are then the starting point of the second.
_TWO_CLIPS = [(3, 5, 94), (3, 5, 115), (3, 12, 8), (4, 8, 238), (4, 12, 87), (4, 12, 118), (4, 12, 141)]


@pytest.mark.claim("HULL")
@pytest.mark.parametrize(
    ("dim", "m", "seed", "spread"),
    [(*c, 1.0) for c in _TWO_CLIPS] + [(2, 3, 19, 1.0), (2, 6, 3, 1.0), (3, 6, 3, 1.0), (2, 4, 17, 1.0), (2, 4, 21, 10.0)],
)
def test_hull_distance_decreases_monotonically_along_wolfes_iterations(dim, m, seed, spread):
    """Wolfe's method (``max_iter`` major iterations) keeps its weights on the simplex and its
    distance ``||x - weightsᵀV||`` never increases from one iteration to the next (each major
    iteration strictly decreases the norm of the hull point of ``V - x``); its lower bound is
    the dual bound of the separating direction (valid for any direction, by duality), also
    before convergence. Once the optimality gap ``z·z - min_j z·(v_j - x)`` (``z = p - x``,
    recomputed here) is at most half the stopping tolerance ``1e-12·scale``, one more iteration
    returns the same result: the method has stopped.

    The ``1e-12·spread`` tolerances cover the rounding of ``p = weightsᵀV`` (``O(D·u·spread)``) and
    the difference between the face normal ``hull_distance`` uses and the direction
    ``(x − p)/|x − p|`` recomputed here, ``O(κ·D·u·spread²/|x − p|)``: at most ``8e-15·spread``
    on these instances (measured); where ``x`` ends inside the hull both sides are below ``|x − p|``."""
    from lam_ref.covering import hull_distance

    rng = np.random.default_rng(seed)
    v = rng.standard_normal((m, dim)) * spread
    x = rng.standard_normal(dim) * 2
    scale = max(1.0, float(np.max(np.sum((v - x) ** 2, axis=1))))
    prev = np.inf
    for k in range(1, 12):
        h = hull_distance(x, v, max_iter=k)
        assert h.weights.min() >= 0.0 and abs(h.weights.sum() - 1.0) <= 1e-12, f"k={k}: weights {h.weights}"
        d = float(np.linalg.norm(x - h.weights @ v))
        assert abs(h.distance - d) <= 1e-12 * spread, f"k={k}: distance {h.distance} is not ||x - p|| = {d}"
        assert d <= prev + 1e-12 * spread, f"k={k}: distance rose from {prev} to {d}"
        prev = d
        lo = max(0.0, float(np.min((x - v) @ ((x - h.point) / d))))
        assert h.lower == pytest.approx(min(lo, d), abs=1e-12 * spread), f"k={k}: lower {h.lower} is not the dual bound {lo}"
        z = h.point - x
        if float(z @ z) - float(np.min((v - x) @ z)) <= 0.5e-12 * scale:
            nxt = hull_distance(x, v, max_iter=k + 1)
            assert np.array_equal(nxt.weights, h.weights), f"k={k}: the gap is below tolerance, yet iteration {k + 1} moved"
    h = hull_distance(x, v)
    _assert_hull_certificate(h, x, v, spread)
    assert abs(h.distance - prev) <= 1e-12 * spread, f"the last iteration's distance {prev} is the result's {h.distance}"


@pytest.mark.claim("HULL")
def test_hull_distance_round_off_threshold_is_relative_to_the_scale():
    """``x`` counts as inside the hull when ``upper <= 1e-12·√scale``, ``scale = max(1,
    max_j ||v_j - x||²)``: at 1.2e-12 from a short segment (scale 1) it is outside (a direction,
    a lower bound); at 5e-11 from a segment of half-length 100 (scale 1e4, threshold 1e-10) it
    is inside (no direction, lower 0) though the distance is still reported. A vertex itself is
    at distance exactly 0 with all weight on it (exact in any summation order: the one-hot
    weights reproduce the vertex, products by 0 and 1 and sums with 0 being exact).

    Rounding (issue 22): the hull point ``p`` carries ``O(ε·|v|) ≈ 1e-17`` of BLAS-order-dependent
    error; before ``_face_normal`` that tilted the direction by ``1e-17 / 1.2e-12`` and the lower
    bound fell to 0 under OpenBLAS's SkylakeX kernels. With the direction normal to the face the
    bound's error is ``O(D·ε·max_j |x − v_j|) ≈ 1e-16``, so ``rel=1e-3`` of 1.2e-12 (1.2e-15) holds
    on every kernel; the distance's own error is ``O(ε·|v|)``, inside the same tolerance."""
    from lam_ref.covering import hull_distance

    near = hull_distance(np.array([0.25, 1.2e-12]), np.array([[0.0, 0.0], [0.5, 0.0]]))
    assert near.direction is not None and near.distance == pytest.approx(1.2e-12, rel=1e-3), f"{near}"
    assert near.lower == pytest.approx(1.2e-12, rel=1e-3), f"lower bound at 1.2e-12: {near.lower}"
    wide = hull_distance(np.array([0.0, 5e-11]), np.array([[-100.0, 0.0], [100.0, 0.0]]))
    assert wide.direction is None and wide.lower == 0.0, f"inside up to round-off at scale 1e4: {wide}"
    assert wide.distance == pytest.approx(5e-11, rel=1e-3), f"the distance is still reported: {wide.distance}"
    v = np.array([[2.0, 0.0], [0.0, 2.0], [1.0, 1.0], [3.0, 3.0]])
    at = hull_distance(v[2], v)
    assert at.distance == 0.0 and at.weights.tolist() == [0.0, 0.0, 1.0, 0.0], f"x = v_2: {at}"


def test_face_normal_removes_a_tilt_along_the_face_and_keeps_w_off_the_face():
    """HULL, issue 22: ``_face_normal`` makes the separating direction exactly normal to the final
    face. ``w = (1e-17, 1.2e-12)`` is what SkylakeX's summation order gives for ``x − p`` on the
    segment ``[(0, 0), (0.5, 0)]``; the tilt along the face goes (to ε) and the direction is
    ``(0, 1)``, for a face given by two or three collinear vertices. A single vertex has no edge:
    ``w / |w|``. A ``w`` lying along the face (a point that is not the foot of ``x``, which the
    projection would cancel) is kept as it is rather than divided by ~0."""
    from lam_ref.covering import _face_normal

    seg = np.array([[0.0, 0.0], [0.5, 0.0]])
    tilted = np.array([1e-17, 1.2e-12])
    for face in (seg, np.array([[0.0, 0.0], [0.25, 0.0], [0.5, 0.0]])):
        u = _face_normal(tilted, face)
        assert abs(u[0]) <= 1e-15 and u[1] == pytest.approx(1.0, abs=1e-15), f"normal to the face: {u}"
    assert _face_normal(tilted, seg[:1]).tolist() == (tilted / np.linalg.norm(tilted)).tolist(), "one vertex: w/|w|"
    along = np.array([0.3, 1e-3])
    assert _face_normal(along, seg).tolist() == (along / np.linalg.norm(along)).tolist(), (
        "w mostly along the face is kept")
    x = np.array([0.25, 1.2e-12])
    assert max(0.0, float(np.min((x - seg) @ (tilted / np.linalg.norm(tilted))))) == 0.0, (
        "fixture: the tilted direction alone loses the bound")
    assert float(np.min((x - seg) @ _face_normal(tilted, seg))) == pytest.approx(1.2e-12, rel=1e-3), (
        "the face normal keeps it")


# ------------------------------------------------------------------------------------------------
# Input checks: errors name the argument
# ------------------------------------------------------------------------------------------------


def test_bad_inputs_raise():
    """Errors name the argument: weights shape/values, non-boolean adjacency, brute-force size."""
    e = circle([0, 10])
    with pytest.raises(LamValueError, match="weights"):
        token_weighted_optimum(e, 0.9, weights=[1.0])
    with pytest.raises(LamValueError, match=r"weights\[1\]"):
        token_weighted_optimum(e, 0.9, weights=[1.0, float("nan")])
    with pytest.raises(LamValueError, match="adj"):
        covering_number(np.ones((2, 3), dtype=bool))
    with pytest.raises(LamValueError, match="brute force"):
        brute_force_covering(np.eye(BRUTE_FORCE_LIMIT + 1, dtype=bool))
    with pytest.raises(LamValueError, match="vertices"):
        hull_distance(np.zeros(2), np.zeros((0, 2)))
    with pytest.raises(LamValueError, match="t"):
        delta_graph(e, 1.5)
    with pytest.raises(LamValueError, match="row 0"):
        covering_number(np.array([[2.0, 0.0]]), 0.9)


def test_adjacency_input_is_checked_and_left_unchanged():
    """A boolean adjacency must be square and symmetric (errors name ``adj``); its diagonal is
    taken as ``True`` without writing into the caller's array."""
    adj = np.array([[False, True, False], [True, False, False], [False, False, False]])
    before = adj.copy()
    assert covering_number(adj).value == 2.0, "{0, 1} and {2}: two members"
    assert np.array_equal(adj, before), "the caller's adjacency is not modified"
    with pytest.raises(LamValueError, match=r"^adj must be symmetric$"):
        covering_number(np.array([[True, True], [False, True]]))
    with pytest.raises(LamValueError, match=r"^adj must be a square boolean matrix when t is None, got int64 \(2, 2\)$"):
        covering_number(np.eye(2, dtype=np.int64))
