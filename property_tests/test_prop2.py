"""PROP2 (App. C.3, Proposition 2): greedy first-occurrence at radius δ is simultaneously an
internal δ-covering and a δ-packing: ``N(S, δ) <= |R| <= M(S, δ) <= N(S, δ/2)``, with *exact*
N and M (MILP). The packing half needs complete candidate generation (SPEC §5)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import assume, given

from lam_ref.covering import (
    all_pairs_sq,
    covering_number,
    delta_graph,
    is_covering,
    is_packing,
    packing_number,
    t_half,
)
from lam_ref.geometry import delta_from_t, delta_sq
from lam_ref.strategies import embeddings_and_threshold, near_duplicate_clusters, stars, tie_band_violations
from lam_ref.substitution import substitute
from lam_ref.theory import adversarial_queries, measure_substitution, random_queries, score_deficits
from tests.datagen import CHAIN_T
from tests.datagen import arc as _arc

from ._support import REG, _bounded, _ctx, must_fail

DATA = embeddings_and_threshold(min_n=1, max_n=40)


def prop_sandwich(data, make_kept) -> None:
    """``N(δ) <= |R| <= M(δ) <= N(δ/2)`` with R from ``make_kept(e, t)``; R is checked to be a
    covering and a packing of the δ-graph directly."""
    e, t = data
    assume(not tie_band_violations(e, t_half(t)))
    kept = make_kept(e, t)
    adj = delta_graph(e, t)
    n_cov = covering_number(adj)
    m_pack = packing_number(adj)
    n_half = covering_number(e, t_half(t))
    assert n_cov.optimal and m_pack.optimal and n_half.optimal, "MILP must prove optimality on small sets"
    assert is_covering(adj, kept), f"greedy R {kept.tolist()} is not a delta-covering"
    assert is_packing(adj, kept), f"greedy R {kept.tolist()} is not a delta-packing"
    assert n_cov.value <= kept.size <= m_pack.value <= n_half.value, (
        f"N={n_cov.value} |R|={kept.size} M={m_pack.value} N(delta/2)={n_half.value}"
    )


def greedy(e, t):
    return np.flatnonzero(substitute(e, t, exhaustive=True).kept)


def semdedup_like(e, t):
    """Broken greedy: drop a row if it is within δ of *any* earlier row, deleted or not
    (SemDeDup's rule, SPEC §16) — not a covering on chains."""
    sq = all_pairs_sq(e)
    d2 = delta_sq(t)
    return np.array([i for i in range(e.shape[0]) if not any(sq[i, j] <= d2 for j in range(i))], dtype=np.int64)


@pytest.mark.claim("PROP2")
@given(DATA)
def test_greedy_is_cover_and_packing(data):
    """PROP2 with exact N, M. Shown to fail on the SemDeDup-style rule that compares against
    deleted rows too (:func:`test_prop2_fails_for_comparisons_with_deleted_rows`)."""
    prop_sandwich(data, greedy)


@pytest.mark.claim("PROP2")
def test_prop2_fails_for_comparisons_with_deleted_rows():
    must_fail(embeddings_and_threshold(min_n=3, max_n=24, spread=2.5), prop_sandwich, semdedup_like, max_examples=150)


@pytest.mark.claim("PROP2")
@given(near_duplicate_clusters())
def test_clusters_have_known_exact_numbers(c):
    """Clusters of diameter <= δ, gaps > 2δ: N = M = |R| = number of clusters (known by
    construction, not from the code). Shown to fail when N is computed at radius δ/2 instead of
    δ (tried by hand: members up to 0.98δ apart then need several centres)."""
    k = len(set(c.labels.tolist()))
    adj = delta_graph(c.embeddings, c.t)
    assert covering_number(adj).value == k, "N must equal the number of clusters"
    assert packing_number(adj).value == k, "M must equal the number of clusters"
    assert substitute(c.embeddings, c.t, exhaustive=True).kept_count == k, "greedy keeps one row per cluster"


@pytest.mark.claim("PROP2")
@given(stars(centre_first=False))
def test_star_centre_last_attains_the_packing_end(star):
    """Centre last: greedy keeps every leaf, ``|R| = M(S, δ) = #leaves`` while ``N(S, δ) = 1``:
    both ends of the sandwich are attained by one configuration (known by construction)."""
    e, t, centre = star
    adj = delta_graph(e, t)
    leaves = e.shape[0] - 1
    assert covering_number(adj).value == 1, "the centre alone covers a star"
    assert packing_number(adj).value == leaves, "the leaves form a maximum packing"
    assert substitute(e, t, exhaustive=True).kept_count == leaves, "greedy keeps the leaves"


# ---- incomplete candidate recall: the packing half fails, THM1 still holds -------------------
def banded_pair() -> tuple[np.ndarray, float]:
    """Two unit rows 0.035 apart (δ = 0.316 at t = 0.95) whose Q_ε codes differ in one coordinate
    (0.2786/0.2 -> 1 vs 0.3134/0.2 -> 2 at rel = 0.2, D = 4), so one band of r = 4 never proposes
    them as candidates."""
    a = np.array([1.0, 0.29, 0.0, 0.0])
    b = np.array([1.0, 0.33, 0.0, 0.0])
    e = np.stack([a / np.linalg.norm(a), b / np.linalg.norm(b)]).astype(np.float32)
    return e, 0.95


@pytest.mark.claim("PROP2")
@pytest.mark.claim("BAND")
def test_packing_half_fails_with_incomplete_recall_but_thm1_holds():
    """Banded search with r = D keeps both rows of the pair: |R| = 2 > M(S, δ) = 1 (packing half
    of PROP2 fails), while (R, π) is still a δ-substitution and every deficit is <= δ̂ = 0."""
    e, t = banded_pair()
    assert np.sqrt(all_pairs_sq(e)[0, 1]) < 0.05 < delta_from_t(t), "the pair is well within delta"
    res = substitute(e, t, r=4, rel=0.2)
    assert res.kept_count == 2, "the band index must miss the pair"
    assert substitute(e, t, exhaustive=True).kept_count == 1, "the oracle merges the pair"
    assert packing_number(e, t).value == 1, "M(S, delta) = 1 for a pair within delta"
    assert res.kept_count > packing_number(e, t).value, "|R| exceeds M: packing half fails"
    assert measure_substitution(e, res.pi, t).valid, "still a delta-substitution (BAND soundness)"
    d = score_deficits(e, res.kept, random_queries(4, 256, 0))
    assert d.max() <= res.delta_hat == 0.0, "THM1: nothing deleted, no deficit"


def prop_band_packs(data) -> None:
    """(Broken claim) banded R at r = D, rel = 0.05 is always a δ-packing."""
    e, t = data
    res = substitute(e, t, r=e.shape[1], rel=0.05)
    assert is_packing(delta_graph(e, t), np.flatnonzero(res.kept)), "banded R is not a packing"
    q = np.concatenate([random_queries(e.shape[1], 32, 1), adversarial_queries(e, res.pi)])
    assert score_deficits(e, res.kept, q).max(initial=0.0) <= res.delta_hat + 1e-12, "THM1 violated"


@pytest.mark.claim("PROP2")
@pytest.mark.claim("BAND")
def test_banded_search_finds_non_packings():
    """Hypothesis finds clustered data where the banded R (r = D) is not a packing — only the
    packing assertion can fail, since THM1 is checked after it and holds for any sound map."""
    must_fail(embeddings_and_threshold(min_n=4, max_n=24, min_dim=2, max_dim=8), prop_band_packs)


# ------------------------------------------------------------------------------------------------
# PROP2's row of ``lam-ref verify`` (:mod:`lam_ref.claims.prop2`): its measure and rule at their edges.
# ------------------------------------------------------------------------------------------------


@pytest.mark.claim("PROP2")
def test_prop2_measure_on_the_chain():
    """PROP2 on the chain: greedy's ``R`` (rows 0 and 2) is a packing; ``N = 1``, ``M = 2``
    (rows 0 and 2), ``N(δ/2) = 3`` (at ``δ/2 = 0.075`` every row covers only itself); each
    solver's bounds equal its value; above ``exact_limit`` only the packing, said in the note."""
    ctx = _ctx(_arc(0.0, 0.1, 0.2), CHAIN_T)
    meas = REG["PROP2"].measure(ctx)
    m = meas.values
    assert (m["R"], m["R_is_packing"], m["N"], m["M"], m["N_half"]) == (2, True, 1, 2, 3), f"{m}"
    assert (m["N_lower"], m["M_upper"], m["M_lower"], m["N_half_upper"]) == (1, 2, 2, 3), f"{m}"
    assert meas.note == "" and REG["PROP2"].holds(m) is True, f"{meas}"
    small = REG["PROP2"].measure(_ctx(_arc(0.0, 0.1, 0.2), CHAIN_T, exact_limit=2))
    assert small.values == {"R": 2, "R_is_packing": True}, f"{small}"
    assert small.note == "n > 2: exact N, M skipped", f"{small.note!r}"


@pytest.mark.claim("PROP2")
def test_prop2_rule_each_inequality_counts():
    """Packing, ``N_lower <= |R| <= M_upper`` and ``M_lower <= N_half_upper`` (inclusive);
    failing any one fails the claim; without the solvers' keys only the packing counts."""
    holds = REG["PROP2"].holds
    m = {"R": 3, "R_is_packing": True, "N_lower": 3, "M_upper": 3, "M_lower": 4, "N_half_upper": 4}
    assert holds(m) is True, "every bound attained holds"
    assert holds({**m, "R_is_packing": False}) is False, "not a packing fails"
    assert holds({**m, "N_lower": 4}) is False, "|R| below N fails"
    assert holds({**m, "M_upper": 2}) is False, "|R| above M fails"
    assert holds({**m, "N_half_upper": 3}) is False, "M above N(δ/2) fails"
    assert holds({"R": 3, "R_is_packing": True}) is True and holds({"R": 3, "R_is_packing": 0}) is False, "packing only"


@pytest.mark.claim("PROP2")
def test_prop2_measure_reports_bounds_of_unfinished_solves():
    """When a solver stops at its time limit, PROP2 reports no ``N``, ``M`` or ``N(δ/2)`` but the
    certified bounds, and the rule is checked between those. The three solves are given as the
    records a time-limited MILP returns (a time-out cannot be produced deterministically)."""
    ctx = _ctx(_arc(0.0, 0.1, 0.2), CHAIN_T)
    ctx.covering, ctx.packing, ctx.covering_half = _bounded(2, 1, 2), _bounded(2, 2, 3), _bounded(3, 2, 3)
    m = REG["PROP2"].measure(ctx).values
    assert (m["N"], m["M"], m["N_half"]) == (None, None, None), f"no value is exact: {m}"
    assert (m["N_lower"], m["M_upper"], m["M_lower"], m["N_half_upper"]) == (1, 3, 2, 3), f"{m}"
