"""THM1 (paper §2.4, Theorem 1; App. C.2, C.5): for a δ-substitution and every unit query,
``0 <= max_S q·x - max_R q·z <= δ̂ <= δ``, and both ends are attained."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from lam_ref.geometry import delta_from_t, delta_sq, sq_dist, t_prime
from lam_ref.strategies import adversarial_pairs, embeddings_and_threshold, thresholds
from lam_ref.substitution import substitute
from lam_ref.theory import FP_TOL, adversarial_queries, random_queries, score_deficits

from ._support import REG, _ctx, _fan, kept_mask, must_fail

pytestmark = pytest.mark.claim("THM1")


def prop_deficit(data, make_pi) -> None:
    """Deficits over 64 random and every adversarial query ``normalize(x - π(x))`` lie in
    ``[0, δ̂]`` and ``δ̂ <= δ`` (δ = the configured bound of ``t``)."""
    (e, t), seed = data
    pi = make_pi(e, t)
    kept = kept_mask(pi)
    delta = delta_from_t(t)
    dist = np.array([math.sqrt(sq_dist(e[i], e[p])) for i, p in enumerate(pi)])
    delta_hat = float(dist[~kept].max()) if (~kept).any() else 0.0
    q = np.concatenate([random_queries(e.shape[1], 64, seed), adversarial_queries(e, pi)])
    d = score_deficits(e, kept, q)
    assert d.min() >= -FP_TOL, f"negative deficit {d.min()!r}"
    assert d.max() <= delta_hat + FP_TOL, f"deficit {d.max()!r} exceeds delta_hat {delta_hat!r}"
    assert delta_hat <= delta, f"delta_hat {delta_hat!r} exceeds delta {delta!r}"


DATA = st.tuples(embeddings_and_threshold(min_n=1, max_n=30), st.integers(0, 2**31))


@given(DATA)
def test_deficit_bounded_for_random_and_adversarial_queries(data):
    """THM1 for banded and exhaustive Algorithm 2. Shown to fail on a map made at radius 2δ
    (``t' = 4t - 3``) judged against δ (:func:`test_thm1_fails_at_twice_the_radius`)."""
    prop_deficit(data, lambda e, t: substitute(e, t).pi)
    prop_deficit(data, lambda e, t: substitute(e, t, exhaustive=True).pi)


def test_thm1_fails_at_twice_the_radius():
    """The same property must fail when π merges at radius 2δ but δ is claimed."""
    must_fail(DATA, prop_deficit, lambda e, t: substitute(e, max(-1.0, t_prime(t)), exhaustive=True).pi)


@given(thresholds(0.5, 0.999), st.integers(2, 64), st.integers(0, 2**31))
def test_upper_end_attained_by_the_paper_witness(t, dim, seed):
    """Tightness (App. C.2): ``S = {a, b}``, ``||a-b|| = δ``, ``R = {b}``, ``q = (a-b)/δ`` gives
    deficit exactly ``δ`` (float64, to 1e-12). Shown to fail when q is not normalised (by hand)."""
    rng = np.random.default_rng(seed)
    a = rng.standard_normal(dim)
    a /= np.linalg.norm(a)
    u = rng.standard_normal(dim)
    u -= (u @ a) * a
    u /= np.linalg.norm(u)
    theta = 2 * math.asin(delta_from_t(t) / 2)  # chord(θ) = δ
    b = math.cos(theta) * a + math.sin(theta) * u
    e = np.stack([a, b])
    delta = float(np.linalg.norm(a - b))
    assert abs(delta - delta_from_t(t)) <= 1e-12, f"witness chord {delta!r} != delta {delta_from_t(t)!r}"
    q = (a - b) / delta
    d = score_deficits(e, np.array([False, True]), q[None, :])[0]
    assert abs(d - delta) <= 1e-12, f"witness deficit {d!r} != delta {delta!r}"


@given(adversarial_pairs(min_pairs=1, max_pairs=4))
def test_upper_end_on_float32_pairs_a_hair_inside(pairs):
    """On float32 pairs a hair inside δ, each merged pair ``S_k = {a, b}`` (``R_k = {a}``) loses
    exactly its distance at ``q = normalize(b - a)`` (to 1e-12), and that distance is a hair
    inside δ (``0 < δ² - dist² <= 1e-6``): the upper end is attained by float32 data, not only on
    paper. Shown to fail by hand with the pairs' roles swapped (R = {b}: the query then favours
    the retained row and the deficit is 0)."""
    e, t = pairs.embeddings, pairs.t
    res = substitute(e, t, exhaustive=True)
    assert np.array_equal(res.pi[1::2] == np.arange(0, e.shape[0], 2), pairs.inside), "inside pairs must merge"
    for k in np.flatnonzero(pairs.inside):
        sub = e[2 * k : 2 * k + 2]
        pi = np.array([0, 0])
        q = adversarial_queries(sub, pi)
        d = score_deficits(sub, np.array([True, False]), q)[0]
        dist = res.distances[2 * k + 1]
        assert abs(d - dist) <= 1e-12, f"pair {k}: deficit {d!r} != distance {dist!r}"
        assert 0 < delta_sq(t) - dist**2 <= 1e-6 + 1e-12, f"pair {k}: distance {dist!r} not a hair inside delta"


@given(embeddings_and_threshold(min_n=1, max_n=30), st.integers(0, 2**31))
def test_lower_end_attained_when_the_maximiser_is_retained(data, seed):
    """Deficit 0 whenever the query's maximiser over S is retained (exactly, not approximately);
    a retained row's own direction is such a query. Shown to fail if R is taken as S minus the
    maximiser (by hand: the deficit becomes positive)."""
    e, t = data
    res = substitute(e, t)
    kept = res.kept
    r = int(np.flatnonzero(kept)[0])
    qs = np.concatenate([random_queries(e.shape[1], 32, seed), e[r : r + 1].astype(np.float64)])
    qs /= np.linalg.norm(qs, axis=1, keepdims=True)
    scores = qs @ e.astype(np.float64).T
    d = score_deficits(e, kept, qs)
    hits = kept[np.argmax(scores, axis=1)]
    assert np.all(d[hits] == 0.0), f"deficit {d[hits].max()!r} != 0 with a retained maximiser"
    assert hits.any(), "at least one query must have a retained maximiser"


# ------------------------------------------------------------------------------------------------
# THM1's row of ``lam-ref verify`` (:mod:`lam_ref.claims.thm1`): its measure on sets worked by hand.
# ------------------------------------------------------------------------------------------------


@pytest.mark.claim("THM1")
def test_thm1_measure_reports_each_query_family():
    """THM1's row: the largest deficit of the sampled queries and of the adversarial ones (each
    deleted row's direction and the HULL maximiser), the number of queries, the smallest and
    largest deficit over all of them, ``δ̂`` and ``δ`` — each equal to its definition.

    Tolerance (issue 22): the measure and this test compute the same deficits through BLAS
    products of different shapes, so the summation order may differ. Each score is a 3-term dot
    product of unit vectors, off by at most ``γ₃ ≈ 3u`` (``u = 2⁻⁵³``); a deficit is a difference
    of two scores, so two evaluations differ by at most ``4γ₃ + 2u < 16u ≈ 1.8e-15``. A wrong
    query family or a max taken over the wrong rows moves a deficit by far more."""
    from lam_ref.geometry import delta_from_t
    from lam_ref.theory import adversarial_queries, random_queries, score_deficits

    e, t = _fan(), 0.99
    ctx = _ctx(e, t, n_queries=32, seed=3)
    m = REG["THM1"].measure(ctx).values
    kept = np.array([True, False, False, False, False])
    assert np.array_equal(ctx.kept, kept), f"all four rows merge into row 0: {ctx.pi}"
    d_rand = score_deficits(ctx.e, kept, random_queries(3, 32, 3))
    d_adv = score_deficits(ctx.e, kept, np.concatenate([adversarial_queries(ctx.e, ctx.pi), ctx.hull.query[None, :]]))
    assert m["queries"] == 32 + 4 + 1, f"32 sampled, 4 adversarial, 1 HULL query: {m['queries']}"
    tol = 16 * 2.0**-53
    assert m["max_deficit_sampled"] == pytest.approx(d_rand.max(), abs=tol), f"{m['max_deficit_sampled']} vs {d_rand.max()}"
    assert m["max_deficit_adversarial"] == pytest.approx(d_adv.max(), abs=tol), f"{m['max_deficit_adversarial']}"
    both = np.concatenate([d_rand, d_adv])
    assert m["max_deficit_all"] == pytest.approx(both.max(), abs=tol), f"{m['max_deficit_all']}"
    assert both.min() > 0 and m["min_deficit"] == pytest.approx(both.min(), abs=tol), \
        f"every query loses something here; the smallest loss is reported: {m['min_deficit']} vs {both.min()}"
    assert m["delta"] == pytest.approx(delta_from_t(t)) and m["delta_hat"] == pytest.approx(ctx.result.delta_hat), f"{m}"


@pytest.mark.claim("THM1")
def test_thm1_measure_with_nothing_deleted():
    """Nothing deleted: no adversarial query, every deficit 0; with no sampled query either,
    no query at all and the reductions report 0 (not an error)."""
    e = np.eye(3)
    m = REG["THM1"].measure(_ctx(e, 0.9, n_queries=8)).values
    assert (m["queries"], m["max_deficit_adversarial"], m["max_deficit_sampled"]) == (8, 0.0, 0.0), f"{m}"
    assert (m["min_deficit"], m["max_deficit_all"]) == (0.0, 0.0), f"{m}"
    m0 = REG["THM1"].measure(_ctx(e, 0.9, n_queries=0)).values
    assert (m0["queries"], m0["max_deficit_sampled"], m0["min_deficit"], m0["max_deficit_all"]) == (0, 0.0, 0.0, 0.0), f"{m0}"
