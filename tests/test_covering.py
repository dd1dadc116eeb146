"""Unit tests of :mod:`lam_ref.covering`: exact N and M (MILP) against brute force and hand
counts, T(δ), greedy passes, the bracket, components, and the hull-distance QP."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from lam_ref.covering import (
    BRUTE_FORCE_LIMIT,
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


def test_token_optimum_prefers_light_rows():
    """Three rows in a 10°-step chain at δ = chord 15°: the middle row covers all (N = 1), but
    if it weighs 100 and the ends 1 each, T(δ) = 2 with the two ends (by hand)."""
    e = circle([0, 10, 20])
    t = float(np.cos(np.radians(15)))
    assert covering_number(e, t).value == 1, "middle row covers the chain"
    res = token_weighted_optimum(e, t, weights=[1, 100, 1])
    assert res.value == 2 and res.witness.tolist() == [0, 2], f"T = {res.value} with {res.witness.tolist()}"


def test_greedy_passes_and_radius_above_two():
    """``t' < -1`` (t < 1/2) keeps exactly the first row; at t' >= -1 greedy_kept is the oracle."""
    e = circle([0, 90, 180, 270])
    assert greedy_kept(e, -2.0).tolist() == [0], "radius > 2 merges everything into row 0"
    assert greedy_kept(e, 0.0).tolist() == [0, 2], "square at δ = √2 keeps 0° and 180°"
    assert greedy_kept(np.zeros((0, 2), np.float32), -2.0).size == 0, "empty set keeps nothing"
    assert delta_graph(e, -2.0).all(), "every pair is within a radius above 2"


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


def test_components_by_hand():
    """Two chains far apart: {0°, 10°, 20°} and {180°, 190°}: DSU maps to 0 and 3."""
    e = circle([0, 10, 20, 180, 190])
    dsu = connected_components_map(e, float(np.cos(np.radians(15))))
    assert dsu.tolist() == [0, 0, 0, 3, 3], f"components {dsu.tolist()}"


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
    h = hull_distance(x, v)
    assert h.weights.min() >= 0 and abs(h.weights.sum() - 1) < 1e-12, f"weights off the simplex: {h.weights}"
    assert np.allclose(h.weights @ v, h.point, atol=1e-12), "weights do not reproduce the point"
    upper = float(np.linalg.norm(x - h.point))
    w = x - h.point
    lower = max(0.0, float(np.min((x - v) @ (w / np.linalg.norm(w))))) if upper > 1e-12 else 0.0
    assert abs(upper - h.distance) <= 1e-12 and upper - lower <= 1e-9, f"certificate [{lower}, {upper}]"


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


def test_empty_and_single():
    """Empty set: N = M = 0; one row: N = M = 1 (by definition)."""
    empty = np.zeros((0, 3), np.float32)
    assert covering_number(empty, 0.9).value == 0 and packing_number(empty, 0.9).value == 0, "empty"
    one = np.array([[1.0, 0, 0]], np.float32)
    assert covering_number(one, 0.9).value == 1 and packing_number(one, 0.9).value == 1, "single"
    assert all_pairs_sq(one).tolist() == [[0.0]], "self distance"
