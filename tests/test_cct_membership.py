"""CCT-APPA: the membership case study of Context Compaction Theory's Appendix A without an LLM.

The seeded URL-like generator; every compactor stays within its budget in both accountings
(chars x 8, gzip) and SELECT compactors emit only recorded strings; the Bloom compactor's measured
error matches ½·(exact false-positive rate) on half-member queries; one-sided compactors never
miss a member and stay above the no-false-negative floor ½·2^{-B/N}; always-no errs ½; exact
optima at toy scale (partitions vs MILP) bound every compactor from below."""

from __future__ import annotations

import os

import numpy as np
import pytest

from lam_ref.cct.bloom import bloom_fpr_exact, membership_lower_bound
from lam_ref.cct.membership import (
    COMPACTORS,
    SELECT_COMPACTORS,
    compact,
    evaluate,
    host,
    rice_decode,
    rice_encode,
    run_case_study,
    text_bits,
    url_like_strings,
    wilson,
    workload,
)
from lam_ref.cct.solvers import distributional_optimum, select_distributional_optimum
from lam_ref.cct.toy import half_member_mu, toy_table
from lam_ref.geometry import LamValueError

pytestmark = pytest.mark.claim("CCT-APPA")

THOROUGH = os.environ.get("HYPOTHESIS_PROFILE", "ci") == "thorough"


def test_generator_is_seeded_distinct_and_structured():
    a, b = url_like_strings(3000, 5), url_like_strings(3000, 5)
    assert a == b, "same seed, same strings"
    assert a != url_like_strings(3000, 6), "another seed, other strings"
    assert len(set(a)) == 3000, "distinct strings"
    hosts = {host(u) for u in a}
    assert 20 < len(hosts) < 1000, f"URLs share hosts ({len(hosts)} hosts for 3000 URLs)"


def test_workload_truth():
    w = workload(500, 50, seed=3)
    members = set(w.members)
    assert len(w.queries) == 100 and int(w.truth.sum()) == 50, "50 + 50 queries"
    assert all((q in members) == bool(t) for q, t in zip(w.queries, w.truth)), "truth = membership"
    assert len(set(w.queries)) == 100, "queries without replacement"


@pytest.mark.parametrize("mode", ["chars", "gzip"])
def test_compactors_respect_budget_and_select_keeps_recorded_strings(mode):
    w = workload(800, 20, seed=1)
    members = set(w.members)
    for name in COMPACTORS:
        for bits_per_item in (0, 1, 8, 64):
            budget = bits_per_item * 800
            c = compact(name, w.members, budget, mode, seed=1)
            assert c.bits == text_bits(c.text, mode) <= budget, f"{name} {mode}: {c.bits} bits > budget {budget}"
            if name in SELECT_COMPACTORS and c.text:
                assert set(c.text.split("\n")) <= members, f"{name} emitted a string that was not recorded"


def test_bloom_error_matches_formula_large_queries():
    n = 2000
    w = workload(n, 2000, seed=9)
    for bpi in (2, 6):
        c = compact("bloom", w.members, bpi * n, "chars", seed=9)
        fp, fn = evaluate(c, w)
        assert fn == 0, "a Bloom filter has no false negatives"
        expect = 0.5 * bloom_fpr_exact(c.detail["m"], n, c.detail["k"])
        lo, hi = wilson(fp + fn, len(w.queries), z=3.29)
        assert lo <= expect <= hi, f"b={bpi}: error {(fp + fn) / 4000:.4f} CI [{lo:.4f}, {hi:.4f}] vs {expect:.4f}"


def test_one_sided_compactors_stay_above_the_floor():
    n = 2000
    w = workload(n, 2000, seed=4)
    for name in ("bloom", "fingerprints"):
        for bpi in (1, 4, 8):
            c = compact(name, w.members, bpi * n, "gzip", seed=4)
            fp, fn = evaluate(c, w)
            assert fn == 0, f"{name}: no false negatives"
            _, hi = wilson(fp, len(w.queries), z=3.29)
            floor = float(membership_lower_bound(c.bits, n))  # every bit charged, not only the payload
            assert hi >= floor, f"{name} b={bpi}: error CI top {hi:.4f} below the floor {floor:.4f}"


