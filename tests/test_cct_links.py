"""LAM in the games of Context Compaction Theory.

CCT-LAM: Algorithm 1 is an online SELECT strategy (kept chunks are a subset of X, decided from the
arrivals so far, their values are all the decoder sees) and its stubs are a side channel outside
SELECT that answers the count (multiplicity) query, which selection that drops a near-duplicate
cannot. CCT-COVER: the least zero-error GEN budget for "reconstruct a record within δ" is
log2 N(S, δ) (N from lam_ref.covering, checked against an exhaustive search over protocols), and a
2δ-packing (M(S, 2δ) at t' = 4t - 3) is a fooling set."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from lam_ref.cct.games import (
    Game,
    error_table,
    play_select,
    retained_values,
)
from lam_ref.cct.links import lam_select, lam_with_stubs, multiset_count_game, reconstruct_game
from lam_ref.cct.solvers import (
    bits_for_messages,
    min_select_budget,
    partitions,
    zero_error_budget,
)
from lam_ref.covering import covering_number, packing_number
from lam_ref.geometry import t_prime
from lam_ref.strategies import embeddings_and_threshold, tie_band_violations


def near_duplicate_table() -> np.ndarray:
    """Rows 0 and 1 within δ at t = 0.9 (cos 0.98); row 2 far from both."""
    a = np.array([1.0, 0.0, 0.0])
    b = np.array([0.98, np.sqrt(1 - 0.98**2), 0.0])
    c = np.array([0.0, 0.0, 1.0])
    return np.stack([a, b, c]).astype(np.float32)


@pytest.mark.claim("CCT-LAM")
def test_lam_is_an_online_select_strategy():
    e = near_duplicate_table()
    alg = lam_select(e, 0.9)
    g = multiset_count_game(3, 3)
    for x in g.inputs:
        pos = alg.selector(x)
        assert all(0 <= p < len(x) for p in pos) and len(set(pos)) == len(pos), f"positions {pos} of {x}"
        for cut in range(len(x) + 1):  # online: the decision on a prefix never changes later
            pre = [p for p in alg.selector(x[:cut])]
            assert pre == [p for p in pos if p < cut], f"prefix {x[:cut]} decided {pre}, full run {pos}"
        play_select(g, alg, float(len(x)), x, "count")  # a legal SELECT play (budget = all items)


@pytest.mark.claim("CCT-LAM")
def test_stubs_answer_count_where_selection_cannot():
    e = near_duplicate_table()
    g = multiset_count_game(3, 3)
    sel = lam_select(e, 0.9)
    x1, x2 = (0,), (0, 1)
    v1, v2 = retained_values(x1, sel.selector(x1)), retained_values(x2, sel.selector(x2))
    assert v1 == v2 == (0,), f"LAM keeps only chunk 0 on both inputs: {v1}, {v2}"
    # any decoder sees the same values on X1 and X2 but must answer 1 vs 2: one of them is wrong
    sel_err = error_table(g, sel, 3.0)
    assert sel_err.max() == 1.0, "pure selection miscounts some input"
    stubs = lam_with_stubs(e, 0.9)
    budget = max(len(stubs.condenser(x)) for x in g.inputs)
    gen_err = error_table(g, stubs, budget)
    assert gen_err.max() == 0.0, f"LAM + stubs must count every input exactly, errs on {np.flatnonzero(gen_err)}"
    assert min_select_budget(g).budget == pytest.approx(3.0), "zero-error SELECT keeps every item (3 items)"


@st.composite
def small_sets(draw):
    e, t = draw(embeddings_and_threshold(min_n=1, max_n=7))
    return e, t


def exhaustive_messages(game: Game) -> int:
    """Least number of blocks of a partition of the inputs in which each block has a common
    correct answer (the definition of a zero-error protocol, searched exhaustively)."""
    ok = game.value_table()[:, 0, :] >= 1.0
    r = ok.shape[0]
    for k in range(1, r + 1):
        for lab in partitions(r, k):
            if all(np.logical_and.reduce(ok[lab == b], axis=0).any() for b in range(k)):
                return k
    raise AssertionError("unreachable")


@pytest.mark.claim("CCT-COVER")
@settings(max_examples=25)
@given(small_sets())
def test_covering_number_is_the_zero_error_budget(data):
    e, t = data
    assume(not tie_band_violations(e, t) and not tie_band_violations(e, max(t_prime(t), -1.0)))
    g = reconstruct_game(e, t)
    n_cov = covering_number(e, t)
    z = zero_error_budget(g)
    brute = exhaustive_messages(g)
    assert n_cov.optimal, "MILP proves optimality on tiny sets"
    assert z.messages == brute == int(n_cov.value), f"messages {z.messages}, exhaustive {brute}, N = {n_cov.value}"
    assert (z.variable_bits, z.fixed_bits) == bits_for_messages(int(n_cov.value)), "log2 N(S, delta) budgets"
    tp = t_prime(t)
    pack = np.array([0]) if tp < -1.0 else packing_number(e, tp).witness  # 2δ > 2: one point packs
    ok = g.value_table()[:, 0, :] >= 1.0
    for i in pack:
        for j in pack:
            if i < j:
                assert not (ok[i] & ok[j]).any(), f"2delta-packing rows {i}, {j} share a valid answer"
    assert len(pack) <= z.messages, f"fooling set {len(pack)} > messages {z.messages}"


@pytest.mark.claim("CCT-COVER")
def test_reconstruct_game_worked_example():
    e = near_duplicate_table()
    g = reconstruct_game(e, 0.9)
    z = zero_error_budget(g)
    assert z.messages == 2 and z.variable_bits == 1 and z.fixed_bits == 1, f"{{0,1}} and {{2}}: 2 messages, {z}"
