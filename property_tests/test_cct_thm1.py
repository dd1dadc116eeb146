"""CCT-THM1 (Context Compaction Theory, Theorem 1): the least GEN budget at error ε equals the
one-way communication complexity of the induced problem — in the distributional regime and,
with public coins, in the worst case; and worst case >= distributional for every μ.

Checked on random tiny functions: the *game* optimum (every condenser map and every interpreter
table played through :func:`lam_ref.cct.games.play_gen`) equals the *protocol* optimum computed
from the value table alone (:func:`lam_ref.cct.solvers.distributional_optimum`, partitions and
MILP); the worst-case LP is >= the distributional optimum for every drawn μ and equals it at the
LP's dual μ* (minimax). A solver with fixed-length messages (2^B instead of 2^{B+1} - 1) is shown
to break the equality."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from lam_ref.cct.games import best_by_play, function_game
from lam_ref.cct.solvers import _best_response_errors, distributional_optimum, partitions, worst_case_optimum

from ._support import must_fail

pytestmark = pytest.mark.claim("CCT-THM1")


@st.composite
def tiny(draw, max_r: int = 3):
    """A function f: [r] x [c] -> [a] (r <= 3, c <= 2, a <= 3), a distribution mu, a budget B."""
    r = draw(st.integers(1, max_r))
    c = draw(st.integers(1, 2))
    a = draw(st.integers(2, 3 if c == 1 else 2))
    f = np.array(draw(st.lists(st.integers(0, a - 1), min_size=r * c, max_size=r * c)), dtype=np.int64).reshape(r, c)
    weights = np.array(draw(st.lists(st.integers(0, 4), min_size=r * c, max_size=r * c)), dtype=np.float64)
    if weights.sum() == 0:
        weights[0] = 1.0
    budget = draw(st.integers(0, 1))
    return f, (weights / weights.sum()).reshape(r, c), budget


def prop_game_equals_protocol(example, solve) -> None:
    f, mu, budget = example
    g = function_game(f)
    game_opt, _ = best_by_play(g, mu, budget, "gen")
    proto = solve(g, mu, budget)
    assert abs(game_opt - proto) < 1e-9, f"game optimum {game_opt} != protocol optimum {proto} (f={f.tolist()}, B={budget})"


def protocol(g, mu, budget):
    return distributional_optimum(g, mu, budget).error


def fixed_length_protocol(g, mu, budget):
    """Broken: counts 2^B messages (fixed length) instead of 2^{B+1} - 1."""
    w = mu[:, :, None] * g.value_table()
    k = min(2**budget, w.shape[0])
    errs, _ = _best_response_errors(w, partitions(w.shape[0], k), k)
    return float(errs.min())


@given(tiny())
def test_game_optimum_equals_protocol_optimum(example):
    prop_game_equals_protocol(example, protocol)


def test_fixed_length_messages_break_the_equality():
    must_fail(tiny(), prop_game_equals_protocol, fixed_length_protocol)


@given(tiny(max_r=5))
def test_exhaustive_equals_milp(example):
    f, mu, budget = example
    g = function_game(f)
    ex = distributional_optimum(g, mu, budget)
    mi = distributional_optimum(g, mu, budget, method="milp")
    assert mi.optimal, "MILP must prove optimality on tiny games"
    assert abs(ex.error - mi.error) < 1e-7, f"exhaustive {ex.error} != milp {mi.error} for f={f.tolist()}"


@given(tiny(max_r=4))
def test_worst_case_dominates_distributional_and_minimax(example):
    f, mu, budget = example
    g = function_game(f)
    wc = worst_case_optimum(g, budget)
    dist = distributional_optimum(g, mu, budget).error
    assert wc.error >= dist - 1e-9, f"worst case {wc.error} < distributional {dist} under mu={mu.tolist()}"
    hard = distributional_optimum(g, wc.mu, budget).error
    assert abs(hard - wc.error) < 1e-7, f"at the LP's dual mu*, distributional {hard} != worst case {wc.error}"


def test_worked_example_by_hand():
    """f = equality on 2-bit strings (4 inputs x 4 queries): 4 distinct rows, so zero error needs
    2 variable-length bits; with B = 0 (one message) Bob guesses "not equal" and errs on the
    diagonal, 1/4 under uniform mu."""
    f = np.eye(4, dtype=np.int64)
    g = function_game(f)
    assert distributional_optimum(g, None, 0).error == pytest.approx(0.25), "B=0: error must be 4/16"
    assert distributional_optimum(g, None, 2).error == pytest.approx(0.0), "B=2: 7 messages >= 4 rows"
    assert worst_case_optimum(g, 0).error == pytest.approx(0.5), "B=0 worst case: a coin between yes and no"
