"""What the verify report shows of each claim, and the claims' own helpers at their edges.

Written for mutants of :mod:`lam_ref.claims` that survived ``make mutation`` (docs/mutation.md):
the printed table (:func:`~lam_ref.claims._base.fmt`, :func:`~lam_ref.claims._base.pct`, each
claim's ``describe``), the JSON row, the measured keys of THM1/HULL/GEMLINK on a real set, and
the input checks of the THM1 helpers.
"""

from __future__ import annotations

import numpy as np
import pytest

from lam_ref.claims import ClaimResult, registry, scan_markers
from lam_ref.claims._base import fmt, pct

REG = registry()


def test_fmt_prints_what_the_table_shows():
    """``—`` for a missing value, yes/no for flags, integers as such, four decimals, and four
    significant digits below 1e-3 (either sign); ``digits`` changes both."""
    assert fmt(None) == "—", "a missing value is a dash"
    assert (fmt(True), fmt(False)) == ("yes", "no"), "flags read yes/no"
    assert fmt(7) == "7" and fmt(0) == "0", "integers print without decimals"
    assert fmt(0.5) == "0.5000" and fmt(-0.5) == "-0.5000", f"four decimals: {fmt(0.5)!r}, {fmt(-0.5)!r}"
    assert fmt(0.0) == "0.0000", f"zero is not a small number: {fmt(0.0)!r}"
    assert fmt(0.001) == "0.0010", f"1e-3 itself prints with decimals: {fmt(0.001)!r}"
    assert fmt(1.234567e-5) == "1.235e-05", f"below 1e-3: significant digits: {fmt(1.234567e-5)!r}"
    assert fmt(-1.234567e-5) == "-1.235e-05", f"small negatives too: {fmt(-1.234567e-5)!r}"
    assert fmt(0.5, 2) == "0.50" and fmt(1.234567e-5, 2) == "1.2e-05", "digits sets the precision"


def test_pct_prints_a_rate_with_two_decimals():
    """A rate in ``[0, 1]`` prints as a percentage with two decimals; ``None`` as a dash."""
    assert pct(None) == "—", "a missing rate is a dash"
    assert pct(0.1234) == "12.34%", f"{pct(0.1234)!r}"
    assert (pct(0.0), pct(1.0)) == ("0.00%", "100.00%"), "the ends of the range"


def test_claim_result_json_row():
    """The JSON row of ``lam-ref verify --json`` names the claim, the verdict, what was measured
    and the note, under these field names."""
    row = ClaimResult("THM1", False, {"queries": 3}, "a note")
    assert row.to_json() == {"claim": "THM1", "passed": False, "measured": {"queries": 3}, "note": "a note"}, f"{row.to_json()}"


