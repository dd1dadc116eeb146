"""HULL (beyond the paper; refines Theorem 1): the worst-case score deficit of a retained set is
``sup_{|q|=1} (max_S q·x - max_R q·z) = max_{x∈S} dist(x, conv R)``. Hence a δ-cover is
sufficient, not necessary, for deficit <= δ."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from scipy.optimize import minimize

from lam_ref.covering import covering_number, hull_distance
from lam_ref.strategies import embeddings_and_threshold, unit_rows, unit_vectors
from lam_ref.substitution import substitute
from lam_ref.theory import (
    adversarial_queries,
    hull_deficit,
    measure_substitution,
    random_queries,
    score_deficits,
)

from ._support import REG, _ctx, _fan, must_fail

pytestmark = pytest.mark.claim("HULL")

DATA = st.tuples(embeddings_and_threshold(min_n=1, max_n=24), st.integers(0, 2**31))


def nearest_retained_bound(e, kept):
    """Broken 'worst case': max over x of the distance to the *nearest retained point* (what a
    δ-cover controls), instead of the distance to the hull."""
    r = e[kept].astype(np.float64)
    return max(float(np.min(np.linalg.norm(r - x, axis=1))) for x in e.astype(np.float64))


def prop_hull(data, sup_of) -> None:
    """``h = sup_of(e, kept)``: no sampled/adversarial query exceeds h (1e-9); the hull query
    attains h (1e-9); queries perturbed around it approach h; and h <= δ̂."""
    (e, t), seed = data
    res = substitute(e, t)
    kept = res.kept
    h = sup_of(e, kept)
    q = np.concatenate([random_queries(e.shape[1], 128, seed), adversarial_queries(e, res.pi)])
    d = score_deficits(e, kept, q)
    assert d.max() <= h + 1e-9, f"a query loses {d.max()!r} > sup {h!r}"
    hd = hull_deficit(e, kept)
    if hd.query is None:
        assert h <= 1e-12, f"nothing outside conv R, yet sup {h!r} > 0"
        return
    attained = score_deficits(e, kept, hd.query[None, :])[0]
    assert abs(attained - h) <= 1e-9, f"the hull query loses {attained!r}, sup claimed {h!r}"
    rng = np.random.default_rng(seed)
    gaps = []
    for eps in (1e-2, 1e-4, 1e-6):
        qq = hd.query + eps * rng.standard_normal(e.shape[1])
        qq /= np.linalg.norm(qq)
        gaps.append(h - score_deficits(e, kept, qq[None, :])[0])
    assert -1e-9 <= gaps[-1] <= 1e-5, f"perturbed queries do not approach the sup: gaps {gaps}"
    assert h <= res.delta_hat + 1e-12, f"sup {h!r} exceeds delta_hat {res.delta_hat!r}"


@given(DATA)
def test_sup_deficit_is_the_hull_distance(data):
    """HULL on clustered sets. Shown to fail when the sup is taken as the nearest-retained
    distance (:func:`test_hull_fails_for_nearest_retained_distance`)."""
    prop_hull(data, lambda e, kept: hull_deficit(e, kept).value)


def test_hull_fails_for_nearest_retained_distance():
    must_fail(DATA, prop_hull, nearest_retained_bound)


def sixty_degrees():
    """a at -30°, b at 0°, c at +30° (a and c 60° apart) in the plane, b last."""
    ang = np.radians([-30.0, 30.0, 0.0])
    return np.stack([np.cos(ang), np.sin(ang)], axis=1).astype(np.float32)


def test_sixty_degree_example():
    """Removing the middle vector loses ``1 - cos 30° = 0.1340 < δ = 0.3162`` at worst, although
    ``ρ*(δ) = 0`` (every chord >= 2 sin 15° = 0.5176 > δ, so N(S, δ) = 3 and no δ-substitution
    may drop b). Values by hand."""
    e = sixty_degrees()
    t = 0.95
    kept = np.array([True, True, False])
    hd = hull_deficit(e, kept)
    assert abs(hd.value - (1 - math.cos(math.radians(30)))) < 1e-7, f"sup deficit {hd.value!r} != 1 - cos 30°"
    assert hd.value < math.sqrt(0.1), "below delta"
    assert covering_number(e, t).value == 3, "rho*(delta) = 0: N(S, delta) = |S|"
    assert not measure_substitution(e, np.array([0, 1, 0]), t).valid, "dropping b is not a delta-substitution"
    d = score_deficits(e, kept, random_queries(2, 4096, 0))
    assert d.max() <= hd.value + 1e-12, "no sampled query exceeds the hull value"
    assert d.max() >= hd.value - 1e-4, f"4096 planar queries come within 1e-4 of the sup, got {d.max()!r}"


@st.composite
def hull_problems(draw):
    dim = draw(st.integers(2, 8))
    v = draw(unit_rows(min_n=1, max_n=12, min_dim=dim, max_dim=dim))
    x = draw(unit_vectors(dim)).astype(np.float64)
    return v, x


@given(hull_problems())
def test_hull_distance_matches_slsqp(problem):
    """Wolfe's algorithm agrees with SciPy's SLSQP on the same QP (squared distances within 1e-8),
    returns feasible weights (on the simplex, reproducing its hull point) and a tight
    certificate. Shown to fail on the nearest-vertex distance in place of the hull distance, and
    on the affine-hull projection (weights may go negative) — both tried by hand."""
    v, x = problem
    h = hull_distance(x, v)
    assert h.upper - h.lower <= 1e-9, f"certificate gap {h.upper - h.lower!r}"
    m = v.shape[0]
    v64 = v.astype(np.float64)
    r = minimize(
        lambda lam: float(np.sum((x - lam @ v64) ** 2)),
        np.full(m, 1.0 / m),
        method="SLSQP",
        bounds=[(0, 1)] * m,
        constraints=[{"type": "eq", "fun": lambda lam: lam.sum() - 1}],
        options={"ftol": 1e-15, "maxiter": 500},
    )
    assert abs(h.distance**2 - max(r.fun, 0.0)) <= 1e-8, f"Wolfe {h.distance**2!r} vs SLSQP {r.fun!r} (squared)"
    assert np.allclose(h.weights @ v64, h.point, atol=1e-12), "weights reproduce the hull point"
    assert abs(h.weights.sum() - 1) < 1e-12 and h.weights.min() >= 0, "weights on the simplex"


# ------------------------------------------------------------------------------------------------
# HULL's row of ``lam-ref verify`` (:mod:`lam_ref.claims.hull`): its measure on sets worked by hand.
# ------------------------------------------------------------------------------------------------


@pytest.mark.claim("HULL")
def test_hull_measure_reports_the_supremum_and_a_partial_solve():
    """HULL's row: the solved supremum, the best query and the sampled queries' best, ``δ̂``,
    whether every deleted row was solved and the certificate gap; solving only the farthest rows
    (``hull_limit``) is said in the note."""
    e, t = _fan(), 0.99
    full = REG["HULL"].measure(_ctx(e, t, n_queries=16))
    m = full.values
    assert m["complete"] is True and full.note == "", f"every deleted row solved: {full}"
    assert m["sup_deficit"] == pytest.approx(2 * np.sin(0.05), rel=1e-6), f"conv R is row 0: each fan row is 2 sin(θ/2) away: {m}"
    assert 0 <= m["certificate_gap"] <= 1e-9 and m["max_deficit_sampled"] <= m["max_deficit_all"] <= m["sup_deficit"] + 1e-9, f"{m}"
    part = REG["HULL"].measure(_ctx(e, t, n_queries=16, hull_limit=2))
    assert part.values["complete"] is False, f"{part}"
    assert part.note == "solved the 2 deleted rows farthest from R: a lower bound", f"{part.note!r}"


@pytest.mark.claim("HULL")
def test_hull_measure_without_queries_or_deletions():
    """No deleted row and no sampled query: every deficit HULL reports is 0 (not an error)."""
    m = REG["HULL"].measure(_ctx(np.eye(3), 0.9, n_queries=0)).values
    assert (m["sup_deficit"], m["max_deficit_sampled"], m["max_deficit_all"]) == (0.0, 0.0, 0.0), f"{m}"
