"""COR3 (App. C.2, Corollary 3, eq. 4; App. I): two greedy passes bracket the δ-entropy:
``log2|R_greedy(2δ)| <= H_δ(S) = log2 N(S, δ) <= log2|R_greedy(δ)|``; and (App. I)
``M(S, 2δ) <= N(S, δ) <= M(S, δ)``. Also eq. 5: ``T(δ)`` <= the token weight greedy keeps."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from lam_ref.covering import (
    bracket_bits,
    covering_number,
    greedy_kept,
    packing_number,
    t_half,
    token_weighted_optimum,
)
from lam_ref.geometry import t_prime
from lam_ref.strategies import embeddings_and_threshold, tie_band_violations
from tests.datagen import CHAIN_T
from tests.datagen import arc as _arc

from ._support import REG, _bounded, _ctx, must_fail

pytestmark = pytest.mark.claim("COR3")

DATA = embeddings_and_threshold(min_n=1, max_n=40)


def prop_bracket(data, lower_t) -> None:
    """Exact ``H_δ`` (MILP) inside ``[log2|R_greedy(lower_t(t))|, log2|R_greedy(t)|]``, and
    ``M(S, 2δ) <= N(S, δ) <= M(S, δ)``; :func:`bracket_bits` reports the same numbers."""
    e, t = data
    tl = lower_t(t)
    if tl >= -1:
        assume(not tie_band_violations(e, tl))
    n_cov = covering_number(e, t)
    assert n_cov.optimal, "MILP must prove optimality"
    h = math.log2(n_cov.value)
    lo = math.log2(greedy_kept(e, tl).size)
    hi = math.log2(greedy_kept(e, t).size)
    assert lo <= h + 1e-12, f"lower {lo!r} > H_delta {h!r}"
    assert h <= hi + 1e-12, f"H_delta {h!r} > upper {hi!r}"
    if tl >= -1:
        assert packing_number(e, tl).value <= n_cov.value <= packing_number(e, t).value, "M(2d) <= N(d) <= M(d)"
    if lower_t is t_prime:
        b = bracket_bits(e, t)
        assert (b.lower_bits, b.upper_bits, b.exact_bits) == (lo, hi, h) and b.holds, f"bracket_bits {b}"


@given(DATA)
def test_bracket_contains_the_exact_entropy(data):
    """COR3 with exact N. Shown to fail when the lower pass runs at radius δ/2 instead of 2δ
    (:func:`test_cor3_fails_with_lower_pass_at_half_radius`)."""
    prop_bracket(data, t_prime)


def test_cor3_fails_with_lower_pass_at_half_radius():
    must_fail(DATA, prop_bracket, t_half)


@given(DATA, st.integers(0, 2**31))
def test_token_optimum_is_a_lower_bound_on_greedy_weight(data, seed):
    """Eq. 5: the exact min-weight covering ``T(δ)`` (MILP) is <= the weight greedy keeps and
    >= the weight of the lightest ``N(S, δ)`` rows. Shown to fail when T is computed on the δ/2
    graph instead of the δ graph (tried by hand: T then exceeds greedy's weight)."""
    e, t = data
    w = np.random.default_rng(seed).integers(1, 513, size=e.shape[0]).astype(float)
    res = token_weighted_optimum(e, t, weights=w)
    kept = greedy_kept(e, t)
    n_cov = int(covering_number(e, t).value)
    assert res.optimal, "MILP must prove optimality"
    assert res.value <= w[kept].sum() + 1e-9, f"T = {res.value} > greedy weight {w[kept].sum()}"
    assert res.value >= np.sort(w)[:n_cov].sum() - 1e-9, "T below the N lightest rows"


# ------------------------------------------------------------------------------------------------
# COR3's row of ``lam-ref verify`` (:mod:`lam_ref.claims.cor3`): its measure and rule at their edges.
# ------------------------------------------------------------------------------------------------


@pytest.mark.claim("COR3")
def test_cor3_measure_bits_and_tokens_on_the_chain():
    """COR3 on the chain: ``|R(2δ)| = 1``, ``|R| = 2``, ``N = 1`` of 3 rows, so bits 0, 1, 0 and
    log2 3; with weights ``[1, 5, 1]`` the cheapest δ-cover is rows 0 and 2 (2 tokens, as greedy's),
    of 7; without exactness or weights no token keys."""
    e = _arc(0.0, 0.1, 0.2)
    m = REG["COR3"].measure(_ctx(e, CHAIN_T, weights=[1.0, 5.0, 1.0])).values
    assert (m["n"], m["kept_2delta"], m["R"], m["N"]) == (3, 1, 2, 1), f"{m}"
    assert (m["lower_bits"], m["upper_bits"], m["exact_bits"]) == (0.0, 1.0, 0.0), f"{m}"
    assert m["lossless_bits"] == pytest.approx(np.log2(3)), f"{m}"
    assert (m["T_opt"], m["T_greedy"], m["T_all"]) == (2.0, 2.0, 7.0), f"{m}"
    assert REG["COR3"].holds(m) is True, f"{m}"
    cheap_middle = REG["COR3"].measure(_ctx(e, CHAIN_T, weights=[1.0, 0.5, 1.0])).values
    assert (cheap_middle["T_opt"], cheap_middle["T_greedy"]) == (0.5, 2.0), f"the middle row alone: {cheap_middle}"
    plain = REG["COR3"].measure(_ctx(e, CHAIN_T)).values
    assert "T_opt" not in plain, f"no weights: no T(δ): {plain}"
    inexact = REG["COR3"].measure(_ctx(e, CHAIN_T, weights=[1.0, 5.0, 1.0], exact_limit=2)).values
    assert "T_opt" not in inexact and inexact["N"] is None, f"n > exact_limit: no MILP: {inexact}"


@pytest.mark.claim("COR3")
def test_cor3_rule_each_inequality_counts():
    """``|R(2δ)| <= |R|``; with ``N``: ``|R(2δ)| <= N <= |R|``; with ``T(δ)``: ``T(δ) <= T_greedy``
    up to ``TOKEN_TOL``, inclusive."""
    from lam_ref.claims.cor3 import TOKEN_TOL

    holds = REG["COR3"].holds
    base = {"kept_2delta": 2, "R": 4, "N": 3}
    assert holds(base) is True and holds({**base, "N": None}) is True, "inside the bracket"
    assert holds({**base, "N": 2}) is True and holds({**base, "N": 4}) is True, "both ends inclusive"
    assert holds({**base, "N": 1}) is False, "N below |R(2δ)| fails"
    assert holds({**base, "N": 5}) is False, "N above |R| fails"
    assert holds({"kept_2delta": 5, "R": 4, "N": None}) is False, "|R(2δ)| above |R| fails without N"
    assert holds({"kept_2delta": 4, "R": 4, "N": None}) is True, "|R(2δ)| = |R| holds"
    tok = {**base, "T_greedy": 12.0}
    assert holds({**tok, "T_opt": 12.0 + TOKEN_TOL}) is True, "T(δ) = T_greedy + tol holds"
    assert holds({**tok, "T_opt": 12.0 + 1e-6}) is False, "T(δ) above T_greedy fails"
    assert holds({**tok, "T_opt": None}) is True, "an unsolved T(δ) is not checked"
    assert holds({"kept_2delta": 5, "R": 4, "N": None, "T_opt": 1.0, "T_greedy": 2.0}) is False, \
        "a T(δ) that holds does not hide a failed bracket"


@pytest.mark.claim("COR3")
def test_cor3_token_optimum_uses_the_time_limit_and_only_a_proven_value(monkeypatch):
    """COR3 passes the context's time limit to the ``T(δ)`` MILP (with no time at all on 60 rows
    the solver finds no solution and the error says so) and reports ``T(δ)`` only when proven
    optimal. The exact ``N`` is solved first without a limit; the unproven ``T(δ)`` is the record
    of a time-limited solve (a time-out with a solution cannot be produced deterministically)."""
    from lam_ref.claims import cor3
    from lam_ref.covering import covering_number
    from lam_ref.geometry import LamValueError

    rng = np.random.default_rng(0)
    e = rng.standard_normal((60, 8))
    e /= np.linalg.norm(e, axis=1, keepdims=True)
    ctx = _ctx(e, 0.3, weights=rng.uniform(1.0, 5.0, 60), time_limit=0.0)
    ctx.covering = covering_number(ctx.e, 0.3)
    with pytest.raises(LamValueError, match="token_weighted_optimum: the MILP solver returned no solution"):
        REG["COR3"].measure(ctx)
    monkeypatch.setattr(cor3, "token_weighted_optimum", lambda *a, **k: _bounded(2.0, 1.0, 2.0))
    m = REG["COR3"].measure(_ctx(_arc(0.0, 0.1, 0.2), CHAIN_T, weights=[1.0, 5.0, 1.0])).values
    assert m["T_opt"] is None and (m["T_greedy"], m["T_all"]) == (2.0, 7.0), f"an unproven T(δ) is not reported: {m}"
