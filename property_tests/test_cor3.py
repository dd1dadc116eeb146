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

from ._support import must_fail

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
