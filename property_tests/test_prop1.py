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

from ._support import must_fail

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
