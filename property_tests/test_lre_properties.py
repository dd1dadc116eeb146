"""LRE's retention rule and metrics (seed 003 §3.1, Algorithm 3, App. E.1; SPEC §16), structural
properties on generated scores, costs and budgets:

* the budget is respected (the unpinned kept units cost at most ``B``), pinned units are kept;
* the output is verbatim and chronological (on generated trajectories through :func:`lre`);
* with unit costs, budget-greedy by ``p_i / c_i`` is top-``K`` with ``K = B`` (exact with
  :class:`fractions.Fraction`, ties: the larger index);
* with equal costs, the kept set is invariant to a strictly increasing transform of ``p``;
* AUC with ties counting ½ equals the Mann–Whitney ``U`` over ``P·N`` (``scipy.stats``).
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest
import scipy.stats
from hypothesis import assume, given
from hypothesis import strategies as st

from lam_ref.peers import lre as R
from lam_ref.text.chunking import get_tokenizer
from lam_ref.text.records import Record, Trajectory

from ._support import must_fail

fractions = st.fractions(min_value=0, max_value=1, max_denominator=12)


@st.composite
def problems(draw, unit_costs: bool = False):
    n = draw(st.integers(1, 12))
    p = draw(st.lists(fractions, min_size=n, max_size=n))
    c = [1] * n if unit_costs else draw(st.lists(st.integers(0, 9), min_size=n, max_size=n))
    budget = draw(st.integers(0, 30))
    pinned = draw(st.sets(st.integers(0, n - 1), max_size=n))
    return p, c, budget, sorted(pinned)


def prop_budget(data, rule=R.budget_greedy) -> None:
    p, c, budget, pinned = data
    kept = rule(p, c, budget, pinned)
    assert kept == sorted(set(kept)), "indices returned once each, in chronological order"
    assert set(pinned) <= set(kept), "pinned units are kept"
    assert sum(c[i] for i in kept if i not in pinned) <= budget, "the unpinned kept units fit the budget"
    left = budget - sum(c[i] for i in kept if i not in pinned)
    assert all(c[i] > left for i in range(len(p)) if i not in kept), "greedy: every skipped unit no longer fits"


@given(problems())
def test_budget_respected_and_pinned_kept(data):
    """LRE: the budget is respected, pinned units are kept, and no skipped unit would still fit."""
    prop_budget(data)


def test_budget_property_fails_on_a_rule_that_ignores_the_budget():
    """The budget property catches a rule that keeps everything."""
    must_fail(problems(), prop_budget, lambda p, c, b, pinned: list(range(len(p))))


@given(problems(unit_costs=True))
def test_unit_costs_give_top_k(data):
    """LRE: with c_i = 1, budget-greedy is exact top-K (K = B) by p, ties to the larger index."""
    p, c, budget, pinned = data
    free = [i for i in range(len(p)) if i not in pinned]
    top = sorted(free, key=lambda i: (p[i], i), reverse=True)[:budget]
    assert R.budget_greedy(p, c, budget, pinned) == sorted(set(pinned) | set(top)), "top-K equivalence"


@given(problems(unit_costs=True), st.sampled_from(["cube", "exp", "affine"]))
def test_invariant_to_increasing_transforms_with_equal_costs(data, kind):
    """LRE: with equal costs the kept set depends on the order of p only."""
    p, c, budget, pinned = data
    f = {"cube": lambda v: v**3, "exp": lambda v: Fraction(2) ** int(12 * v) + v, "affine": lambda v: 3 * v + 1}[kind]
    q = [f(v) for v in p]
    assume(all((a < b) == (fa < fb) and (a == b) == (fa == fb) for a, fa in zip(p, q) for b, fb in zip(p, q)))
    assert R.budget_greedy(p, c, budget, pinned) == R.budget_greedy(q, c, budget, pinned), "same kept set"


@given(st.lists(st.tuples(st.integers(0, 5), st.integers(0, 1)), min_size=2, max_size=40))
def test_auc_equals_mann_whitney(pairs):
    """LRE: AUC (ties ½) = U / (P·N) of scipy.stats.mannwhitneyu."""
    s = [float(a) for a, _ in pairs]
    y = [b for _, b in pairs]
    assume(0 < sum(y) < len(y))
    pos = [v for v, t in zip(s, y) if t]
    neg = [v for v, t in zip(s, y) if not t]
    u = scipy.stats.mannwhitneyu(pos, neg, alternative="two-sided").statistic
    assert R.auc(s, y) == pytest.approx(u / (len(pos) * len(neg)), abs=1e-12), "AUC = U / (P N)"


@given(st.lists(st.tuples(st.integers(0, 9), st.integers(1, 3)), min_size=1, max_size=10), st.integers(0, 40),
       st.integers(0, 4))
def test_lre_output_verbatim_and_chronological(steps, budget, keep_last):
    """LRE: the residual is a subsequence of the input records, unchanged, pinned steps present."""
    recs = [Record("system", "sys", 0, "s"), Record("user", "task", 0, "u")]
    for t, (word, reps) in enumerate(steps):
        recs += [Record("action", f"cat file_{word}.py", t, f"a{t}"),
                 Record("observation", f"value_{word} " * reps, t, f"o{t}")]
    traj = Trajectory("gen", "jsonl", "<gen>", tuple(recs))
    res = R.lre(traj, budget, get_tokenizer(), keep_last=keep_last)
    out = res.residual_records()
    it = iter(recs)
    assert all(any(r == o for o in it) for r in out), "kept records verbatim and in their original order"
    n = len(steps)
    assert set(range(max(0, n - keep_last), n)) <= set(res.kept_units), "the last k steps are pinned"
    assert res.restore() == recs, "residual + removal record = input"
    assert np.all(np.isfinite(res.extra["p"])), "finite keep-probabilities"