# Each claim's line of the printed verify table, word for word: the measured values and the
# bound a reader compares them with (``lam-ref verify`` without ``--json``).
DESCRIBED = {
    "THM1": ({"max_deficit_sampled": 0.125, "max_deficit_adversarial": 0.25, "queries": 12, "delta_hat": 0.25, "delta": 0.5},
             ("max deficit: sampled 0.1250, adversarial 0.2500 (12 queries)", "[0, δ̂ = 0.2500] ⊆ [0, δ = 0.5000]")),
    "HULL": ({"sup_deficit": 0.25, "max_deficit_all": 0.125, "max_deficit_sampled": 0.0625, "delta_hat": 0.5},
             ("sup deficit (QP) 0.2500; best query found 0.1250, sampled 0.0625", "= max dist(x, conv R) <= δ̂ = 0.5000")),
    "GEMLINK": ({"energy": 0.9375, "bound_delta_hat": 0.875, "bound_delta": 0.75},
                ("E(R) = 0.9375", ">= 1 - |D|/n·δ̂² = 0.8750 >= 0.7500")),
    "DEF1": ({"delta_hat": 0.25, "kept": 3, "n": 8, "delta": 0.5},
             ("δ̂ = 0.2500, |R| = 3 of 8", "δ = 0.5000")),
    "EQ1": ({"max_residual": 0.0, "pairs": 6, "disagreements": 0, "slack": 0.5},
            ("max |sq-(2-2a·b)| 0.0000 over 6 pairs, 0 decisions differ", "<= norm slack 0.5000")),
    "C4": ({"dsu_kept": 2, "dsu_delta_hat": 0.75, "dsu_is_substitution": False, "greedy_kept": 3},
           ("components: 2 kept, δ̂ = 0.7500, a δ-substitution: no", "greedy keeps 3")),
    "COR1": ({"k": 5, "covered": 7, "queries": 8},
             ("top-5 covered for 7 of 8 queries", "each member within δ of π(x) ∈ R")),
    "BAND": ({"r": 4, "rel": 0.2, "sound": True, "equals_oracle": False, "pairs_verified": 5, "total_pairs": 10},
             ("r=4 rel=0.2: sound yes, equals oracle no, verified 5/10 pairs", "DEF1 at any (r, rel)")),
    "BAND-exhaustive": ({"mode": "exhaustive"}, ("exhaustive mode", "—")),
    "COR2": ({"H_pi_uniform": 1.5, "min_slack_bits": 0.5, "sources": 4, "log2_R": 2.0},
             ("per set: H(π(X)) under uniform X up to 1.5000 bits; least log2|R| - H(π(X)) 0.5000 over 4 sources",
              "<= log2|R| (up to 2.0000 bits)")),
    "COR2-roundoff": ({"H_pi_uniform": 0.0, "min_slack_bits": -1e-13, "sources": 4, "log2_R": 0.0},
                      ("per set: H(π(X)) under uniform X up to 0.0000 bits; least log2|R| - H(π(X)) 0.0000 over 4 sources",
                       "<= log2|R| (up to 0.0000 bits)")),
    "COR3": ({"lower_bits": 1.0, "upper_bits": 2.0, "exact_bits": 1.5, "lossless_bits": 3.0},
             ("[1.0000, 2.0000] bits, H_δ = 1.5000", "lossless 3.0000 bits")),
    "COR3-tokens": ({"lower_bits": 1.0, "upper_bits": 2.0, "exact_bits": None, "lossless_bits": 3.0,
                     "T_opt": 10.0, "T_greedy": 12.4, "T_all": 20.0},
                    ("[1.0000, 2.0000] bits, H_δ = —; T(δ) = 10 vs greedy 12 of 20 tokens", "lossless 3.0000 bits")),
    "COR3-unsolved": ({"lower_bits": 1.0, "upper_bits": 2.0, "exact_bits": None, "lossless_bits": 3.0,
                       "T_opt": None, "T_greedy": 12.0, "T_all": 20.0},
                      ("[1.0000, 2.0000] bits, H_δ = —; T(δ) = — vs greedy 12 of 20 tokens", "lossless 3.0000 bits")),
    "PROP1": ({"k": 5, "injective_queries": 3, "max_gap_injective": 0.25, "max_collapse": 0.5, "two_delta": 1.0},
              ("injective on top-5: 3 queries, max gap 0.2500; max collapse 0.5000", "gap <= δ; collapse <= 2δ = 1.0000")),
    "PROP2": ({"N": 2, "R": 3, "M": None, "N_half": 5, "R_is_packing": True},
              ("N = 2 <= |R| = 3 <= M = — <= N(δ/2) = 5", "R is a δ-packing: yes")),
    "PROP2-large": ({"R": 3, "R_is_packing": False}, ("|R| = 3", "R is a δ-packing: no")),
    "THM2": ({"attained": 0.25, "optimum": 0.5, "N": None, "attained_of_optimum": 0.5, "attained_of_ceiling": 0.25,
              "ceiling": 1.0, "t_prime": 0.5},
             ("removed 25.00%; optimum ρ* 50.00% (N = —); 50.00% of optimum, 25.00% of ceiling",
              "ρ* <= ceiling ρ_greedy(2δ) = 100.00% (t' = 0.5000)")),
}


