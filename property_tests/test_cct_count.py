"""CCT-COUNT (beyond the paper): for the query "count |X|" over subsets X of n items, zero-error
GEN needs ⌈log2(n+2)⌉ - 1 bits (n + 1 distinct rows) while zero-error SELECT must keep every item,
whatever the item sizes. The SELECT side is the exact ILP (inputs with equal counts may share a
retained set; a retained set serves one count), run on random sizes."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from lam_ref.cct.games import SelectAlgorithm, count_game, error_table
from lam_ref.cct.solvers import min_select_budget, zero_error_budget
from lam_ref.cct.theorems import count_gen_budget

pytestmark = pytest.mark.claim("CCT-COUNT")


@given(st.integers(1, 4).flatmap(lambda n: st.lists(st.integers(1, 5), min_size=n, max_size=n)))
def test_select_keeps_everything_gen_needs_log(sizes):
    n = len(sizes)
    g = count_game(n, sizes=[float(s) for s in sizes])
    sel = min_select_budget(g)
    assert sel.budget == pytest.approx(sum(sizes)), f"zero-error SELECT {sel.budget} != keep-all {sum(sizes)}"
    z = zero_error_budget(g)
    assert z.rows == n + 1, f"count has n + 1 = {n + 1} distinct rows, got {z.rows}"
    assert z.variable_bits == count_gen_budget(n) == math.ceil(math.log2(n + 2)) - 1, (
        f"GEN {z.variable_bits} != ceil(log2(n+2)) - 1"
    )


def test_n5_default_sizes():
    g = count_game(5)
    assert min_select_budget(g).budget == pytest.approx(5 * math.log2(5)), "n=5: keep all five items"
    assert zero_error_budget(g).variable_bits == 2, "n=5: 6 rows need 2 variable-length bits"


def test_dropping_one_item_errs():
    """Played: a selector that drops one item of the full set (the budget one item short) errs."""
    g = count_game(3, sizes=[1.0, 1.0, 1.0])
    alg = SelectAlgorithm(lambda x: list(range(min(len(x), 2))), lambda v, q: len(v))
    err = error_table(g, alg, 2.0)
    assert err.max() == 1.0 and err[-1, 0] == 1.0, "the full input must be miscounted"
