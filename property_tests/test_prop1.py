"""PROP1 (App. C.2, Proposition 1): if π is injective on the true top-k then
``0 <= s_j - r_j <= δ`` for ``j <= k``; otherwise two collapsed records are within ``2δ``."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from lam_ref.geometry import delta_from_t
from lam_ref.strategies import embeddings_and_threshold, stars
from lam_ref.substitution import substitute
from lam_ref.theory import FP_TOL, random_queries, rank_deficits

from ._support import REG, _ctx, _fan, must_fail

pytestmark = pytest.mark.claim("PROP1")

DATA = st.tuples(embeddings_and_threshold(min_n=2, max_n=30), st.integers(0, 2**31), st.integers(1, 8))


def prop_rankwise(data, require_injective: bool = True) -> None:
    """For 16 random queries: injective ⇒ gaps in [0, δ]; non-injective ⇒ collapse <= 2δ.
    With ``require_injective=False`` (the broken claim) gaps must be <= δ for every query."""
    (e, t), seed, k = data
    pi = substitute(e, t).pi
    delta = delta_from_t(t)
    for q in random_queries(e.shape[1], 16, seed):
        rd = rank_deficits(e, pi, q, k)
        if rd.injective or not require_injective:
            assert np.all(rd.gaps >= -FP_TOL), f"negative rank gap {rd.gaps.min()!r}"
            assert np.all(rd.gaps <= delta + FP_TOL), f"rank gap {rd.gaps.max()!r} > delta {delta!r} (injective={rd.injective})"
            if rd.injective:
                assert rd.gaps.size == min(k, e.shape[0]), "injective on top-k needs |R| >= k"
        else:
            assert rd.collapse <= 2 * delta + FP_TOL, f"collapsed pair {rd.collapse!r} > 2 delta"


@given(DATA)
def test_rank_wise_deficit(data):
    """PROP1 on clustered data. Shown to fail when injectivity is dropped from the hypothesis
    (:func:`test_prop1_needs_injectivity`)."""
    prop_rankwise(data)


def test_prop1_needs_injectivity():
    """Without injectivity the rank-wise bound is false: Hypothesis finds a counterexample."""
    must_fail(DATA, prop_rankwise, False, max_examples=200)


@given(stars(min_leaves=2, max_leaves=6, centre_first=True))
def test_star_collapse_breaks_rank_bound_within_two_delta(star):
    """Deterministic witness of the ``2δ`` collapse: a star with its centre first plus one far
    row. π sends every leaf to the centre (not injective on the top-2 of a query along two
    leaves), ``s_2 - r_2 > δ``, yet the collapsed leaves are within ``2δ``."""
    e, t, centre = star
    delta = delta_from_t(t)
    far = -e[centre].astype(np.float64)
    e2 = np.vstack([e, far[None, :].astype(np.float32)])
    pi = substitute(e2, t, exhaustive=True).pi
    assert pi.tolist() == [0] * e.shape[0] + [e.shape[0]], f"star must collapse onto the centre: {pi.tolist()}"
    q = e2[1].astype(np.float64) + e2[2].astype(np.float64)
    q /= np.linalg.norm(q)
    rd = rank_deficits(e2, pi, q, 2)
    assert not rd.injective, "pi must not be injective on the top-2 leaves"
    assert rd.gaps[1] > delta, f"s_2 - r_2 = {rd.gaps[1]!r} should exceed delta {delta!r} here"
    assert rd.collapse <= 2 * delta, f"collapsed leaves {rd.collapse!r} beyond 2 delta"
    assert math.isclose(rd.collapse, float(np.linalg.norm(e2[1].astype(np.float64) - e2[2])), rel_tol=1e-12), "collapse is the leaf distance"


# ------------------------------------------------------------------------------------------------
# PROP1's row of ``lam-ref verify`` (:mod:`lam_ref.claims.prop1`): its measure and rule at their edges.
# ------------------------------------------------------------------------------------------------


@pytest.mark.claim("PROP1")
def test_prop1_rule_bounds_are_inclusive_and_all_three_count():
    """``gap >= 0``, ``gap <= δ`` (``δ`` is half of the reported ``2δ``) and ``collapse <= 2δ``,
    each up to ``FP_TOL`` and inclusive; failing any one fails the claim."""
    from lam_ref.theory import FP_TOL

    holds = REG["PROP1"].holds
    m = {"min_gap_injective": -FP_TOL, "max_gap_injective": 0.25 + FP_TOL, "max_collapse": 0.5 + FP_TOL, "two_delta": 0.5}
    assert holds(m) is True, "every bound attained holds"
    assert holds({**m, "max_gap_injective": 0.3}) is False, "a gap above δ = 2δ/2 fails"
    assert holds({**m, "min_gap_injective": -1e-6}) is False, "a negative gap fails"
    assert holds({**m, "max_collapse": 0.6}) is False, "a collapse above 2δ fails"


@pytest.mark.claim("PROP1")
def test_prop1_measure_counts_injective_queries():
    """PROP1's row counts the queries on which π is injective on the top-``k`` and reports
    ``2δ`` of the threshold; on the fan with ``k = 2`` two members share row 0 for every query
    (all five rows map to it), with ``k = 1`` every query is injective."""
    from lam_ref.geometry import delta_from_t

    e, t = _fan(), 0.99
    one = REG["PROP1"].measure(_ctx(e, t, n_queries=16, top_k=1)).values
    assert (one["k"], one["injective_queries"], one["max_collapse"]) == (1, 16, 0.0), f"k = 1 is always injective: {one}"
    assert one["two_delta"] == pytest.approx(2 * delta_from_t(t)), f"{one}"
    two = REG["PROP1"].measure(_ctx(e, t, n_queries=16, top_k=2)).values
    assert two["injective_queries"] == 0 and 0 < two["max_collapse"] <= two["two_delta"], f"k = 2 always collapses: {two}"


@pytest.mark.claim("PROP1")
def test_prop1_measure_with_an_empty_top_list():
    """``k = 0``: every top list is empty, hence injective, with no gap and no collapse (the
    statement is vacuous, not an error)."""
    m = REG["PROP1"].measure(_ctx(_fan(), 0.99, n_queries=8, top_k=0)).values
    assert (m["injective_queries"], m["max_gap_injective"], m["min_gap_injective"], m["max_collapse"]) == (8, 0.0, 0.0, 0.0), f"{m}"
