"""lam_ref.theory: the quantities the claims are measured with (query families, score deficits, top-k
cover, map entropy, packings, EQ1 residuals, the hull limit), at their edges and on sets worked by hand."""

from __future__ import annotations

import re

import numpy as np
import pytest

from tests.datagen import CHAIN_T
from tests.datagen import arc as _arc


@pytest.mark.claim("THM1")
def test_random_queries_are_seeded_unit_rows():
    """The sampled queries of THM1 are reproducible: seed 0 by default, the same seed gives the
    same rows, another seed other rows; every row has unit norm."""
    from lam_ref.theory import random_queries

    a, b = random_queries(5, 8), random_queries(5, 8, seed=0)
    assert np.array_equal(a, b), "the default seed is 0 and the sampler is deterministic"
    assert not np.array_equal(a, random_queries(5, 8, seed=1)), "another seed samples other queries"
    assert a.shape == (8, 5) and np.allclose(np.linalg.norm(a, axis=1), 1.0), f"8 unit rows in R^5: {a.shape}"


@pytest.mark.claim("THM1")
def test_adversarial_queries_skip_exact_copies():
    """A deleted row equal to its representative loses nothing in any direction: it gives no
    query (never a NaN row); a deleted row at distance 0.5 gives one unit query."""
    from lam_ref.theory import adversarial_queries

    e = np.array([[1.0, 0.0], [1.0, 0.0], [0.875, np.sqrt(1 - 0.875**2)]])
    q = adversarial_queries(e, [0, 0, 0])
    assert q.shape == (1, 2) and np.all(np.isfinite(q)), f"one query, for row 2 only: {q}"
    assert np.allclose(np.linalg.norm(q, axis=1), 1.0), f"the query is a unit vector: {q}"


@pytest.mark.claim("THM1")
def test_score_deficits_refuses_a_bad_mask():
    """``kept`` must be a boolean mask of shape ``(N,)`` with at least one retained row; the error
    names ``kept`` and the shape expected."""
    from lam_ref.geometry import LamValueError
    from lam_ref.theory import score_deficits

    e = np.eye(3)
    with pytest.raises(LamValueError, match=r"kept must be a non-empty boolean mask of shape \(3,\)"):
        score_deficits(e, [True, False], [1.0, 0.0, 0.0])
    with pytest.raises(LamValueError, match=r"kept must be a non-empty boolean mask of shape \(3,\)"):
        score_deficits(e, [False, False, False], [1.0, 0.0, 0.0])
    with pytest.raises(LamValueError, match=r"kept must be a non-empty boolean mask of shape \(0,\)"):
        score_deficits(np.zeros((0, 3)), np.zeros(0, dtype=bool), [1.0, 0.0, 0.0])
    got = score_deficits(e, [True, True, False], [[0.0, 0.0, 1.0], [1.0, 0.0, 0.0]])
    assert got.tolist() == [1.0, 0.0], f"the deleted axis loses 1 for its own query, nothing elsewhere: {got}"


@pytest.mark.claim("PROP2")
def test_is_packing_checks_every_pair():
    """``is_packing``: fewer than two rows pack; two rows within δ do not, whatever their dtype;
    three rows with only the last two close do not either."""
    from lam_ref.geometry import delta_sq
    from lam_ref.theory import is_packing

    d2 = delta_sq(CHAIN_T)
    assert is_packing(np.zeros((0, 2), dtype=np.float32), d2) and is_packing(_arc(0.0), d2), "0 or 1 row"
    assert is_packing(_arc(0.0, 0.1), d2) is False, "two rows 0.09996 apart, δ = 0.15"
    assert is_packing(_arc(0.0, 0.2), d2) is True, "two rows 0.19967 apart"
    assert is_packing(_arc(0.0, 0.5, 0.6), d2) is False, "rows 1 and 2 are within δ"
    assert is_packing(_arc(0.0, 0.1, 1.0), d2) is False, "rows 0 and 1 are within δ"
    assert is_packing(_arc(0.0, 0.5, 1.0, 1.05), d2) is False, "rows 2 and 3 are within δ (more rows than dimensions)"


@pytest.mark.claim("PROP2")
def test_is_packing_decides_on_the_float32_rows():
    """The packing check applies the exact rule to the rows as float32 (the embeddings' type): a
    float64 row that rounds to a float32 row exactly at ``δ`` from another is within δ, although
    the float64 row itself is a hair farther."""
    from lam_ref.geometry import sq_dist_rows
    from lam_ref.theory import is_packing

    e32 = _arc(0.0, 0.1).astype(np.float32)
    d2 = float(sq_dist_rows(e32, np.array([0]), e32[1:2])[0])
    e64 = e32.astype(np.float64)
    e64[1, 0] -= 1e-12
    assert np.array_equal(e64.astype(np.float32), e32) and np.sum((e64[0] - e64[1]) ** 2) > d2, "the setup"
    assert is_packing(e64, d2) is False, "the float32 rows are exactly δ apart: within δ"