@pytest.mark.parametrize("case", sorted(DESCRIBED))
def test_describe_prints_the_table_row(case):
    """The ``(measured, bound)`` cells of a claim's row name each quantity and show its value."""
    measured, expected = DESCRIBED[case]
    cid = case.split("-")[0]
    got = REG[cid].describe(measured)
    assert got == expected, f"{cid}: the table row reads {got!r}, expected {expected!r}"


@pytest.mark.claim("THM1")
def test_random_queries_are_seeded_unit_rows():
    """The sampled queries of THM1 are reproducible: seed 0 by default, the same seed gives the
    same rows, another seed other rows; every row has unit norm."""
    from lam_ref.claims.thm1 import random_queries

    a, b = random_queries(5, 8), random_queries(5, 8, seed=0)
    assert np.array_equal(a, b), "the default seed is 0 and the sampler is deterministic"
    assert not np.array_equal(a, random_queries(5, 8, seed=1)), "another seed samples other queries"
    assert a.shape == (8, 5) and np.allclose(np.linalg.norm(a, axis=1), 1.0), f"8 unit rows in R^5: {a.shape}"


@pytest.mark.claim("THM1")
def test_adversarial_queries_skip_exact_copies():
    """A deleted row equal to its representative loses nothing in any direction: it gives no
    query (never a NaN row); a deleted row at distance 0.5 gives one unit query."""
    from lam_ref.claims.thm1 import adversarial_queries

    e = np.array([[1.0, 0.0], [1.0, 0.0], [0.875, np.sqrt(1 - 0.875**2)]])
    q = adversarial_queries(e, [0, 0, 0])
    assert q.shape == (1, 2) and np.all(np.isfinite(q)), f"one query, for row 2 only: {q}"
    assert np.allclose(np.linalg.norm(q, axis=1), 1.0), f"the query is a unit vector: {q}"


@pytest.mark.claim("THM1")
def test_score_deficits_refuses_a_bad_mask():
    """``kept`` must be a boolean mask of shape ``(N,)`` with at least one retained row; the error
    names ``kept`` and the shape expected."""
    from lam_ref.claims.thm1 import score_deficits
    from lam_ref.geometry import LamValueError

    e = np.eye(3)
    with pytest.raises(LamValueError, match=r"kept must be a non-empty boolean mask of shape \(3,\)"):
        score_deficits(e, [True, False], [1.0, 0.0, 0.0])
    with pytest.raises(LamValueError, match=r"kept must be a non-empty boolean mask of shape \(3,\)"):
        score_deficits(e, [False, False, False], [1.0, 0.0, 0.0])
    with pytest.raises(LamValueError, match=r"kept must be a non-empty boolean mask of shape \(0,\)"):
        score_deficits(np.zeros((0, 3)), np.zeros(0, dtype=bool), [1.0, 0.0, 0.0])
    got = score_deficits(e, [True, True, False], [[0.0, 0.0, 1.0], [1.0, 0.0, 0.0]])
    assert got.tolist() == [1.0, 0.0], f"the deleted axis loses 1 for its own query, nothing elsewhere: {got}"


# Marker text is assembled at run time so this file itself holds no marker for a fake id.
MARK = "cl" + "aim"


def _write(root, rel: str, data: bytes) -> None:
    p = root / rel
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_bytes(data)


