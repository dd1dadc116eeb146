"""The games of Context Compaction Theory (§3) and their conventions, and bad input everywhere in
lam_ref.cct: a clear LamValueError naming the argument (budget < 0, n not a power of two, ε outside
[0, 1), an instance too large for an exact solver with the limit and the method to use instead)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from lam_ref.cct.bloom import BloomFilter, bloom_fpr
from lam_ref.cct.games import (
    Game,
    GenAlgorithm,
    Mixture,
    SelectAlgorithm,
    best_by_play,
    count_game,
    error_table,
    function_game,
    membership_game,
    message_count,
    output_set_game,
    play_gen,
    play_select,
)
from lam_ref.cct.solvers import (
    distributional_optimum,
    min_select_budget,
    select_distributional_optimum,
    worst_case_optimum,
    zero_error_budget,
)
from lam_ref.cct.theorems import thm3_gen_budget, thm3_select_budget, thm3_select_error, validate_epsilon
from lam_ref.geometry import LamValueError


def test_message_space_counts_the_empty_message():
    assert message_count(0) == 1 and message_count(1) == 3 and message_count(3) == 15, "2^{B+1} - 1 messages"


def test_select_decoder_sees_only_sorted_values():
    """The decoder gets the retained values sorted (order and positions lost, multiplicity kept)."""
    seen = []
    g = Game(inputs=(("b", "a", "a"),), queries=("q",), outputs=(0,), value=lambda x, q, a: 1.0)
    alg = SelectAlgorithm(lambda x: [0, 1, 2], lambda v, q: seen.append(v) or 0)
    play_select(g, alg, 3, ("b", "a", "a"), "q")
    assert seen == [("a", "a", "b")], f"decoder saw {seen}"


def test_gen_interpreter_sees_only_message_and_query():
    got = []
    g = function_game(np.array([[0], [1]]))
    alg = GenAlgorithm(lambda x: "1" if x == ("x1",) else "", lambda m, q: got.append((m, q)) or len(m))
    assert error_table(g, alg, 1).max() == 0.0, "the 1-bit protocol is exact on a 2-row function"
    assert got == [("", 0), ("1", 0)], f"interpreter calls {got}"


def test_budgets_are_enforced():
    g = count_game(2, sizes=[1.0, 1.0])
    with pytest.raises(LamValueError, match="exceeds the budget"):
        play_select(g, SelectAlgorithm(lambda x: list(range(len(x))), lambda v, q: len(v)), 1, (0, 1), "count")
    with pytest.raises(LamValueError, match="exceeds the budget 1"):
        play_gen(g, GenAlgorithm(lambda x: "00", lambda m, q: 0), 1, (0,), "count")
    with pytest.raises(LamValueError, match="0/1 string"):
        play_gen(g, GenAlgorithm(lambda x: "2", lambda m, q: 0), 1, (0,), "count")
    with pytest.raises(LamValueError, match="invalid positions"):
        play_select(g, SelectAlgorithm(lambda x: [5], lambda v, q: 0), 9, (0,), "count")


def test_mixture_averages_errors():
    g = function_game(np.array([[0], [1]]))
    right = GenAlgorithm(lambda x: "1" if x == ("x1",) else "0", lambda m, q: int(m))
    wrong = GenAlgorithm(lambda x: "", lambda m, q: 0)
    err = error_table(g, Mixture(((0.25, right), (0.75, wrong))), 1)
    assert err[:, 0].tolist() == [0.0, 0.75], f"mixture errors {err.ravel()}"
    with pytest.raises(LamValueError, match="weights"):
        Mixture(((0.5, right),))


@pytest.mark.parametrize(
    "call, match",
    [
        (lambda: message_count(-1), "budget must be >= 0"),
        (lambda: distributional_optimum(function_game(np.eye(2, dtype=int)), None, -2), "budget must be >= 0"),
        (lambda: select_distributional_optimum(count_game(2), None, -0.5), "budget must be a finite number >= 0"),
        (lambda: thm3_select_error(4, -1), "budget"),
        (lambda: thm3_gen_budget(6, 0), "n must be a power of two"),
        (lambda: thm3_select_budget(2, 0), "n must be a power of two"),
        (lambda: thm3_gen_budget(8, 1.0), r"eps must be in \[0, 1\)"),
        (lambda: thm3_gen_budget(8, -0.1), r"eps must be in \[0, 1\)"),
        (lambda: validate_epsilon(float("nan")), "eps must be a finite"),
        (lambda: output_set_game(11), "too large for an explicit game"),
        (lambda: membership_game(10, 5), "exceeds the toy limit"),
        (lambda: worst_case_optimum(function_game(np.arange(10).reshape(10, 1)), 2), "LP_PARTITION_LIMIT"),
        (lambda: distributional_optimum(function_game(np.arange(14).reshape(14, 1)), None, 2),
         "EXHAUSTIVE_LIMIT.*milp"),
        (lambda: best_by_play(function_game(np.arange(6).reshape(6, 1)), None, 2, "gen"), "play limit"),
        (lambda: distributional_optimum(function_game(np.eye(2, dtype=int)), np.ones((2, 2)), 0), "mu must be"),
        (lambda: BloomFilter(0, 1), "m must be a positive integer"),
        (lambda: bloom_fpr(-1, 10, 2), "m must be a finite number > 0"),
    ],
)
def test_bad_input_names_the_argument(call, match):
    with pytest.raises(LamValueError, match=match):
        call()


def test_no_zero_error_protocol_is_reported():
    g = Game(inputs=(("a",),), queries=("q",), outputs=(0,), value=lambda x, q, a: 0.5)
    with pytest.raises(LamValueError, match="no answer of value 1"):
        zero_error_budget(g)


def test_relation_zero_error_by_set_cover():
    """Single query, several correct answers: messages = least answers covering every input.
    Inputs 0,1,2 with correct answers {0,1}, {1,2}, {2}: answers 1 and 2 cover all -> 2 messages."""
    ok = {0: {0, 1}, 1: {1, 2}, 2: {2}}
    g = Game(inputs=((0,), (1,), (2,)), queries=("q",), outputs=(0, 1, 2),
             value=lambda x, q, a: 1.0 if a in ok[x[0]] else 0.0)
    z = zero_error_budget(g)
    assert (z.messages, z.variable_bits, z.fixed_bits) == (2, 1, 1), f"{z}"


def test_min_select_budget_with_shared_rows_uses_ilp():
    """Count over subsets of {0,1,2}: rows repeat (inputs of equal size), so it is the ILP."""
    r = min_select_budget(count_game(3, sizes=[1.0, 2.0, 3.0]))
    assert r.budget == pytest.approx(6.0) and r.method == "ilp", f"{r}"


def test_output_set_default_sizes_are_log2_n():
    g = output_set_game(8)
    assert g.size(0) == pytest.approx(3.0) and g.cost((0, 1)) == pytest.approx(6.0), "log2 8 bits per item"
    assert math.isclose(thm3_select_error(8, 24), 0.0), "keep all 8 items at 24 bits"