@pytest.mark.claim("COR2")
def test_map_entropy_by_hand_and_its_refusals():
    """``H(π(X))``, ``I(X; π(X))``, ``H(X)`` and ``log2|R|`` for a law with a zero entry, worked
    by hand; a map with no fixed point has ``log2|R| = 0``; a ``p`` that is negative, not finite
    or not summing to 1 is refused with its sum named."""
    from lam_ref.geometry import LamValueError
    from lam_ref.theory import map_entropy

    m = map_entropy([0, 0, 2, 2], [0.5, 0.25, 0.25, 0.0])
    h = -(0.75 * np.log2(0.75) + 0.25 * np.log2(0.25))
    assert m["H_pi"] == pytest.approx(h, abs=1e-12) and m["I"] == pytest.approx(h, abs=1e-12), f"{m} vs {h}"
    assert m["H_X"] == pytest.approx(1.5, abs=1e-12) and m["log2_R"] == 1.0, f"{m}"
    assert all(np.isfinite(v) for v in m.values()), f"a zero probability adds nothing, not a NaN: {m}"
    assert map_entropy([1, 0], [0.5, 0.5])["log2_R"] == 0.0, "no retained row: log2|R| is 0"
    for bad in ([1.5, -0.5], [0.5, np.nan], [0.75, 0.75], [0.5, 0.4]):
        with pytest.raises(LamValueError, match=r"p must be a probability vector \(>= 0, sums to 1\), got sum"):
            map_entropy([0, 0], bad)
    assert map_entropy([0, 0], [1.0 - 1e-10, 0.0])["H_pi"] == pytest.approx(0.0, abs=1e-9), "a sum within 1e-9 of 1 is accepted"


@pytest.mark.claim("DEF1")
def test_measure_substitution_names_each_violation():
    """Out-of-range ids, a representative that is not retained and a row beyond δ are each
    named with the row, the value and δ; ``ordered`` says whether every representative has a
    smaller id."""
    from lam_ref.theory import measure_substitution

    e = _arc(0.0, 0.1, 0.2)
    for bad in (3, -1):
        chk = measure_substitution(e, [0, bad, 2], CHAIN_T)
        assert chk.problems == (f"pi[1] = {bad} is not a row id",) and (chk.valid, chk.ordered, chk.n) == (False, False, 3), f"{chk}"
        assert chk.kept == 0 and np.isnan(chk.delta_hat) and chk.delta == pytest.approx(0.15), f"{chk}"
    chk = measure_substitution(e, [1, 1, 1], CHAIN_T)
    assert chk.valid and not chk.ordered and chk.kept == 1, f"row 0 maps forward to row 1: {chk}"
    chk = measure_substitution(e, [0, 2, 2], CHAIN_T)
    assert chk.valid and not chk.ordered, f"row 1 maps forward to row 2: {chk}"
    chk = measure_substitution(e, [0, 0, 2], CHAIN_T)
    assert chk.valid and chk.ordered, f"a retained row is its own (equal) id: {chk}"
    chk = measure_substitution(e, [0, 0, 1], CHAIN_T)
    assert chk.problems == ("pi[2] = 1 is not retained (pi[1] = 0)",), f"{chk}"
    chk = measure_substitution(e, [0, 0, 0], CHAIN_T)
    assert len(chk.problems) == 1 and re.fullmatch(r"row 2 is 0\.19966\d+ from pi\[2\] = 0, more than delta = 0\.15",
                                                   chk.problems[0]), f"2 sin(0.1) in float32 rows, 9 digits: {chk}"
    assert chk.delta_hat == pytest.approx(2 * np.sin(0.1), rel=1e-6), f"{chk}"
    assert measure_substitution(e, [0, 1, 2], CHAIN_T).delta_hat == 0.0, "nothing merged: δ̂ = 0"
    assert measure_substitution(e, [0, 1, 2], CHAIN_T).to_json()["kept"] == 3, "the JSON record"