def test_scan_markers_skips_build_folders_and_reads_any_bytes(tmp_path):
    """Markers under ``.venv``, ``__pycache__`` and ``site`` are not tests of the project; a file
    with bytes that are not UTF-8 is still scanned; a ``pytestmark`` (even indented, as in a
    class) names no single test; a decorator marker names the next ``def``, not an earlier one."""
    _write(tmp_path, "tests/test_a.py",
           b"def helper(): pass\n@pytest.mark." + MARK.encode() + b'("AAA")\ndef test_a():\n    pass\n')
    _write(tmp_path, "tests/test_b.py", b"# \xff\xfe not utf-8\npytestmark = pytest.mark." + MARK.encode() + b'("BBB")\n'
           b"def test_b():\n    pass\n")
    _write(tmp_path, "tests/test_c.py", b"class TestC:\n    pytestmark = pytest.mark." + MARK.encode() + b'("CCC")\n'
           b"    def test_c(self):\n        pass\n")
    for skipped in (".venv", "__pycache__", "site"):
        _write(tmp_path, f"tests/{skipped}/test_d.py", b"@" + MARK.encode() + b'("DDD")\ndef test_d():\n    pass\n')
    got = [(m.claim, m.path, m.line, m.test) for m in scan_markers(tmp_path)]
    assert got == [("AAA", "tests/test_a.py", 2, "test_a"), ("BBB", "tests/test_b.py", 2, None),
                   ("CCC", "tests/test_c.py", 2, None)], f"markers found: {got}"


def test_registry_problems_name_the_test_the_folders_and_the_missing_part(tmp_path):
    """A problem names the offending test (``(module)`` for a ``pytestmark``), the folders that
    were searched (only those given), and a measured claim lacking its rule *or* its description."""
    from lam_ref.claims import Claim, Measurement, registry_problems

    _write(tmp_path, "checks/test_x.py", b"pytestmark = pytest.mark." + MARK.encode() + b'("NOPE")\n')
    _write(tmp_path, "tests/test_y.py", b"@" + MARK.encode() + b'("ALONE")\ndef test_y():\n    pass\n')
    measured = Claim("ALONE", "a", "x", "§0", (), measure=lambda ctx: Measurement({}), holds=None,
                     describe=lambda m: ("", ""))
    problems = registry_problems(tmp_path, [measured], dirs=("checks",))
    assert "checks/test_x.py:1: test (module) names unknown claim 'NOPE'" in problems, f"{problems}"
    assert f"claim ALONE has no test (no {MARK}('ALONE') marker under checks)" in problems, \
        f"only the folders given are scanned, and named: {problems}"
    assert "claim ALONE: has a measure but no rule (holds) or no describe" in problems, f"a rule is missing: {problems}"
    lonely = Claim("LONELY", "l", "y", "§0", ())
    two = registry_problems(tmp_path, [measured, lonely], dirs=("checks", "tests"))
    assert f"claim LONELY has no test (no {MARK}('LONELY') marker under checks, tests)" in two, f"{two}"
    assert not any(p.startswith("claim ALONE has no test") for p in two), f"the marker under tests counts: {two}"


def _ctx(e, t, pi=None, **kw):
    """A real :class:`SetContext`: the exhaustive compactor's map, or ``pi`` when given."""
    from lam_ref.claims._context import SetContext
    from lam_ref.geometry import validate_embeddings
    from lam_ref.substitution import SubstitutionResult, substitute

    e = validate_embeddings(np.asarray(e, dtype=np.float32))
    greedy = substitute(e, t, exhaustive=True)
    res = greedy
    if pi is not None:
        pi = np.asarray(pi, dtype=np.int64)
        d = np.linalg.norm(e.astype(np.float64) - e[pi].astype(np.float64), axis=1)
        res = SubstitutionResult(pi, d, t, "given", 0, 0, 0.0)
    return SetContext(e, t, res, greedy, exhaustive=True, **kw)


def _fan(theta=0.1):
    """Row 0 retained, four rows at angle ``theta`` around it (±x2, ±x3) merged into it."""
    c, s = np.cos(theta), np.sin(theta)
    return np.array([[1, 0, 0], [c, s, 0], [c, -s, 0], [c, 0, s], [c, 0, -s]], dtype=np.float64)


