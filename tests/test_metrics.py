"""Metrics of §3 / App. F (SPEC §12; the evidence metrics are in tests/test_evidence.py). Expected values are worked by hand in the comments or taken
from the paper's tables (Tables 12, 14, 15, 17, 18, 19; eq. 8-10), never from the code's output."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest

from lam_ref.geometry import LamValueError
from lam_ref.metrics import (
    REPAIR_TOKENS,
    OperatingPoint,
    RemovalResult,
    bfr,
    break_even_kappa,
    corpus_removal,
    ecr_at,
    eta,
    format_ecr,
    independence_estimate,
    layer_removal,
    merge_distance_stats,
    merge_distances,
    parse_budget,
    recall_at_k,
    recall_at_k_per_query,
    removal,
    removal_exact,
    removal_from_texts,
    rsc,
    to_fraction,
    weighted_quantile,
)

T_PAPER = 9_017_033  # observation tokens of the 600-trajectory corpus (eq. 9)

# ----------------------------------------------------------------------------------------------
# removal


def test_removal_by_hand():
    assert removal(100, 75) == 0.25, "100 -> 75 tokens is 25% removal"
    assert removal_exact(3, 1) == Fraction(2, 3), "3 -> 1 tokens is exactly 2/3"
    assert removal(10, 12) == pytest.approx(-0.2), "stubs longer than the text give negative removal"
    assert removal(0, 0) == 0.0, "an empty original with an empty residual removes nothing"


@pytest.mark.parametrize("o, r, match", [(0, 3, "undefined"), (-1, 0, "non-negative"), (10, 2.5, "integer"),
                                         (True, 0, "integer")])
def test_removal_rejects_bad_counts(o, r, match):
    with pytest.raises(LamValueError, match=match):
        removal(o, r)


def test_removal_from_texts_counts_whole_texts_once():
    calls = []

    def count(text: str) -> int:
        calls.append(text)
        return len(text.split())

    original = "alpha beta gamma delta\nepsilon zeta"
    residual = "alpha beta gamma delta\n[stub]"
    assert removal_from_texts(original, residual, count) == pytest.approx(1 - 5 / 6), "6 words -> 5 words"
    assert calls == [original, residual], f"the counter must see each whole text exactly once, saw {calls}"


def test_gross_net_and_context_gain():
    # 1000 original tokens; residual 790 with stubs, 770 without: gross 23%, net 21%, stubs 2 points
    r = RemovalResult(1000, 790, 770)
    assert (r.gross, r.net) == (pytest.approx(0.23), pytest.approx(0.21)), f"gross/net {r.gross}, {r.net}"
    assert r.stub_cost == pytest.approx(0.02), f"stub cost {r.stub_cost}"
    # Table 15: net 22.50% -> context gain 1/(1 - 0.225) = 1.290
    assert round(RemovalResult(10000, 7750, 7681).context_gain, 3) == 1.290, "Table 15 context gain"


def test_corpus_removal_is_token_weighted():
    # (100 -> 50) and (900 -> 900): pooled 50/1000 = 5%, not the mean of 50% and 0%
    r = corpus_removal([100, 900], [50, 900])
    assert r.net == pytest.approx(0.05) and r.gross == pytest.approx(0.05), f"pooled removal {r.net}"
    with pytest.raises(LamValueError, match="differ in length"):
        corpus_removal([1, 2], [1])
    with pytest.raises(LamValueError, match="exceeds"):
        corpus_removal([10], [5], [6])


def test_layer_removal_and_independence_estimate():
    got = layer_removal(1000, {"L1": 862, "L0": 820, "L1->L0": 770, "L0->L1": 795})
    assert got == {"L1": 0.138, "L0": 0.18, "L1->L0": 0.23, "L0->L1": 0.205}, f"per-layer removal {got}"
    # Table 12: 1 - (1 - 0.1804)(1 - 0.1381) = 1 - 0.8196 * 0.8619 = 1 - 0.70641324 = 0.29358676 (paper: 29.35%)
    est = independence_estimate(0.1804, 0.1381)
    assert est == pytest.approx(0.29358676, abs=1e-12), f"independence estimate {est}"
    assert abs(est - 0.2935) < 2e-4, "Table 12's 29.35% (from unrounded inputs)"
    with pytest.raises(LamValueError, match=r"removals\[0\]"):
        independence_estimate(1.5)


# ----------------------------------------------------------------------------------------------
# merge distances (Table 11)


def test_weighted_quantile_by_hand():
    v, w = [0.3, 0.1, 0.2], [2, 1, 1]  # sorted: 0.1 (w1), 0.2 (w1), 0.3 (w2); W = 4
    assert weighted_quantile(v, w, 0.5) == 0.2, "median: cumulative 1, 2 >= 2 at 0.2"
    assert weighted_quantile(v, w, 0.99) == 0.3, "p99: target 3.96 reached only at 0.3"
    assert weighted_quantile(v, w, 0) == 0.1, "q = 0 is the smallest value"
    assert weighted_quantile([0.05, 0.1], [0, 3], 0) == 0.1, "a zero-weight value is never the answer"
    with pytest.raises(LamValueError, match="integer token counts"):
        weighted_quantile([0.1], [1.5], 0.5)
    with pytest.raises(LamValueError, match="sum to 0"):
        weighted_quantile([0.1], [0], 0.5)


def test_merge_distance_stats_by_hand():
    # t = 0.95 -> delta = sqrt(0.1) = 0.31622776601683794
    # d = [0.1, 0.3] with tokens [300, 100]: mean = (30 + 30)/400 = 0.15, mean/delta = 0.4743416490252569
    # median: target 200 -> 0.1; p99: target 396 -> 0.3; share below delta/2 = 0.158: 300/400
    s = merge_distance_stats([0.1, 0.3], [300, 100], 0.95)
    assert s.delta == pytest.approx(math.sqrt(0.1), abs=1e-15), f"delta {s.delta}"
    assert (s.merged, s.merged_tokens, s.delta_hat) == (2, 400, 0.3), f"counts {s}"
    assert (s.median, s.p99) == (0.1, 0.3), f"quantiles {s.median}, {s.p99}"
    assert s.mean == pytest.approx(0.15) and s.mean_over_delta == pytest.approx(0.4743416490252569), f"mean {s}"
    assert s.share_below_half_delta == 0.75 and s.within_bound, f"share {s.share_below_half_delta}"
    empty = merge_distance_stats([], [], 0.95)
    assert empty.delta_hat == 0.0 and empty.median is None, "nothing merged: delta_hat 0, no quantiles"


def test_merge_distances_from_pi():
    # e1 = (0.6, 0.8) merged into e0 = (1, 0): |e0 - e1|^2 = 0.16 + 0.64 = 0.8
    e = np.array([[1, 0], [0.6, 0.8], [0, 1]], dtype=np.float32)
    ids, d = merge_distances(e, [0, 0, 2])
    assert ids.tolist() == [1], f"merged ids {ids}"
    assert d[0] == pytest.approx(math.sqrt(0.8), abs=1e-7), f"distance {d[0]}"
    with pytest.raises(LamValueError, match=r"pi\[1\] = 2"):
        merge_distances(e, [0, 2, 2])
    with pytest.raises(LamValueError, match="itself merged"):
        merge_distances(e, [0, 0, 1])


# ----------------------------------------------------------------------------------------------
# ECR@tau (eq. 8, Table 17)


def test_ecr_spec_example_6276_lines():
    # SPEC §12: tau = 0.999 over 6,276 lines allows 6 lost: 6270/6276 = 0.999044 >= 0.999 > 6269/6276
    pts = [OperatingPoint("t=0.95", 0.2247, 6270, 6276), OperatingPoint("t=0.90", 0.3199, 6269, 6276)]
    assert ecr_at(pts, 0.999) == 0.2247, "6 lost qualifies at 0.999, 7 lost does not"
    assert ecr_at(pts, "0.95") == 0.3199, "both qualify at 0.95: the larger removal"
    assert ecr_at(pts, 1) is None and format_ecr(ecr_at(pts, 1)) == "—", "none qualifies at 1.0"
    assert format_ecr(0.2247) == "22.47%", "Table 17 formatting"


def test_ecr_comparison_is_exact():
    # tau = 0.33333333333333334 is above 1/3 as a decimal, but float('0.33333333333333334') == 1/3 in floating
    # point: a float comparison admits 1 of 3 lines, the exact one must not
    p = [OperatingPoint("m", 0.5, 1, 3)]
    assert float("0.33333333333333334") == 1 / 3, "premise: the float rounds onto 1/3"
    assert ecr_at(p, "0.33333333333333334") is None, "exact comparison must reject 1/3 < tau"
    assert ecr_at(p, "1/3") == 0.5, "1/3 >= 1/3 qualifies"
    assert to_fraction(0.999) == Fraction(999, 1000), "a float tau goes through its shortest repr"
    with pytest.raises(LamValueError, match="tau must be in"):
        ecr_at(p, 1.5)
    with pytest.raises(LamValueError, match="exceeds"):
        OperatingPoint("bad", 0.1, 5, 4)


def test_ecr_table_17_masking_column():
    # Table 14 masking rows: (k, removal, lines lost of 6,276); Table 17: ECR@0.99 = 4.42%, @0.999 = —
    masking = [(50, 0.0442, 54), (20, 0.3406, 438), (10, 0.6738, 1208), (5, 0.7794, 1686), (3, 0.8144, 1782)]
    pts = [OperatingPoint(f"k={k}", rho, 6276 - lost, 6276) for k, rho, lost in masking]
    assert ecr_at(pts, 0.999) is None, "no masking setting qualifies at 0.999"
    assert ecr_at(pts, 0.99) == 0.0442, "k=50 keeps 99.140% >= 99%"
    assert ecr_at(pts, 0.95) == 0.0442, "k=20 keeps 93.021% < 95%"
    assert ecr_at(pts, 0) == 0.8144, "tau = 0 is the unconstrained best (Table 17 'best' column)"


# ----------------------------------------------------------------------------------------------
# RSC (eq. 10), BFR (Table 19), eta (eq. 9, Table 18)


def test_rsc_harness_checks_from_the_paper():
    resolved = [True] * 455 + [False] * 145
    assert rsc(resolved, [True] * 600) == Fraction(455, 600), "RSC(0) equals the recorded resolve rate 75.83%"
    assert round(100 * float(rsc(resolved, [True] * 600)), 2) == 75.83, "75.83%"
    intact = [False] + [True] * 599  # t = 0.95: one resolved trajectory loses its line
    assert round(100 * float(rsc(resolved, intact)), 2) == 75.67, "Table 23: 75.67% at t = 0.95"
    unresolved_loss = [True] * 455 + [False] + [True] * 144
    assert rsc(resolved, unresolved_loss) == Fraction(455, 600), "losses in unresolved runs do not lower RSC"
    with pytest.raises(LamValueError, match="differ in length"):
        rsc([True], [True, True])
    with pytest.raises(LamValueError, match="must be a bool"):
        rsc([1], [True])


def test_bfr_by_hand():
    assert parse_budget("16K") == 16000 and parse_budget("1.5k") == 1500 and parse_budget(8000) == 8000, "K = 1000"
    assert bfr([15000, 16000, 16001, 40000], "16K") == Fraction(2, 4), "fits means <= B"
    for bad in ("16 KB", "0", -3, 2.5, "1.0005K"):
        with pytest.raises(LamValueError, match="budget"):
            parse_budget(bad)


# Table 18 (rho, lines lost): eta(1), eta(3), eta(8) and break-even kappa vs ours (0.2247, 1 line)
TABLE_18 = [
    ("ours 0.95", 0.2247, 1, (0.2246, 0.2245, 0.2241), None),
    ("ours 0.90", 0.3199, 81, (0.3141, 0.3027, 0.2741), 16.9),
    ("masking k=20", 0.3406, 438, (0.3097, 0.2478, 0.0932), 3.8),
    ("masking k=10", 0.6738, 1208, (0.5884, 0.4178, -0.0087), 5.3),
    ("masking k=5", 0.7794, 1686, (0.6603, 0.4222, -0.1732), 4.7),
]


@pytest.mark.parametrize("name, rho, lost, etas, kappa", TABLE_18)
def test_eta_and_break_even_reproduce_table_18(name, rho, lost, etas, kappa):
    # the paper's rho are rounded to 4 digits, so a cell may differ by one unit in the 4th digit
    for k, want in zip((1, 3, 8), etas):
        got = eta(rho, lost, k, T_PAPER)
        assert abs(got - want) <= 1.5e-4, f"{name}: eta({k}) = {got:.5f}, Table 18 says {want}"
    be = break_even_kappa(rho, lost, 0.2247, 1, T_PAPER)
    if kappa is None:
        assert be is None, f"{name}: no break-even against itself"
    else:
        assert round(be, 1) == kappa, f"{name}: break-even kappa {be:.3f}, Table 18 says {kappa}"


def test_eta_by_hand_and_validation():
    assert eta(0.5, 10, 2, 1000, 5.0) == pytest.approx(0.4), "0.5 - 10*2*5/1000"
    assert REPAIR_TOKENS == 636.8, "Delta of eq. 9"
    with pytest.raises(LamValueError, match="kappa"):
        eta(0.5, 1, -1, 1000)
    with pytest.raises(LamValueError, match="total_tokens"):
        eta(0.5, 1, 1, 0)


# ----------------------------------------------------------------------------------------------
# recall@k after substitution (Table 11 "R@10")


def test_recall_at_k_by_hand():
    # e1 merged into e0. q = (0.6, 0.8, 0): scores e0 .6, e1 .96, e2 .8, e3 0
    # full top-2 = [e1, e2]; retained {e0, e2, e3} top-2 = [e2, e0]; pi(e1) = e0 and e2 both retrieved -> 1.0
    # full top-1 = [e1] -> pi = e0; retained top-1 = [e2] -> miss -> 0.0
    e = np.array([[1, 0, 0], [0.8, 0.6, 0], [0, 1, 0], [0, 0, 1]], dtype=np.float32)
    q = np.array([[0.6, 0.8, 0]], dtype=np.float32)
    pi = [0, 0, 2, 3]
    assert recall_at_k(e, q, pi, 2) == 1.0, "recall@2 by hand"
    assert recall_at_k(e, q, pi, 1) == 0.0, "recall@1 by hand"
    assert recall_at_k(e, q, [0, 1, 2, 3], 1) == 1.0, "identity map recovers everything"
    assert recall_at_k_per_query(e, q[:0], pi, 1).size == 0, "no queries, no values"
    with pytest.raises(LamValueError, match="queries is empty"):
        recall_at_k(e, q[:0], pi, 1)
    with pytest.raises(LamValueError, match="dimension"):
        recall_at_k(e, np.ones((1, 2), np.float32) / math.sqrt(2), pi, 1)