@pytest.mark.claim("EQ1")
def test_eq1_all_pairs_up_to_max_pairs_inclusive_and_the_roundoff_term():
    """Ten rows have 45 pairs: ``max_pairs = 45`` takes all of them, ``44`` samples. On exact unit
    rows the slack is the float64 round-off term alone, ``8 (D + 2) eps``."""
    from lam_ref.theory import eq1_residuals

    e = _arc(*np.linspace(0.0, 1.5, 10))
    assert eq1_residuals(e, 0.9, max_pairs=45)["pairs"] == 45, "all pairs when there are exactly max_pairs"
    draws = np.random.default_rng(0).integers(0, 10, size=(2, 44))
    assert eq1_residuals(e, 0.9, max_pairs=44)["pairs"] == int(np.sum(draws[0] != draws[1])), "44 < 45: sampled"
    unit = np.array([[1.0, 0.0], [0.0, 1.0], [-1.0, 0.0]], dtype=np.float32)
    got = eq1_residuals(unit, 0.5)
    assert got["slack"] == 8.0 * 4 * np.finfo(np.float64).eps, f"no norm error: only round-off: {got}"


@pytest.mark.claim("EQ1")
def test_eq1_does_not_count_a_difference_inside_the_norm_error_band():
    """Two rows of squared norm ``1 + 1e-4`` whose cosine is just above ``t = 0.5`` while their
    squared distance is just above ``δ² = 1``: the two rules decide differently, but the pair is
    inside the band the norm error allows, so it is no disagreement."""
    from lam_ref.theory import eq1_residuals

    s, phi = np.sqrt(1 + 1e-4), np.arccos(0.50003)
    e = (s * _arc(0.0, phi)).astype(np.float32)
    e64 = e.astype(np.float64)
    sq = float(np.sum((e64[0] - e64[1]) ** 2))
    cos = float(e64[0] @ e64[1] / np.sqrt((e64[0] @ e64[0]) * (e64[1] @ e64[1])))
    assert sq > 1.0 and cos >= 0.5, f"the rules differ on this pair: sq {sq}, cos {cos}"
    got = eq1_residuals(e, 0.5)
    assert (got["pairs"], got["disagreements"]) == (1, 0), f"inside the band: {got}"


def test_functions_that_report_violations_accept_any_map():
    """COR1's cover check, PROP1's deficits and THM1's adversarial queries take any map of the
    right shape (a representative arriving later included, Definition 1 allows it)."""
    from lam_ref.theory import adversarial_queries, rank_deficits, top_k_cover

    e = np.array([[0.6, 0.8], [1.0, 0.0]])
    assert top_k_cover(e, [1, 1], [1.0, 0.0], 2, 0.5) is True, "row 0 is 0.894 from row 1, δ = 1"
    rd = rank_deficits(e, [1, 1], [0.0, 1.0], 1)
    assert rd.gaps.tolist() == [0.8] and rd.injective, f"{rd}"
    q = adversarial_queries(e, [1, 1])
    assert np.allclose(q, [[-0.4 / np.sqrt(0.8), 0.8 / np.sqrt(0.8)]]), f"normalize(e0 - e1): {q}"


@pytest.mark.claim("COR1")
def test_top_k_cover_bounds_are_inclusive_up_to_fp_tol():
    """A member at exactly ``δ`` or ``δ + FP_TOL`` from its representative (in distance and in
    score) is covered; one at ``δ + 2·FP_TOL`` is not."""
    from lam_ref.geometry import delta_from_t
    from lam_ref.theory import FP_TOL, top_k_cover

    t = 0.5
    delta = delta_from_t(t)
    for d, covered in ((delta, True), (delta + FP_TOL, True), (delta + 2 * FP_TOL, False)):
        e = np.array([[0.0, 0.0], [d, 0.0]])
        assert float(np.linalg.norm(e[0] - e[1])) == d, "the setup: the distance is exact"
        assert top_k_cover(e, [1, 1], [-1.0, 0.0], 1, t) is covered, f"distance and score gap {d - delta:+.1e} from δ"


@pytest.mark.claim("COR1")
def test_top_k_cover_measures_float32_rows_in_float64():
    """Rows given as float32 are measured in float64: a member whose float64 distance to its
    representative is exactly ``δ`` is covered, whatever float32 arithmetic would round it to."""
    from lam_ref.theory import top_k_cover

    found = 0
    for a in np.linspace(0.3, 0.9, 61):
        e = _arc(0.0, a).astype(np.float32)
        e64 = e.astype(np.float64)
        d = float(np.linalg.norm(e64[0] - e64[1]))
        if float(np.linalg.norm(e[0] - e[1])) <= d + 2e-12:
            continue  # float32 arithmetic would not round this one up: no evidence
        found += 1
        t = 1 - d * d / 2
        assert top_k_cover(e, [0, 0], e64[1], 2, t), f"angle {a}: distance exactly δ = {d}"
    assert found > 0, "some float32 distance rounds above its float64 value"