@pytest.mark.claim("THM1")
def test_thm1_measure_reports_each_query_family():
    """THM1's row: the largest deficit of the sampled queries and of the adversarial ones (each
    deleted row's direction and the HULL maximiser), the number of queries, the smallest and
    largest deficit over all of them, ``δ̂`` and ``δ`` — each equal to its definition."""
    from lam_ref.claims.thm1 import adversarial_queries, random_queries, score_deficits
    from lam_ref.geometry import delta_from_t

    e, t = _fan(), 0.99
    ctx = _ctx(e, t, n_queries=32, seed=3)
    m = REG["THM1"].measure(ctx).values
    kept = np.array([True, False, False, False, False])
    assert np.array_equal(ctx.kept, kept), f"all four rows merge into row 0: {ctx.pi}"
    d_rand = score_deficits(ctx.e, kept, random_queries(3, 32, 3))
    d_adv = score_deficits(ctx.e, kept, np.concatenate([adversarial_queries(ctx.e, ctx.pi), ctx.hull.query[None, :]]))
    assert m["queries"] == 32 + 4 + 1, f"32 sampled, 4 adversarial, 1 HULL query: {m['queries']}"
    assert m["max_deficit_sampled"] == pytest.approx(d_rand.max(), abs=1e-15), f"{m['max_deficit_sampled']} vs {d_rand.max()}"
    assert m["max_deficit_adversarial"] == pytest.approx(d_adv.max(), abs=1e-15), f"{m['max_deficit_adversarial']}"
    both = np.concatenate([d_rand, d_adv])
    assert m["max_deficit_all"] == pytest.approx(both.max(), abs=1e-15), f"{m['max_deficit_all']}"
    assert both.min() > 0 and m["min_deficit"] == pytest.approx(both.min(), abs=1e-15), \
        f"every query loses something here; the smallest loss is reported: {m['min_deficit']} vs {both.min()}"
    assert m["delta"] == pytest.approx(delta_from_t(t)) and m["delta_hat"] == pytest.approx(ctx.result.delta_hat), f"{m}"


@pytest.mark.claim("THM1")
def test_thm1_measure_with_nothing_deleted():
    """Nothing deleted: no adversarial query, every deficit 0; with no sampled query either,
    no query at all and the reductions report 0 (not an error)."""
    e = np.eye(3)
    m = REG["THM1"].measure(_ctx(e, 0.9, n_queries=8)).values
    assert (m["queries"], m["max_deficit_adversarial"], m["max_deficit_sampled"]) == (8, 0.0, 0.0), f"{m}"
    assert (m["min_deficit"], m["max_deficit_all"]) == (0.0, 0.0), f"{m}"
    m0 = REG["THM1"].measure(_ctx(e, 0.9, n_queries=0)).values
    assert (m0["queries"], m0["max_deficit_sampled"], m0["min_deficit"], m0["max_deficit_all"]) == (0, 0.0, 0.0, 0.0), f"{m0}"


@pytest.mark.claim("HULL")
def test_hull_measure_reports_the_supremum_and_a_partial_solve():
    """HULL's row: the solved supremum, the best query and the sampled queries' best, ``δ̂``,
    whether every deleted row was solved and the certificate gap; solving only the farthest rows
    (``hull_limit``) is said in the note."""
    e, t = _fan(), 0.99
    full = REG["HULL"].measure(_ctx(e, t, n_queries=16))
    m = full.values
    assert m["complete"] is True and full.note == "", f"every deleted row solved: {full}"
    assert m["sup_deficit"] == pytest.approx(2 * np.sin(0.05), rel=1e-6), f"conv R is row 0: each fan row is 2 sin(θ/2) away: {m}"
    assert 0 <= m["certificate_gap"] <= 1e-9 and m["max_deficit_sampled"] <= m["max_deficit_all"] <= m["sup_deficit"] + 1e-9, f"{m}"
    part = REG["HULL"].measure(_ctx(e, t, n_queries=16, hull_limit=2))
    assert part.values["complete"] is False, f"{part}"
    assert part.note == "solved the 2 deleted rows farthest from R: a lower bound", f"{part.note!r}"


