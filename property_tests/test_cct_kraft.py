"""CCT-KRAFT (beyond the paper, generalizing Theorem 3's lower bound): if item sizes are lengths of
a uniquely decodable code (Σ 2^{-s_i} <= 1) then zero-error SELECT on "output X" costs Σ s_i >= n log2 n,
for every n (not only powers of two), while GEN needs n bits. Sizes are drawn as the depths of
random full binary trees (prefix codes); the SELECT budget is the exact matching optimum. A size
vector violating Kraft (all 1 bit) is shown to break the bound."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from lam_ref.cct.games import output_set_game
from lam_ref.cct.solvers import min_select_budget, zero_error_budget
from lam_ref.cct.theorems import kraft_lower_bound, kraft_sum

from ._support import must_fail

pytestmark = pytest.mark.claim("CCT-KRAFT")


@st.composite
def prefix_code_lengths(draw):
    """Leaf depths of a random full binary tree with 3-6 leaves (a complete prefix code)."""
    n = draw(st.integers(3, 6))
    depths = [1, 1]
    while len(depths) < n:
        i = draw(st.integers(0, len(depths) - 1))
        d = depths.pop(i)
        depths += [d + 1, d + 1]
    return depths


def prop_select_at_least_n_log_n(sizes) -> None:
    n = len(sizes)
    g = output_set_game(n, sizes=[float(s) for s in sizes])
    sel = min_select_budget(g).budget
    assert sel == pytest.approx(sum(sizes)), f"zero-error SELECT {sel} != sum of sizes {sum(sizes)}"
    assert sel >= kraft_lower_bound(n) - 1e-9, f"sizes {sizes}: SELECT {sel} < n log2 n = {kraft_lower_bound(n)}"
    assert zero_error_budget(g).variable_bits == n, "GEN needs n bits whatever the sizes"


@given(prefix_code_lengths())
def test_kraft_sizes_force_n_log_n(sizes):
    assert kraft_sum(sizes) <= 1 + 1e-12, f"drawn sizes {sizes} must satisfy Kraft"
    prop_select_at_least_n_log_n(sizes)
    assert sum(sizes) > len(sizes), "so SELECT > GEN for every n >= 3"


def test_non_kraft_sizes_break_it():
    must_fail(st.integers(3, 6).map(lambda n: [1] * n), prop_select_at_least_n_log_n, max_examples=5)


def test_equality_at_uniform_lengths():
    assert kraft_lower_bound(8) == pytest.approx(8 * 3), "n log2 n at n = 8"
    assert kraft_sum([math.log2(5)] * 5) == pytest.approx(1.0), "uniform lengths log2 n meet Kraft with equality"
