"""COR2 (App. C.2, Corollary 2, eq. 3; App. I): for a δ-substitution and any source ``X ~ P`` on
S, ``I(X; π(X)) = H(π(X)) <= log2|R|``."""

from __future__ import annotations

import math
from collections import defaultdict

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from lam_ref.strategies import embeddings_and_threshold
from lam_ref.substitution import substitute
from lam_ref.theory import map_entropy

from ._support import must_fail

pytestmark = pytest.mark.claim("COR2")


@st.composite
def sources(draw):
    """(E, t) and a distribution on S: uniform, a point mass, or Dirichlet(α) with drawn α."""
    e, t = draw(embeddings_and_threshold(min_n=1, max_n=30))
    n = e.shape[0]
    kind = draw(st.sampled_from(["uniform", "point", "dirichlet"]))
    if kind == "uniform":
        p = np.full(n, 1.0 / n)
    elif kind == "point":
        p = np.zeros(n)
        p[draw(st.integers(0, n - 1))] = 1.0
    else:
        alpha = draw(st.floats(0.05, 5.0))
        p = np.random.default_rng(draw(st.integers(0, 2**31))).dirichlet(np.full(n, alpha))
        p /= p.sum()
    return e, t, p


def entropy_bits(masses) -> float:
    return -sum(m * math.log2(m) for m in masses if m > 0)


def prop_rate(data, use_source_entropy: bool = False) -> None:
    """H of the image distribution (computed here by hand) <= log2|R|, and equals both
    ``map_entropy``'s ``H_pi`` and its joint-law mutual information. The broken variant measures
    H(X) instead of H(π(X))."""
    e, t, p = data
    pi = substitute(e, t).pi
    image: dict[int, float] = defaultdict(float)
    for x, r in enumerate(pi.tolist()):
        image[r] += float(p[x])
    h = entropy_bits(p) if use_source_entropy else entropy_bits(image.values())
    n_r = int((pi == np.arange(pi.shape[0])).sum())
    assert h <= math.log2(n_r) + 1e-9, f"H = {h!r} > log2|R| = {math.log2(n_r)!r}"
    m = map_entropy(pi, p)
    if not use_source_entropy:
        assert abs(m["H_pi"] - h) <= 1e-9, f"map_entropy H_pi {m['H_pi']!r} != {h!r}"
    assert abs(m["I"] - m["H_pi"]) <= 1e-9, f"I(X;pi(X)) {m['I']!r} != H(pi(X)) {m['H_pi']!r}"


@given(sources())
def test_rate_bound_under_any_source(data):
    """COR2 under uniform, point-mass and Dirichlet sources. Shown to fail when H(X) is measured
    instead of H(π(X)) (:func:`test_cor2_fails_for_source_entropy`)."""
    prop_rate(data)


def test_cor2_fails_for_source_entropy():
    must_fail(sources(), prop_rate, True)