@pytest.mark.claim("GEMLINK")
def test_gemlink_measure_counts_the_deleted_rows():
    """GEMLINK's bounds use ``|D|``, the deleted rows (``n - |R|``), and ``δ̂``/``δ``; the margin is
    the energy above the ``δ̂`` bound; the slack is the rows' norm error plus 1e-12."""
    from lam_ref.geometry import delta_from_t

    e, t = _fan(), 0.99
    ctx = _ctx(e, t)
    m = REG["GEMLINK"].measure(ctx).values
    dh = ctx.result.delta_hat
    assert m["bound_delta_hat"] == pytest.approx(1 - 4 / 5 * dh * dh, abs=1e-12), f"4 of 5 rows deleted: {m}"
    assert m["bound_delta"] == pytest.approx(1 - 4 / 5 * delta_from_t(t) ** 2, abs=1e-12), f"{m}"
    assert m["energy"] == pytest.approx((1 + 4 * np.cos(0.1) ** 2) / 5, abs=1e-6), f"span R is the first axis: {m}"
    assert m["min_margin"] == pytest.approx(m["energy"] - m["bound_delta_hat"], abs=1e-15), f"{m}"
    e32 = ctx.e.astype(np.float64)
    slack = float(np.abs((e32 * e32).sum(axis=1) - 1).max()) + 1e-12
    assert m["norm_slack"] == pytest.approx(slack, rel=1e-9), f"{m['norm_slack']} vs {slack}"


@pytest.mark.claim("COR1")
def test_cor1_measure_checks_only_the_top_k():
    """COR1 looks at the top-``k`` of each query only: a row mapped far away (row 2, the
    antipode of its representative) fails exactly the queries that rank it first when ``k = 1``."""
    e = np.array([[1.0, 0.0], [0.0, 1.0], [-1.0, 0.0]])
    ctx = _ctx(e, 0.9, pi=[0, 1, 0], n_queries=64, top_k=1)
    m = REG["COR1"].measure(ctx).values
    q = ctx.random_queries[:64]
    expected = int(np.sum(np.argmax(q @ e.T, axis=1) != 2))
    assert 0 < expected < 64, f"the test needs both kinds of query: {expected}"
    assert (m["k"], m["queries"], m["covered"]) == (1, 64, expected), f"{m} vs {expected} covered"


@pytest.mark.claim("PROP1")
def test_prop1_rule_bounds_are_inclusive_and_all_three_count():
    """``gap >= 0``, ``gap <= δ`` (``δ`` is half of the reported ``2δ``) and ``collapse <= 2δ``,
    each up to ``FP_TOL`` and inclusive; failing any one fails the claim."""
    from lam_ref.claims import FP_TOL

    holds = REG["PROP1"].holds
    m = {"min_gap_injective": -FP_TOL, "max_gap_injective": 0.25 + FP_TOL, "max_collapse": 0.5 + FP_TOL, "two_delta": 0.5}
    assert holds(m) is True, "every bound attained holds"
    assert holds({**m, "max_gap_injective": 0.3}) is False, "a gap above δ = 2δ/2 fails"
    assert holds({**m, "min_gap_injective": -1e-6}) is False, "a negative gap fails"
    assert holds({**m, "max_collapse": 0.6}) is False, "a collapse above 2δ fails"