@pytest.mark.claim("THM1")
def test_score_deficits_and_hull_read_a_0_1_list_as_a_mask():
    """``kept`` given as a list of 0/1 is the mask it spells (not row indices)."""
    from lam_ref.theory import hull_deficit, score_deficits

    e = np.array([[1.0, 0.0], [0.0, 1.0], [0.6, 0.8]])
    got = score_deficits(e, [1, 0, 0], [0.0, 1.0])
    assert got.tolist() == [1.0], f"only row 0 retained: deficit 1 - 0: {got}"
    h = hull_deficit(e, [1, 0, 1])
    assert h.solved == 1 and h.argmax == 1 and h.complete, f"only row 1 is deleted: {h}"


@pytest.mark.claim("HULL")
def test_hull_limit_solves_the_rows_farthest_from_their_nearest_retained_row():
    """With ``limit = 1`` the deleted row whose *nearest* retained row is farthest is solved (not
    the one with the largest total distance to ``R``, nor the nearest one)."""
    from lam_ref.theory import hull_deficit

    # R = rows 0, 1 (at 0 and 90 degrees); row 2 at 10 degrees (near row 0, far from row 1 and
    # from -row 0), row 3 at 40 degrees (nearest retained row 40 degrees away).
    e = _arc(0.0, np.pi / 2, np.radians(10), np.radians(40))
    h = hull_deficit(e, [True, True, False, False], limit=1)
    assert (h.argmax, h.solved, h.complete) == (3, 1, False), f"row 3 is farthest from its nearest retained row: {h}"
    full = hull_deficit(e, [True, True, False, False])
    assert (full.solved, full.complete) == (2, True), f"{full}"


#: Scores with many exact ties (20 rows, three values); ties are broken by row order.
TIED = [0.9, 0.8, 0.8, 0.7, 0.9, 0.8, 0.7, 0.8, 0.9, 0.7, 0.8, 0.8, 0.7, 0.9, 0.8, 0.7, 0.8, 0.9, 0.7, 0.8]


def _tied_rows(first):
    """Unit rows in R^11 whose first coordinate is ``first[i]`` exactly, the rest on axis
    ``1 + i // 2`` with sign ``(-1)^i`` (so the query ``e_0`` scores row ``i`` exactly ``first[i]``)."""
    c = np.asarray(first, dtype=np.float64)
    e = np.zeros((c.size, 11))
    e[:, 0] = c
    for i in range(c.size):
        e[i, 1 + i // 2] = (-1) ** i * np.sqrt(1 - c[i] ** 2)
    return e


@pytest.mark.claim("COR1")
def test_top_k_ties_are_broken_by_row_order():
    """COR1 and PROP1 take the top-``k`` by score, ties by row id: with ``k = 3`` the top rows are
    0, 4 and 8 (the first three scoring 0.9), not row 13 (the fourth)."""
    from lam_ref.theory import rank_deficits, top_k_cover

    e = _tied_rows(TIED)
    q = np.eye(11)[0]
    assert sorted(range(20), key=lambda i: (-TIED[i], i))[:3] == [0, 4, 8], "the setup"
    pi = np.arange(20)
    pi[13] = 3  # row 13 is far from row 3: not covered, but not in the top 3
    assert top_k_cover(e, pi, q, 3, 0.999) is True, "rows 0, 4, 8 are retained: covered"
    pi = np.arange(20)
    pi[13] = 0  # rows 13 and 0 share a representative: not injective if both were in the top 3
    assert rank_deficits(e, pi, q, 3).injective is True, "rows 0, 4, 8 have distinct representatives"


@pytest.mark.claim("HULL")
def test_hull_limit_ties_are_broken_by_row_order():
    """Of deleted rows equally far from their nearest retained row, ``limit`` solves the first
    ones by row id."""
    from lam_ref.theory import hull_deficit

    pattern = [0.8, 0.8, 0.7, 0.7, 0.9, 0.9, 0.7, 0.7, 0.9, 0.9, 0.7, 0.8, 0.9, 0.7, 0.9, 0.8, 0.8, 0.8, 0.9, 0.9]
    e = np.concatenate([np.eye(11)[:1], _tied_rows(pattern)])
    kept = np.zeros(21, dtype=bool)
    kept[0] = True
    h = hull_deficit(e, kept, limit=1)
    assert (h.argmax, h.solved) == (3, 1), f"rows 3, 4, 7, ... (first coordinate 0.7) are farthest; row 3 first: {h}"
