"""EQ1 (paper §2.1, eq. 1): ``||a-b||² = 2 - 2cos(a, b)`` for unit vectors, so merging at
``cos >= t`` is merging at ``||a-b|| <= δ = sqrt(2 - 2t)``."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from lam_ref.geometry import delta_from_t, merges, sq_dist, t_from_delta
from lam_ref.strategies import embeddings_and_threshold, thresholds
from tests.datagen import CHAIN_T
from tests.datagen import arc as _arc

from ._support import REG, _ctx, must_fail

pytestmark = pytest.mark.claim("EQ1")


def prop_decisions(data, delta_of_t) -> None:
    """For every pair outside the norm slack, ``merges`` (the §2 rule) agrees with ``cos >= t``
    and with ``||a-b|| <= delta_of_t(t)``; the identity holds up to the rows' norm error."""
    e, t = data
    n = e.shape[0]
    e64 = e.astype(np.float64)
    d = delta_of_t(t)
    for i in range(n):
        for j in range(i + 1, n):
            a, b = e[i], e[j]
            sq = sq_dist(a, b)
            na, nb = float(e64[i] @ e64[i]), float(e64[j] @ e64[j])
            dot = float(e64[i] @ e64[j])
            roundoff = 8 * (e.shape[1] + 2) * np.finfo(np.float64).eps  # float64 sums of D terms
            slack = abs(na - 1) + abs(nb - 1) + roundoff
            assert abs(sq - (na + nb - 2 * dot)) <= roundoff, f"sq={sq!r} is not |a|²+|b|²-2a·b for rows {i},{j}"
            assert abs(sq - (2 - 2 * dot)) <= slack, f"EQ1 residual {abs(sq - (2 - 2 * dot))!r} > slack {slack!r}"
            cos = dot / math.sqrt(na * nb)
            if abs(sq - d * d) > 4 * slack:
                assert merges(a, b, t) == (cos >= t), f"merge({i},{j}) disagrees with cos={cos!r} >= t={t!r}"
                assert merges(a, b, t) == (math.sqrt(sq) <= d), f"merge({i},{j}) disagrees with ||a-b|| <= {d!r}"


@given(embeddings_and_threshold(min_n=2, max_n=12, min_t=-1.0, max_t=0.999, spread=2.0))
def test_merge_rule_is_cosine_threshold(data):
    """Claim EQ1 on generated clustered rows at any t in [-1, 0.999]. Shown to fail on the broken
    bound ``δ = 2 - 2t`` (δ² in place of δ) in :func:`test_eq1_fails_without_sqrt`."""
    prop_decisions(data, delta_from_t)


def test_eq1_fails_without_sqrt():
    """The same property must fail when δ is computed as ``2 - 2t`` (no square root)."""
    must_fail(embeddings_and_threshold(min_n=2, max_n=12, min_t=0.5, max_t=0.99, spread=2.0), prop_decisions, lambda t: 2 - 2 * t)


@given(thresholds(-1.0, 1.0))
def test_delta_roundtrip_and_monotone(t):
    """``t -> δ -> t`` round-trips (to 1e-12) and δ decreases in t. Shown to fail on
    ``δ = sqrt(2 - t)`` (tried by hand: the roundtrip is off by t/2)."""
    d = delta_from_t(t)
    assert 0.0 <= d <= 2.0, f"delta={d!r} outside [0, 2] for t={t!r}"
    assert abs(t_from_delta(d) - t) <= 1e-12, f"roundtrip t={t!r} -> delta={d!r} -> {t_from_delta(d)!r}"
    t2 = min(1.0, t + 1e-3)
    if t2 > t:
        assert delta_from_t(t2) < d, f"delta not decreasing between t={t!r} and {t2!r}"


@pytest.mark.parametrize(
    "t, expected",
    [(0.95, 0.31622776601683794), (0.99, 0.1414213562373095), (0.9, 0.4472135954999579), (0.0, math.sqrt(2)), (1.0, 0.0), (-1.0, 2.0)],
)
def test_delta_values_by_hand(t, expected):
    """δ at hand-computed points: sqrt(0.1), sqrt(0.02), sqrt(0.2), sqrt(2), 0, 2 (§2.3: 0.316 at 0.95)."""
    assert math.isclose(delta_from_t(t), expected, rel_tol=0, abs_tol=1e-15), f"delta({t}) = {delta_from_t(t)!r}, expected {expected!r}"