@pytest.mark.claim("THM2")
def test_thm2_rule_bounds_are_inclusive_and_the_optimum_counts_only_when_solved():
    """``attained <= ceiling``; with ``N`` solved also ``attained <= ρ* <= ceiling`` (tolerances
    ``RATE_TOL`` and ``2·RATE_TOL``, inclusive); with ``N`` unknown only the first."""
    from lam_ref.claims.thm2 import RATE_TOL

    holds = REG["THM2"].holds
    r = RATE_TOL
    assert holds({"n": 4, "N": None, "optimum": None, "attained": 0.5 + r, "ceiling": 0.5}) is True, "attained = ceiling + tol holds"
    assert holds({"n": 4, "N": None, "optimum": None, "attained": 0.75, "ceiling": 0.5}) is False, "attained above the ceiling fails"
    assert holds({"n": 4, "N": 1, "optimum": 0.25, "attained": 0.25 + r, "ceiling": 0.5}) is True, "attained = ρ* + tol holds"
    assert holds({"n": 4, "N": 1, "optimum": r, "attained": 0.0, "ceiling": 0.0}) is True, "ρ* + tol = ceiling + 2 tol holds"
    assert holds({"n": 4, "N": 1, "optimum": 1.5 * r, "attained": 0.0, "ceiling": 0.0}) is False, "ρ* beyond ceiling + tol fails"
    assert holds({"n": 4, "N": 1, "optimum": 0.5, "attained": 0.2, "ceiling": 0.25}) is False, "ρ* above the ceiling fails"
    assert holds({"n": 4, "N": 1, "optimum": 0.25, "attained": 0.4, "ceiling": 0.5}) is False, "attained above ρ* fails"
    assert holds({"n": 4, "N": 1, "optimum": 0.5 + 0.9 * r, "attained": 0.5 + 1.5 * r, "ceiling": 0.5}) is False, \
        "attained above the ceiling fails even when the ρ* chain holds"


@pytest.mark.claim("HULL")
def test_hull_measure_without_queries_or_deletions():
    """No deleted row and no sampled query: every deficit HULL reports is 0 (not an error)."""
    m = REG["HULL"].measure(_ctx(np.eye(3), 0.9, n_queries=0)).values
    assert (m["sup_deficit"], m["max_deficit_sampled"], m["max_deficit_all"]) == (0.0, 0.0, 0.0), f"{m}"


@pytest.mark.claim("PROP1")
def test_prop1_measure_counts_injective_queries():
    """PROP1's row counts the queries on which π is injective on the top-``k`` and reports
    ``2δ`` of the threshold; on the fan with ``k = 2`` two members share row 0 for every query
    (all five rows map to it), with ``k = 1`` every query is injective."""
    from lam_ref.geometry import delta_from_t

    e, t = _fan(), 0.99
    one = REG["PROP1"].measure(_ctx(e, t, n_queries=16, top_k=1)).values
    assert (one["k"], one["injective_queries"], one["max_collapse"]) == (1, 16, 0.0), f"k = 1 is always injective: {one}"
    assert one["two_delta"] == pytest.approx(2 * delta_from_t(t)), f"{one}"
    two = REG["PROP1"].measure(_ctx(e, t, n_queries=16, top_k=2)).values
    assert two["injective_queries"] == 0 and 0 < two["max_collapse"] <= two["two_delta"], f"k = 2 always collapses: {two}"


@pytest.mark.claim("THM2")
def test_thm2_rates_from_the_counts():
    """THM2's rates: removed ``1 - kept/n``, ceiling ``1 - kept(2δ)/n``, optimum ``1 - N/n``, and
    the attained share of each (``None`` where the denominator is 0 or ``N`` is unknown)."""
    from lam_ref.claims.thm2 import rates

    m = {"n": 10, "kept": 4, "kept_2delta": 2, "N": 3}
    rates(m)
    assert (m["attained"], m["ceiling"], m["optimum"]) == pytest.approx((0.6, 0.8, 0.7)), f"{m}"
    assert m["attained_of_ceiling"] == pytest.approx(0.75) and m["attained_of_optimum"] == pytest.approx(0.6 / 0.7), f"{m}"
    z = {"n": 4, "kept": 4, "kept_2delta": 4, "N": 4}
    rates(z)
    assert (z["attained_of_ceiling"], z["attained_of_optimum"]) == (None, None), f"nothing removable: no share: {z}"
    u = {"n": 4, "kept": 2, "kept_2delta": 1, "N": None}
    rates(u)
    assert (u["optimum"], u["attained_of_optimum"]) == (None, None) and u["attained_of_ceiling"] == pytest.approx(2 / 3), f"{u}"
