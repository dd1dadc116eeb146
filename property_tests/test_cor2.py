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
from tests.datagen import CHAIN_T
from tests.datagen import arc as _arc

from ._support import REG, _ctx, must_fail

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


# ------------------------------------------------------------------------------------------------
# COR2's row of ``lam-ref verify`` (:mod:`lam_ref.claims.cor2`): its sources, measure and description.
# ------------------------------------------------------------------------------------------------


@pytest.mark.claim("COR2")
def test_cor2_sources_are_uniform_dirichlet_and_a_point_mass():
    """``sources(n, count, rng)``: the uniform law, ``count`` Dirichlet(0.3) draws of the
    generator, then a point mass at a row the generator picks next."""
    from lam_ref.claims.cor2 import sources

    got = sources(5, 3, np.random.default_rng(7))
    rng = np.random.default_rng(7)
    want = [np.full(5, 0.2)] + [rng.dirichlet([0.3] * 5) for _ in range(3)]
    point = np.zeros(5)
    point[rng.integers(5)] = 1.0
    want.append(point)
    assert len(got) == 5, f"uniform, 3 draws, a point mass: {len(got)}"
    for i, (g, w) in enumerate(zip(got, want)):
        assert np.array_equal(g, w), f"source {i}: {g} vs {w}"


@pytest.mark.claim("COR2")
def test_cor2_measure_on_the_chain():
    """COR2 on the chain (greedy maps row 1 to row 0): under the uniform law ``H(π(X)) =
    H(2/3, 1/3)``, ``log2|R| = 1``, six sources, the least slack over them and an identity error
    of (almost) 0; the rule is inclusive at both tolerances."""
    from lam_ref.claims.cor2 import BITS_TOL, sources

    ctx = _ctx(_arc(0.0, 0.1, 0.2), CHAIN_T, seed=5)
    m = REG["COR2"].measure(ctx).values
    h_uniform = -(2 / 3 * np.log2(2 / 3) + 1 / 3 * np.log2(1 / 3))
    assert m["H_pi_uniform"] == pytest.approx(h_uniform, abs=1e-12) and m["log2_R"] == 1.0, f"{m}"
    slack = []
    for p in sources(3, 4, np.random.default_rng(5)):
        q = np.array([p[0] + p[1], p[2]])
        q = q[q > 0]
        slack.append(1.0 + float((q * np.log2(q)).sum()))
    assert m["sources"] == 6 and m["min_slack_bits"] == pytest.approx(min(slack), abs=1e-12), f"{m} vs {slack}"
    assert 0 <= m["max_identity_error"] <= 1e-12, f"{m}"
    holds = REG["COR2"].holds
    assert holds({"min_slack_bits": -BITS_TOL, "max_identity_error": BITS_TOL}) is True, "both tolerances inclusive"
    assert holds({"min_slack_bits": -2 * BITS_TOL, "max_identity_error": 0.0}) is False, "H(π(X)) above log2|R| fails"
    assert holds({"min_slack_bits": 0.0, "max_identity_error": 2 * BITS_TOL}) is False, "I != H(π(X)) fails"


@pytest.mark.claim("COR2")
def test_cor2_describe_rounds_only_round_off_to_zero():
    """A slack within ``(-BITS_TOL, 0)`` is round-off of an equality and prints as 0; ``-BITS_TOL``
    itself and anything below print as they are."""
    from lam_ref.claims.cor2 import BITS_TOL

    row = {"H_pi_uniform": 1.0, "sources": 6, "log2_R": 1.0}
    for slack, shown in ((-BITS_TOL, "-1e-09"), (-2e-9, "-2e-09"), (-5e-10, "0.0000"), (0.25, "0.2500")):
        got = REG["COR2"].describe({**row, "min_slack_bits": slack})[0]
        assert f"least log2|R| - H(π(X)) {shown} over 6" in got, f"slack {slack}: {got!r}"


@pytest.mark.claim("COR2")
def test_map_entropy_and_cor3_tokens_computed_in_float64():
    """A float32 law and float32 token weights are summed in float64 (the values as given).

    Tolerance: the entropies are three-term sums of ``p·log2 p`` over the same float64 values
    (no BLAS); summed in any order they differ by at most ``2u·Σ|p log2 p| ≈ 3.4e-16 < 1e-15``,
    while a float32 sum is off by about 1e-8."""
    from lam_ref.theory import map_entropy

    p32 = np.array([0.125, 0.375, 0.5], dtype=np.float32)
    m = map_entropy([0, 1, 2], p32)
    p64 = p32.astype(np.float64)
    h = float(-(p64 * np.log2(p64)).sum())
    assert m["H_X"] == pytest.approx(h, abs=1e-15) and m["H_pi"] == pytest.approx(h, abs=1e-15), f"{m} vs {h}"
    w32 = np.array([0.1, 0.2, 0.3], dtype=np.float32)
    got = REG["COR3"].measure(_ctx(_arc(0.0, 0.1, 0.2), CHAIN_T, weights=w32)).values
    w64 = w32.astype(np.float64)
    assert got["T_all"] == float(w64.sum()) and got["T_greedy"] == float(w64[0] + w64[2]), f"{got}"