@given(st.floats(0.0, math.pi), st.integers(2, 64))
def test_identity_for_exact_float64_unit_vectors(theta, dim):
    """On float64 unit vectors at angle θ the identity holds to round-off: ``sq = 2 - 2cos θ``.
    Shown to fail on ``2 - cos θ`` (tried by hand)."""
    a = np.zeros(dim)
    a[0] = 1.0
    b = np.zeros(dim)
    b[0], b[1] = math.cos(theta), math.sin(theta)
    sq = float(((a - b) ** 2).sum())
    assert abs(sq - (2 - 2 * math.cos(theta))) <= 1e-15 * 8, f"sq={sq!r} vs 2-2cos={2 - 2 * math.cos(theta)!r}"


# ------------------------------------------------------------------------------------------------
# EQ1's row of ``lam-ref verify`` (:mod:`lam_ref.claims.eq1`): its measure on all pairs and on a sample.
# ------------------------------------------------------------------------------------------------


@pytest.mark.claim("EQ1")
def test_eq1_residuals_on_all_pairs_and_on_a_sample():
    """All ``n(n-1)/2`` pairs when there are at most ``max_pairs`` (inclusive), else ``max_pairs``
    random pairs less those with ``i = j``; a pair on the threshold's either side is decided
    alike by both rules; fewer than two rows give no pair."""
    from lam_ref.theory import eq1_residuals

    e = _arc(0.0, 0.1, 0.2, 0.3)
    full = eq1_residuals(e, CHAIN_T, max_pairs=6)
    assert (full["pairs"], full["disagreements"], full["within_slack"]) == (6, 0, True), f"{full}"
    assert 0 <= full["max_residual"] <= full["slack"] < 1e-6, f"{full}"
    for seed in range(10):
        sampled = eq1_residuals(e, CHAIN_T, max_pairs=5, seed=seed)
        rng = np.random.default_rng(seed)
        i, j = rng.integers(0, 4, size=5), rng.integers(0, 4, size=5)
        assert sampled["pairs"] == int(np.sum(i != j)), f"seed {seed}: {sampled} vs {int(np.sum(i != j))}"
    assert eq1_residuals(e[:1], CHAIN_T) == {"pairs": 0, "max_residual": 0.0, "slack": 0.0, "disagreements": 0,
                                            "within_slack": True}, "one row: no pair"
    m = REG["EQ1"].measure(_ctx(e, CHAIN_T, seed=1)).values
    assert m == eq1_residuals(e.astype(np.float32), CHAIN_T, seed=1), f"{m}"
    holds = REG["EQ1"].holds
    assert holds({"disagreements": 0, "within_slack": True}) is True, "no disagreement, within the slack"
    assert holds({"disagreements": 1, "within_slack": True}) is False, "a differing decision fails"
    assert holds({"disagreements": 0, "within_slack": False}) is False, "a residual beyond the slack fails"


@pytest.mark.claim("EQ1")
def test_eq1_samples_above_100000_pairs_with_the_seed():
    """448 rows have 100128 pairs, more than the default ``max_pairs``: 100000 pairs are drawn,
    with seed 0 by default; EQ1's measure draws them with the set's seed."""
    from lam_ref.theory import eq1_residuals

    rng = np.random.default_rng(0)
    e = rng.standard_normal((448, 4))
    e = (e / np.linalg.norm(e, axis=1, keepdims=True)).astype(np.float32)
    r0, r1 = eq1_residuals(e, 0.9, seed=0), eq1_residuals(e, 0.9, seed=1)
    draws = np.random.default_rng(1).integers(0, 448, size=(2, 100_000))
    assert r1["pairs"] == int(np.sum(draws[0] != draws[1])) != r0["pairs"], f"sampled, by the seed: {r0} {r1}"
    assert eq1_residuals(e, 0.9) == r0, "the default seed is 0"
    assert REG["EQ1"].measure(_ctx(e, 0.9, seed=1)).values == r1, "the measure uses the set's seed"
