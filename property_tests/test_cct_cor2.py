"""CCT-COR2 (Context Compaction Theory, Corollary 2): SELECT algorithms are exactly the one-way
protocols whose message names a retained subset within the budget and whose answer depends only
on the retained values and the query.

Checked on random tiny games with random item sizes: (1) every SELECT algorithm, rewritten as the
protocol that sends the index of its retained multiset (fixed-length code over the affordable
multisets) and answers by the same decoder, has the same error on every input — played through
``play_select`` and ``play_gen``; (2) the SELECT optimum by exhaustive play of every selector and
decoder equals the assignment optimum (exhaustive and MILP) of :mod:`lam_ref.cct.solvers`;
(3) SELECT at message length ⌈log2 #multisets⌉ never beats GEN at that length. A message that
does not identify the retained subset is shown to break (1)."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from lam_ref.cct.games import (
    Game,
    GenAlgorithm,
    SelectAlgorithm,
    best_by_play,
    error_table,
    retained_values,
)
from lam_ref.cct.solvers import distributional_optimum, select_distributional_optimum, select_options

from ._support import must_fail

pytestmark = pytest.mark.claim("CCT-COR2")


@st.composite
def tiny_select(draw):
    """Inputs: 2-3 subsets of items {0,1,2} (as tuples); one query; answers 0/1 from a random
    table; item sizes 1-2; budget 0-3; a random selector choice per input."""
    n_in = draw(st.integers(2, 3))
    masks = draw(st.lists(st.integers(0, 7), min_size=n_in, max_size=n_in, unique=True))
    inputs = tuple(tuple(i for i in range(3) if m >> i & 1) for m in masks)
    answers = draw(st.lists(st.integers(0, 1), min_size=n_in, max_size=n_in))
    sizes = draw(st.lists(st.integers(1, 2), min_size=3, max_size=3))
    budget = draw(st.integers(0, 3))
    table = dict(zip(inputs, answers))
    game = Game(inputs, ("q",), (0, 1), lambda x, q, a: 1.0 if a == table[x] else 0.0,
                sizes={i: float(s) for i, s in enumerate(sizes)}, name="tiny-select")
    seeds = draw(st.lists(st.integers(0, 10**6), min_size=n_in, max_size=n_in))
    return game, budget, seeds


def as_protocol(game: Game, alg: SelectAlgorithm, budget: float) -> tuple[GenAlgorithm, int]:
    """Corollary 2's direction SELECT -> protocol: Alice sends the index of the retained multiset."""
    _, retained = select_options(game, budget)
    width = max(1, math.ceil(math.log2(len(retained)))) if len(retained) > 1 else 0
    index = {v: i for i, v in enumerate(retained)}

    def condenser(x):
        i = index[retained_values(x, alg.selector(x))]
        return format(i, f"0{width}b") if width else ""

    def interpreter(msg, q):
        return alg.decoder(retained[int(msg, 2) if msg else 0], q)

    return GenAlgorithm(condenser, interpreter), width


def random_select(game: Game, budget: float, seeds) -> SelectAlgorithm:
    options = []
    for x, s in zip(game.inputs, seeds):
        opts = [pos for k in range(len(x) + 1) for pos in itertools.combinations(range(len(x)), k)
                if game.cost(retained_values(x, pos)) <= budget]
        options.append(opts[s % len(opts)])
    smap = dict(zip(game.inputs, options))
    return SelectAlgorithm(lambda x: smap[x], lambda values, q: (len(values) + sum(values)) % 2)


def prop_same_errors(example, to_protocol) -> None:
    game, budget, seeds = example
    alg = random_select(game, budget, seeds)
    proto, width = to_protocol(game, alg, budget)
    sel = error_table(game, alg, budget)
    gen = error_table(game, proto, width)
    assert np.array_equal(sel, gen), f"SELECT errors {sel.ravel()} != protocol errors {gen.ravel()}"


def lossy_protocol(game: Game, alg: SelectAlgorithm, budget: float) -> tuple[GenAlgorithm, int]:
    """Broken: sends only the low bit of the retained multiset's index (does not identify S)."""
    proto, width = as_protocol(game, alg, budget)
    _, retained = select_options(game, budget)
    index = {v: i for i, v in enumerate(retained)}

    def condenser(x):
        return format(index[retained_values(x, alg.selector(x))] % 2, "01b")

    return GenAlgorithm(condenser, lambda m, q: alg.decoder(retained[int(m, 2)], q)), 1


@given(tiny_select())
def test_select_equals_subset_encoding_protocol(example):
    prop_same_errors(example, as_protocol)


def test_a_message_that_does_not_name_the_subset_breaks_it():
    must_fail(tiny_select(), prop_same_errors, lossy_protocol)


@given(tiny_select())
def test_select_optimum_by_play_equals_solvers(example):
    game, budget, _ = example
    played, _ = best_by_play(game, None, budget, "select")
    ex = select_distributional_optimum(game, None, budget)
    mi = select_distributional_optimum(game, None, budget, method="milp")
    assert abs(played - ex.error) < 1e-9, f"play {played} != exhaustive {ex.error}"
    assert abs(ex.error - mi.error) < 1e-7, f"exhaustive {ex.error} != milp {mi.error}"


@given(tiny_select())
def test_select_never_beats_gen_at_its_message_length(example):
    game, budget, _ = example
    _, retained = select_options(game, budget)
    width = (len(retained) - 1).bit_length()
    sel = select_distributional_optimum(game, None, budget).error
    gen = distributional_optimum(game, None, width).error
    assert gen <= sel + 1e-9, f"GEN at {width} bits errs {gen} > SELECT {sel}"
