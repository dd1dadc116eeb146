"""THM2 (App. C.3, Theorem 2, eqs. 6–7; Table 6): ``ρ*(δ) = 1 - N(S, δ)/|S| <= ρ_greedy(2δ)``,
where radius 2δ is the threshold ``t' = 4t - 3``."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from lam_ref.covering import covering_number, greedy_ceiling, greedy_kept, packing_number
from lam_ref.geometry import delta_sq, t_prime
from lam_ref.strategies import embeddings_and_threshold, stars, thresholds, tie_band_violations

from ._support import must_fail

pytestmark = pytest.mark.claim("THM2")

DATA = st.one_of(embeddings_and_threshold(min_n=1, max_n=40), stars().map(lambda s: (s[0], s[1])))


def prop_ceiling(data, ceiling_t) -> None:
    """Exact ``ρ*`` (MILP) <= the greedy removal at threshold ``ceiling_t(t)``; the packing at
    2δ is no larger than N (the injection of the proof)."""
    e, t = data
    tc = ceiling_t(t)
    if tc >= -1:
        assume(not tie_band_violations(e, tc))
    n = e.shape[0]
    cov = covering_number(e, t)
    assert cov.optimal, "MILP must prove optimality"
    rho_star = 1 - cov.value / n
    rho_ceiling = 1 - greedy_kept(e, tc).size / n
    assert rho_star <= rho_ceiling + 1e-15, f"rho* = {rho_star!r} > ceiling {rho_ceiling!r}"
    if tc >= -1:
        assert packing_number(e, tc).value <= cov.value, "M(S, 2 delta) must not exceed N(S, delta)"


@given(DATA)
def test_removal_ceiling_with_exact_optimum(data):
    """THM2 on clustered sets and stars. Shown to fail when the "ceiling" is the greedy pass at
    δ itself (:func:`test_thm2_fails_for_a_ceiling_at_delta`): stars with the centre last."""
    prop_ceiling(data, t_prime)


def test_thm2_fails_for_a_ceiling_at_delta():
    must_fail(stars(centre_first=False).map(lambda s: (s[0], s[1])), prop_ceiling, lambda t: t)


@given(thresholds(-1.0, 1.0))
def test_t_prime_is_the_radius_two_delta(t):
    """``2 - 2t' = 4(2 - 2t)`` (so ``sqrt(2-2t') = 2δ``) to round-off, for ``t' = 4t - 3``.
    Shown to fail on ``t' = 2t - 1`` (tried by hand: radius sqrt(2)δ)."""
    tp = t_prime(t)
    assert abs((2 - 2 * tp) - 4 * delta_sq(t)) <= 1e-14, f"t'={tp!r} is not radius 2 delta for t={t!r}"


@given(embeddings_and_threshold(min_n=1, max_n=24))
def test_greedy_ceiling_report(data):
    """:func:`greedy_ceiling` reports attained <= optimum <= ceiling and the two fractions; the
    values are recomputed here from the primitive counts."""
    e, t = data
    c = greedy_ceiling(e, t)
    n = e.shape[0]
    assert c.kept == greedy_kept(e, t).size and c.kept_2delta == greedy_kept(e, t_prime(t)).size, "counts"
    assert c.optimum is not None and abs(c.optimum - (1 - covering_number(e, t).value / n)) < 1e-15, "optimum"
    assert c.attained <= c.optimum + 1e-15 <= c.ceiling + 2e-15, f"{c.attained} <= {c.optimum} <= {c.ceiling}"
    if c.ceiling > 0:
        assert abs(c.attained_of_ceiling - c.attained / c.ceiling) < 1e-15, "attained fraction of the ceiling"


def test_table6_t_prime_values():
    """Table 6: t = 0.99, 0.95, 0.90 give t' = 0.96, 0.80, 0.60 (hand arithmetic 4t - 3)."""
    for t, tp in [(0.99, 0.96), (0.95, 0.80), (0.90, 0.60)]:
        assert abs(t_prime(t) - tp) < 1e-12, f"t'({t}) = {t_prime(t)!r}, Table 6 says {tp}"


def test_star_attained_fraction_of_the_exact_optimum():
    """A star with the centre last (6 leaves): greedy keeps the 6 leaves (the centre merges
    into leaf 0), removing 1/7; the optimum (keep the centre) removes 6/7; the 2δ ceiling is 6/7
    (every row within 2δ of leaf 0): attained fraction 1/6 of both (by hand)."""
    d = 7
    q, _ = np.linalg.qr(np.random.default_rng(3).standard_normal((d, 7)))
    t = 0.95
    cos_t = 1 - delta_sq(t) / 2 * 0.9  # leaves at chord^2 = 0.9 delta² from the centre
    theta = np.arccos(cos_t)
    leaves = [np.cos(theta) * q[:, 0] + np.sin(theta) * q[:, j] for j in range(1, 7)]
    e = np.array([*leaves, q[:, 0]], dtype=np.float32)
    c = greedy_ceiling(e, t)
    assert (c.kept, c.covering, c.kept_2delta) == (6, 1, 1), f"kept/N/kept_2delta = {c.kept}, {c.covering}, {c.kept_2delta}"
    assert abs(c.attained - 1 / 7) < 1e-15 and abs(c.optimum - 6 / 7) < 1e-15, "removal 1/7 vs optimum 6/7"
    assert abs(c.attained_of_optimum - 1 / 6) < 1e-12, f"attained fraction {c.attained_of_optimum!r} != 1/6"
    assert abs(c.attained_of_ceiling - 1 / 6) < 1e-12, f"fraction of ceiling {c.attained_of_ceiling!r} != 1/6"