def test_always_no_and_keep_first():
    n = 1000
    w = workload(n, 500, seed=2)
    fp, fn = evaluate(compact("always-no", w.members, 10**6, seed=2), w)
    assert (fp, fn) == (0, 500), "always-no misses every member and nothing else"
    c = compact("keep-first", w.members, 40 * n, seed=2)
    fp, fn = evaluate(c, w)
    kept = c.detail["retained"]
    lo, hi = wilson(fn, 500, z=3.29)
    assert fp == 0 and lo <= 1 - kept / n <= hi, f"keep-first misses {fn}/500, expected about {1 - kept / n:.3f}"


def test_rice_code_round_trip():
    rng = np.random.default_rng(0)
    for f, n in ((20, 1000), (8, 100), (30, 50), (1, 2)):
        v = np.unique(rng.integers(0, 2**f, size=n).astype(np.uint64))
        assert np.array_equal(rice_decode(rice_encode(v, f, n), f, n, v.size), v), f"round trip f={f} n={n}"


def test_case_study_rows_and_bad_input():
    out = run_case_study(n_members=300, n_queries=30, seeds=(1, 2), bits_per_item=(0, 4),
                         compactors=("keep-first", "always-no"))
    assert len(out) == 4 and all(o.queries == 120 for o in out), "2 compactors x 2 budgets, 2 seeds x 60 queries"
    assert all(o.ci_low <= o.error <= o.ci_high for o in out), "the interval contains the estimate"
    with pytest.raises(LamValueError, match="compactor must be one of"):
        compact("llm", ["a"], 8)
    with pytest.raises(LamValueError, match="budget must be an integer number of bits >= 0"):
        compact("bloom", ["a"], -8)
    with pytest.raises(LamValueError, match="mode must be one of"):
        text_bits("x", "bytes")
    with pytest.raises(LamValueError, match="n_queries must be <= n_members"):
        workload(10, 20)


def test_toy_optima_bound_the_compactors():
    res = toy_table(4, 2, 3)
    rows = res["rows"]
    assert rows[0]["gen_optimum"] == pytest.approx(0.5), "B = 0: one message, error 1/2"
    assert rows[2]["gen_optimum"] == pytest.approx(0.0), "B = 2: 7 messages >= 6 inputs"
    for r in rows:
        assert r["gen_optimum"] <= r["select_optimum"] + 1e-9 <= r["keep_first"] + 2e-9, f"optimum order {r}"
        assert r["gen_optimum"] <= r["bloom"] + 1e-9 and r["always_no"] == pytest.approx(0.5), f"{r}"
    mu = half_member_mu(4, 2)
    assert mu.sum() == pytest.approx(1.0) and mu.min() > 0, "a distribution over (X, q)"


@pytest.mark.slow
@pytest.mark.skipif(not THOROUGH, reason="slow (minutes): runs in the thorough profile, `make thorough`")
def test_toy_u5_exhaustive_equals_milp():
    """u = 5, N = 2 (10 inputs): the partition search and the MILP agree (GEN and SELECT)."""
    from lam_ref.cct.games import membership_game

    g = membership_game(5, 2)
    mu = half_member_mu(5, 2)
    for b in (1, 2):
        ex = distributional_optimum(g, mu, b).error
        mi = distributional_optimum(g, mu, b, method="milp").error
        assert abs(ex - mi) < 1e-7, f"GEN B={b}: exhaustive {ex} != milp {mi}"
    ex = select_distributional_optimum(g, mu, 1).error
    mi = select_distributional_optimum(g, mu, 1, method="milp").error
    assert abs(ex - mi) < 1e-7, f"SELECT 1 item: exhaustive {ex} != milp {mi}"
