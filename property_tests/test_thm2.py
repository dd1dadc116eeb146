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
from tests.datagen import CHAIN_T
from tests.datagen import arc as _arc

from ._support import REG, _ctx, must_fail

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


# ------------------------------------------------------------------------------------------------
# THM2's row of ``lam-ref verify`` (:mod:`lam_ref.claims.thm2`): its measure, rates and rule at their edges.
# ------------------------------------------------------------------------------------------------


@pytest.mark.claim("THM2")
def test_thm2_rule_bounds_are_inclusive_and_the_optimum_counts_only_when_solved():
    """``attained <= ceiling``; with ``N`` solved also ``attained <= ρ* <= ceiling`` (tolerances
    ``RATE_TOL`` and ``2·RATE_TOL``, inclusive); with ``N`` unknown only the first."""
    from lam_ref.claims.thm2 import RATE_TOL

    holds = REG["THM2"].holds
    r = RATE_TOL
    assert holds({"n": 4, "N": None, "optimum": None, "attained": 0.5 + r, "ceiling": 0.5}) is True, "attained = ceiling + tol holds"
    assert holds({"n": 4, "N": None, "optimum": None, "attained": 0.75, "ceiling": 0.5}) is False, "attained above the ceiling fails"
    assert holds({"n": 4, "N": 1, "optimum": 0.25, "attained": 0.25 + r, "ceiling": 0.5}) is True, "attained = ρ* + tol holds"
    assert holds({"n": 4, "N": 1, "optimum": r, "attained": 0.0, "ceiling": 0.0}) is True, "ρ* + tol = ceiling + 2 tol holds"
    assert holds({"n": 4, "N": 1, "optimum": 1.5 * r, "attained": 0.0, "ceiling": 0.0}) is False, "ρ* beyond ceiling + tol fails"
    assert holds({"n": 4, "N": 1, "optimum": 0.5, "attained": 0.2, "ceiling": 0.25}) is False, "ρ* above the ceiling fails"
    assert holds({"n": 4, "N": 1, "optimum": 0.25, "attained": 0.4, "ceiling": 0.5}) is False, "attained above ρ* fails"
    assert holds({"n": 4, "N": 1, "optimum": 0.5 + 0.9 * r, "attained": 0.5 + 1.5 * r, "ceiling": 0.5}) is False, \
        "attained above the ceiling fails even when the ρ* chain holds"


@pytest.mark.claim("THM2")
def test_thm2_rates_from_the_counts():
    """THM2's rates: removed ``1 - kept/n``, ceiling ``1 - kept(2δ)/n``, optimum ``1 - N/n``, and
    the attained share of each (``None`` where the denominator is 0 or ``N`` is unknown)."""
    from lam_ref.claims.thm2 import rates

    m = {"n": 10, "kept": 4, "kept_2delta": 2, "N": 3}
    rates(m)
    assert (m["attained"], m["ceiling"], m["optimum"]) == pytest.approx((0.6, 0.8, 0.7)), f"{m}"
    assert m["attained_of_ceiling"] == pytest.approx(0.75) and m["attained_of_optimum"] == pytest.approx(0.6 / 0.7), f"{m}"
    z = {"n": 4, "kept": 4, "kept_2delta": 4, "N": 4}
    rates(z)
    assert (z["attained_of_ceiling"], z["attained_of_optimum"]) == (None, None), f"nothing removable: no share: {z}"
    u = {"n": 4, "kept": 2, "kept_2delta": 1, "N": None}
    rates(u)
    assert (u["optimum"], u["attained_of_optimum"]) == (None, None) and u["attained_of_ceiling"] == pytest.approx(2 / 3), f"{u}"


@pytest.mark.claim("THM2")
def test_thm2_measure_counts_on_the_chain():
    """THM2 on the chain: ``t' = 4t - 3``, ``n = 3``, greedy keeps 2, at ``2δ`` 1, ``N(δ) = 1``;
    so removed 1/3, ceiling and optimum 2/3 (and it holds)."""
    m = REG["THM2"].measure(_ctx(_arc(0.0, 0.1, 0.2), CHAIN_T)).values
    assert m["t_prime"] == pytest.approx(4 * CHAIN_T - 3, abs=1e-15), f"{m}"
    assert (m["n"], m["kept"], m["kept_2delta"], m["N"]) == (3, 2, 1, 1), f"{m}"
    assert (m["attained"], m["ceiling"], m["optimum"]) == pytest.approx((1 / 3, 2 / 3, 2 / 3)), f"{m}"
    assert REG["THM2"].holds(m) is True, f"{m}"


@pytest.mark.claim("THM2")
def test_thm2_rates_share_of_the_ceiling_only_when_positive():
    """A zero ceiling gives no share (``None``) whatever ``N``; a positive one gives the ratio."""
    from lam_ref.claims.thm2 import rates

    m = {"n": 4, "kept": 4, "kept_2delta": 4, "N": None}
    rates(m)
    assert (m["attained"], m["ceiling"], m["attained_of_ceiling"], m["optimum"], m["attained_of_optimum"]) == \
        (0.0, 0.0, None, None, None), f"{m}"
    m = {"n": 8, "kept": 6, "kept_2delta": 4, "N": 8}
    rates(m)
    assert (m["attained_of_ceiling"], m["optimum"], m["attained_of_optimum"]) == (0.5, 0.0, None), f"{m}"


@pytest.mark.claim("THM2")
def test_thm2_says_why_the_optimum_is_missing_and_the_table_shows_it():
    """Issue 23 §6: above ``exact_limit`` THM2 has no exact ``N``; its note says so, and
    ``verify``'s table row carries the note (not only the JSON)."""
    from lam_ref.claims._base import ClaimResult
    from lam_ref.verify import table_rows

    exact = REG["THM2"].measure(_ctx(_arc(0.0, 0.1, 0.2), CHAIN_T))
    assert exact.values["N"] == 1 and exact.note == "", f"solved: N known, no note: {exact}"
    inexact = REG["THM2"].measure(_ctx(_arc(0.0, 0.1, 0.2), CHAIN_T, exact_limit=2))
    assert inexact.values["N"] is None and inexact.note == "n > 2: exact N skipped", f"{inexact}"
    row = table_rows([ClaimResult("THM2", True, inexact.values, inexact.note)])[0]
    assert "[n > 2: exact N skipped]" in row[1], f"the table names the reason: {row}"
