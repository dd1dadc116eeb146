"""The claim registry (:mod:`lam_ref.claims`): every registered claim has a test, every test
names a registered claim, every implementing name imports (the same check the docs build runs)."""

from __future__ import annotations

import importlib
import re
import sys
from pathlib import Path

import numpy as np
import pytest

from lam_ref.claims import CLAIMS, Claim, ClaimResult, registry, registry_problems, resolve, scan_markers
from lam_ref.claims._base import fmt
from lam_ref.tables import pct

ROOT = Path(__file__).resolve().parents[1]
# Marker text is assembled at run time so this file itself never contains a marker for a fake id.
MARK = "cl" + "aim"

REQUIRED = {"EQ1", "DEF1", "THM1", "COR1", "PROP1", "COR2", "COR3", "PROP2", "THM2", "C4", "BAND", "HULL", "GEMLINK"}


def test_repository_registry_is_consistent():
    """No claim without a test, no test with an unknown claim, no broken implementing name."""
    problems = registry_problems(ROOT)
    assert problems == [], "registry problems:\n" + "\n".join(problems)


def test_required_claims_are_registered():
    """The issue's list of claim ids is registered, each with a LaTeX statement and location."""
    reg = registry()
    missing = REQUIRED - set(reg)
    assert not missing, f"unregistered claims: {sorted(missing)}"
    for cid in REQUIRED:
        assert reg[cid].statement and reg[cid].location, f"{cid} lacks a statement or location"


def _write(tmp: Path, rel: str, text: str) -> None:
    p = tmp / rel
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(text, encoding="utf-8")


def test_scanner_finds_markers_and_their_tests(tmp_path):
    """Decorator markers map to the next def; a module-level pytestmark maps to no single test."""
    _write(
        tmp_path,
        "tests/test_a.py",
        f'import pytest\n\n@pytest.mark.{MARK}("AAA")\n@pytest.mark.slow\ndef test_one():\n    pass\n',
    )
    _write(tmp_path, "proofs/test_b.py", f"import pytest\npytestmark = pytest.mark.{MARK}('BBB')\n")
    found = scan_markers(tmp_path)
    got = [(m.claim, m.path, m.line, m.test) for m in found]
    assert got == [("BBB", "proofs/test_b.py", 2, None), ("AAA", "tests/test_a.py", 3, "test_one")], f"markers {got}"


def test_unknown_claim_and_untested_claim_are_reported(tmp_path):
    """A marker naming an unknown id and a registered claim with no marker are both problems."""
    _write(tmp_path, "tests/test_x.py", f'import pytest\n\n@pytest.mark.{MARK}("KNOWN")\ndef test_x():\n    pass\n\n@pytest.mark.{MARK}("NOPE")\ndef test_y():\n    pass\n')
    claims = [
        Claim("KNOWN", "k", "x", "§0", ("lam_ref.geometry.delta_from_t",)),
        Claim("LONELY", "l", "y", "§0", ()),
    ]
    problems = registry_problems(tmp_path, claims)
    assert any("unknown claim 'NOPE'" in p and "test_y" in p for p in problems), f"unknown id not reported: {problems}"
    assert any("claim LONELY has no test" in p for p in problems), f"untested claim not reported: {problems}"
    assert len(problems) == 2, f"unexpected problems: {problems}"


def test_broken_implementing_name_and_duplicates_are_reported(tmp_path):
    """An implementing name that does not import, and a duplicate id, are problems."""
    _write(tmp_path, "tests/test_x.py", f'@{MARK}("KNOWN")\ndef test_x():\n    pass\n')
    bad = [Claim("KNOWN", "k", "x", "§0", ("lam_ref.geometry.no_such_function",))]
    problems = registry_problems(tmp_path, bad)
    assert len(problems) == 1 and "no_such_function" in problems[0], f"broken name not reported: {problems}"
    dup = [Claim("KNOWN", "k", "x", "§0", ()), Claim("KNOWN", "k2", "x", "§0", ())]
    assert registry_problems(tmp_path, dup) == ["claim id 'KNOWN' is registered twice"], "duplicate id not reported"


def test_resolve():
    """resolve imports module attributes and nested attributes, and raises for missing names."""
    from lam_ref.substitution import SubstitutionResult

    assert resolve("lam_ref.substitution.SubstitutionResult.delta_hat") is SubstitutionResult.delta_hat, "nested"
    with pytest.raises((ImportError, AttributeError)):
        resolve("lam_ref.nope.thing")


def test_ids_are_unique_and_well_formed():
    """Registry construction rejects lower-case ids."""
    assert len({c.id for c in CLAIMS}) == len(CLAIMS), "duplicate ids in CLAIMS"
    with pytest.raises(ValueError, match="upper-case"):
        registry([Claim("thm1", "t", "s", "l", ())])


#: Every claim id, in page order (issue 36 §5: the registry is found by scanning; none is lost).
ALL_IDS = ["EQ1", "DEF1", "THM1", "HULL", "COR1", "PROP1", "COR2", "PROP2", "THM2", "COR3", "C4", "BAND", "GEMLINK",
           "ONLINE", "AMDAHL", "ETA", "STAB", "GEM-A", "CCT-THM1", "CCT-COR2", "CCT-THM3", "CCT-COUNT", "CCT-KRAFT",
           "CCT-BLOOM", "CCT-APPA", "CCT-LAM", "CCT-COVER"]


def test_claims_are_found_by_scanning_the_package():
    """Every claim is found by scanning ``lam_ref/claims`` (a measured claim's module ``CLAIM``, the
    metadata-only ``claims.metadata.CLAIMS``), in page order; the measured ones are exactly those
    with a module of their own, and each metadata-only claim has no module."""
    import pkgutil

    import lam_ref.claims as pkg
    from lam_ref.claims import measured_claims
    from lam_ref.claims.metadata import CLAIMS as METADATA

    assert [c.id for c in CLAIMS] == ALL_IDS, [c.id for c in CLAIMS]
    modules = {m.name for m in pkgutil.iter_modules(pkg.__path__) if not m.name.startswith("_")} - {"metadata"}
    own = {importlib.import_module(f"lam_ref.claims.{m}").CLAIM.id for m in modules}
    assert own == {c.id for c in measured_claims()}, f"modules {sorted(own)} vs measured claims"
    assert not any(c.measured_on_data for c in METADATA), "metadata.CLAIMS holds no measured claim"
    assert {c.id for c in METADATA} | own == set(ALL_IDS), "every claim is in one of the two places"


def test_a_claim_module_without_a_record_is_refused(tmp_path, monkeypatch):
    """A claim module defining neither ``CLAIM`` nor ``CLAIMS`` fails the scan (never silently left out)."""
    import lam_ref.claims as pkg

    (tmp_path / "nothing_here.py").write_text("X = 1\n")
    monkeypatch.setattr(pkg, "__path__", [*pkg.__path__, str(tmp_path)])
    monkeypatch.delitem(sys.modules, "lam_ref.claims.nothing_here", raising=False)
    try:
        with pytest.raises(ImportError, match="nothing_here defines neither CLAIM nor CLAIMS"):
            pkg._scan()
    finally:
        sys.modules.pop("lam_ref.claims.nothing_here", None)


def test_docs_generator_fails_on_an_unknown_claim(tmp_path):
    """docs/claims_page.generate raises (failing the docs build) when a test names an unknown id,
    and writes the claims page plus one page per test file otherwise."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("claims_page", ROOT / "docs" / "claims_page.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    written: dict[str, str] = {}

    class Sink:
        def __init__(self, name):
            self.name = name
            self.parts: list[str] = []

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            written[self.name] = "".join(self.parts)

        def write(self, text):
            self.parts.append(text)

    pages = mod.generate(lambda name, mode: Sink(name), ROOT)
    assert "claims.md" in written and all(p in written for p in pages), "pages written"
    for c in CLAIMS:
        assert f"[](){{#{c.id}}}" in written["claims.md"], f"{c.id} missing from the claims page (its anchor)"
    assert "claims/tests/property_tests/test_thm1.md" in written, "test page for THM1's module"
    assert "../../../claims.md#THM1" in written["claims/tests/property_tests/test_thm1.md"], "back link"
    _write(tmp_path, "tests/test_x.py", f'@{MARK}("NOPE")\ndef test_x():\n    pass\n')
    with pytest.raises(RuntimeError, match="unknown claim 'NOPE'"):
        mod.generate(lambda name, mode: Sink(name), tmp_path)


def test_every_measured_key_has_an_aggregation_rule():
    """Over two sets, in banded and exhaustive mode, with token weights (``T(δ)``), every
    measured claim combines without an unknown key: no silent default aggregation exists."""
    import numpy as np

    from lam_ref.claims import measured_claims
    from lam_ref.verify import aggregate, verify_set

    rng = np.random.default_rng(4)
    base = rng.standard_normal((4, 6))
    rows = np.array([b + s * rng.standard_normal(6) for b in base for s in (0.0, 0.05, 0.3)])
    e = (rows / np.linalg.norm(rows, axis=1, keepdims=True)).astype(np.float32)
    w = list(range(1, 13))
    for exhaustive in (False, True):
        reps = [verify_set(e, 0.9, n_queries=8, weights=w, exhaustive=exhaustive), verify_set(e[:7], 0.9, n_queries=8, weights=w[:7], exhaustive=exhaustive)]
        combined = {r.claim: r for r in aggregate(reps)}
        want = {c.id for c in measured_claims()}
        assert set(combined) == want, f"claims combined {sorted(combined)} vs measured {sorted(want)}"
        for c in measured_claims():
            assert set(combined[c.id].measured) <= set(c.aggregation), f"{c.id}: keys without a rule"
            assert combined[c.id].passed is not False, f"{c.id} fails on valid data: {combined[c.id]}"


def test_metadata_only_claims_are_skipped_by_verify():
    """A claim with only metadata (no ``measure``) is listed on the claims page but not measured;
    a claim with a measure but no rule is a registry problem."""
    import numpy as np

    from lam_ref.verify import verify_set

    plain = Claim("PLAIN", "p", "x", "§0", ())
    assert not plain.measured_on_data, "no measure: metadata only"
    rep = verify_set(np.eye(2, dtype=np.float32), 0.9, n_queries=4, claims=[plain, registry()["EQ1"]])
    assert list(rep.results) == ["EQ1"], f"only measured claims run: {list(rep.results)}"
    broken = [Claim("HALF", "h", "x", "§0", (), measure=lambda ctx: None)]
    problems = registry_problems(ROOT, broken, dirs=())
    assert any("has a measure but no rule" in p for p in problems), f"a measure without a rule: {problems}"


# ------------------------------------------------------------------------------------------------
# Mutation kills (docs/mutation.md; formerly tests/test_mutation_kills_claims.py)
# What the verify report shows of each claim, and the claims' own helpers at their edges.
#
# Written for mutants of :mod:`lam_ref.claims` that survived ``make mutation`` (docs/mutation.md):
# the printed table (:func:`~lam_ref.claims._base.fmt`, :func:`~lam_ref.tables.pct`, each
# claim's ``describe``), the JSON row, the measured keys of THM1/HULL/GEMLINK on a real set, and
# the input checks of the THM1 helpers.
# ------------------------------------------------------------------------------------------------


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
    "PROP2-solved": ({"N": 2, "R": 3, "M": 4, "N_half": 5, "R_is_packing": True},
                     ("N = 2 <= |R| = 3 <= M = 4 <= N(δ/2) = 5", "R is a δ-packing: yes")),
    "PROP2-large": ({"R": 3, "R_is_packing": False}, ("|R| = 3", "R is a δ-packing: no")),
    "THM2": ({"attained": 0.25, "optimum": 0.5, "N": None, "attained_of_optimum": 0.5, "attained_of_ceiling": 0.25,
              "ceiling": 1.0, "t_prime": 0.5},
             ("removed 25.00%; optimum ρ* 50.00% (N = —); 50.00% of optimum, 25.00% of ceiling",
              "ρ* <= ceiling ρ_greedy(2δ) = 100.00% (t' = 0.5000)")),
    "THM2-solved": ({"attained": 0.25, "optimum": 0.5, "N": 3, "attained_of_optimum": 0.5, "attained_of_ceiling": 0.25,
                     "ceiling": 1.0, "t_prime": 0.5},
                    ("removed 25.00%; optimum ρ* 50.00% (N = 3); 50.00% of optimum, 25.00% of ceiling",
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


# Marker text is assembled at run time so this file itself holds no marker for a fake id.


def _write_bytes(root, rel: str, data: bytes) -> None:
    p = root / rel
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_bytes(data)


def test_scan_markers_skips_build_folders_and_reads_any_bytes(tmp_path):
    """Markers under ``.venv``, ``__pycache__`` and ``site`` are not tests of the project; a file
    with bytes that are not UTF-8 is still scanned; a ``pytestmark`` (even indented, as in a
    class) names no single test; a decorator marker names the next ``def``, not an earlier one."""
    _write_bytes(tmp_path, "tests/test_a.py",
           b"def helper(): pass\n@pytest.mark." + MARK.encode() + b'("AAA")\ndef test_a():\n    pass\n')
    _write_bytes(tmp_path, "tests/test_b.py", b"# \xff\xfe not utf-8\npytestmark = pytest.mark." + MARK.encode() + b'("BBB")\n'
           b"def test_b():\n    pass\n")
    _write_bytes(tmp_path, "tests/test_c.py", b"class TestC:\n    pytestmark = pytest.mark." + MARK.encode() + b'("CCC")\n'
           b"    def test_c(self):\n        pass\n")
    for skipped in (".venv", "__pycache__", "site"):
        _write_bytes(tmp_path, f"tests/{skipped}/test_d.py", b"@" + MARK.encode() + b'("DDD")\ndef test_d():\n    pass\n')
    got = [(m.claim, m.path, m.line, m.test) for m in scan_markers(tmp_path)]
    assert got == [("AAA", "tests/test_a.py", 2, "test_a"), ("BBB", "tests/test_b.py", 2, None),
                   ("CCC", "tests/test_c.py", 2, None)], f"markers found: {got}"


def test_registry_problems_name_the_test_the_folders_and_the_missing_part(tmp_path):
    """A problem names the offending test (``(module)`` for a ``pytestmark``), the folders that
    were searched (only those given), and a measured claim lacking its rule *or* its description."""
    from lam_ref.claims import Claim, Measurement, registry_problems

    _write_bytes(tmp_path, "checks/test_x.py", b"pytestmark = pytest.mark." + MARK.encode() + b'("NOPE")\n')
    _write_bytes(tmp_path, "tests/test_y.py", b"@" + MARK.encode() + b'("ALONE")\ndef test_y():\n    pass\n')
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
    largest deficit over all of them, ``δ̂`` and ``δ`` — each equal to its definition.

    Tolerance (issue 22): the measure and this test compute the same deficits through BLAS
    products of different shapes, so the summation order may differ. Each score is a 3-term dot
    product of unit vectors, off by at most ``γ₃ ≈ 3u`` (``u = 2⁻⁵³``); a deficit is a difference
    of two scores, so two evaluations differ by at most ``4γ₃ + 2u < 16u ≈ 1.8e-15``. A wrong
    query family or a max taken over the wrong rows moves a deficit by far more."""
    from lam_ref.geometry import delta_from_t
    from lam_ref.theory import adversarial_queries, random_queries, score_deficits

    e, t = _fan(), 0.99
    ctx = _ctx(e, t, n_queries=32, seed=3)
    m = REG["THM1"].measure(ctx).values
    kept = np.array([True, False, False, False, False])
    assert np.array_equal(ctx.kept, kept), f"all four rows merge into row 0: {ctx.pi}"
    d_rand = score_deficits(ctx.e, kept, random_queries(3, 32, 3))
    d_adv = score_deficits(ctx.e, kept, np.concatenate([adversarial_queries(ctx.e, ctx.pi), ctx.hull.query[None, :]]))
    assert m["queries"] == 32 + 4 + 1, f"32 sampled, 4 adversarial, 1 HULL query: {m['queries']}"
    tol = 16 * 2.0**-53
    assert m["max_deficit_sampled"] == pytest.approx(d_rand.max(), abs=tol), f"{m['max_deficit_sampled']} vs {d_rand.max()}"
    assert m["max_deficit_adversarial"] == pytest.approx(d_adv.max(), abs=tol), f"{m['max_deficit_adversarial']}"
    both = np.concatenate([d_rand, d_adv])
    assert m["max_deficit_all"] == pytest.approx(both.max(), abs=tol), f"{m['max_deficit_all']}"
    assert both.min() > 0 and m["min_deficit"] == pytest.approx(both.min(), abs=tol), \
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
    from lam_ref.theory import FP_TOL

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


# ---------------------------------------------------------------------------------------------
# The measures of BAND, C4, THM2, COR3, PROP2, COR2, DEF1 and EQ1 on small sets worked by hand.
# ---------------------------------------------------------------------------------------------


def _arc(*angles):
    """Unit rows on the first quarter circle at the given angles (radians), float64."""
    a = np.asarray(angles, dtype=np.float64)
    return np.stack([np.cos(a), np.sin(a)], axis=1)


#: Three rows at angles 0, 0.1, 0.2 and ``δ = 0.15``: neighbours are ``2 sin(0.05) ≈ 0.09996``
#: apart (within δ), the ends ``2 sin(0.1) ≈ 0.19967`` (beyond δ, within 2δ). Greedy keeps rows 0
#: and 2; the middle row covers all three (``N(δ) = 1``); at ``2δ`` greedy keeps row 0 alone.
CHAIN_T = 1.0 - 0.15**2 / 2


def _banded_ctx(e, t, pi, **kw):
    """A :class:`SetContext` in banded mode whose map under test is ``pi`` (any map)."""
    from lam_ref.claims._context import SetContext
    from lam_ref.geometry import validate_embeddings
    from lam_ref.substitution import SubstitutionResult, substitute

    e = validate_embeddings(np.asarray(e, dtype=np.float32))
    greedy = substitute(e, t, exhaustive=True)
    pi = np.asarray(pi, dtype=np.int64)
    d = np.linalg.norm(e.astype(np.float64) - e[pi].astype(np.float64), axis=1)
    res = SubstitutionResult(pi, d, t, "banded", 7, 11, 0.0)
    return SetContext(e, t, res, greedy, exhaustive=False, **kw)


@pytest.mark.claim("BAND")
def test_band_measure_reports_settings_soundness_and_recall():
    """BAND's row: ``r``, ``rel`` as given, soundness (DEF1 of the banded map), equality with the
    oracle, the pair counts of the run; a sound map with fewer merges is noted; in exhaustive mode
    there is no band index and no verdict."""
    band = REG["BAND"]
    e = _arc(0.0, 0.1, 0.2)
    same = band.measure(_banded_ctx(e, CHAIN_T, [0, 0, 2], r=3, rel=0.25))
    assert same.values == {"r": 3, "rel": 0.25, "sound": True, "equals_oracle": True, "pairs_verified": 7,
                           "total_pairs": 11}, f"{same}"
    assert same.note == "", f"equal to the oracle: no note: {same.note!r}"
    fewer = band.measure(_banded_ctx(e, CHAIN_T, [0, 1, 2]))
    assert (fewer.values["sound"], fewer.values["equals_oracle"]) == (True, False), f"{fewer}"
    assert fewer.note == "candidate recall incomplete: sound but fewer merges than the oracle", f"{fewer.note!r}"
    bad = band.measure(_banded_ctx(e, CHAIN_T, [0, 0, 0]))
    assert bad.values["sound"] is False and band.holds(bad.values) is False, f"row 2 is beyond δ of row 0: {bad}"
    assert band.holds(same.values) is True, "a sound banded map holds"
    assert band.holds({"sound": 1}) is True and band.holds({"sound": 0}) is False, "the verdict is a bool"
    ex = band.measure(_ctx(e, CHAIN_T))
    assert ex == ({"mode": "exhaustive"}, "exhaustive mode: no band index in use"), f"{ex}"
    assert band.holds(ex.values) is None, "exhaustive mode: informational"


@pytest.mark.claim("C4")
def test_c4_measure_on_a_chain_and_on_a_clique(monkeypatch):
    """C4's row on the chain: one component kept as row 0, whose far end is ``2 sin(0.1)`` away
    (not a δ-substitution); greedy keeps 2. On a tighter set the components are valid. Sets with
    more than ``MAX_ROWS`` rows are not measured (the bound is inclusive)."""
    from lam_ref.claims import c4

    e = _arc(0.0, 0.1, 0.2)
    chain = REG["C4"].measure(_ctx(e, CHAIN_T))
    assert chain.values["dsu_kept"] == 1 and chain.values["greedy_kept"] == 2, f"{chain}"
    assert chain.values["dsu_delta_hat"] == pytest.approx(2 * np.sin(0.1), rel=1e-6), f"{chain}"
    assert chain.values["dsu_is_substitution"] is False, f"{chain}"
    assert chain.note == "DSU exceeds delta here (counterexample present)", f"{chain.note!r}"
    tight = REG["C4"].measure(_ctx(_arc(0.0, 0.05, 0.1), CHAIN_T))
    assert tight.values["dsu_is_substitution"] is True and tight.values["dsu_kept"] == 1, f"{tight}"
    assert tight.note == "DSU happens to be valid on this set", f"{tight.note!r}"
    assert REG["C4"].holds(chain.values) is None, "informational"
    monkeypatch.setattr(c4, "MAX_ROWS", 3)
    assert REG["C4"].measure(_ctx(e, CHAIN_T)) is not None, "n = MAX_ROWS is measured"
    monkeypatch.setattr(c4, "MAX_ROWS", 2)
    assert REG["C4"].measure(_ctx(e, CHAIN_T)) is None, "n > MAX_ROWS is not"


@pytest.mark.claim("THM2")
def test_thm2_measure_counts_on_the_chain():
    """THM2 on the chain: ``t' = 4t - 3``, ``n = 3``, greedy keeps 2, at ``2δ`` 1, ``N(δ) = 1``;
    so removed 1/3, ceiling and optimum 2/3 (and it holds)."""
    m = REG["THM2"].measure(_ctx(_arc(0.0, 0.1, 0.2), CHAIN_T)).values
    assert m["t_prime"] == pytest.approx(4 * CHAIN_T - 3, abs=1e-15), f"{m}"
    assert (m["n"], m["kept"], m["kept_2delta"], m["N"]) == (3, 2, 1, 1), f"{m}"
    assert (m["attained"], m["ceiling"], m["optimum"]) == pytest.approx((1 / 3, 2 / 3, 2 / 3)), f"{m}"
    assert REG["THM2"].holds(m) is True, f"{m}"


@pytest.mark.claim("THM2")
def test_thm2_rates_share_of_the_ceiling_only_when_positive():
    """A zero ceiling gives no share (``None``) whatever ``N``; a positive one gives the ratio."""
    from lam_ref.claims.thm2 import rates

    m = {"n": 4, "kept": 4, "kept_2delta": 4, "N": None}
    rates(m)
    assert (m["attained"], m["ceiling"], m["attained_of_ceiling"], m["optimum"], m["attained_of_optimum"]) == \
        (0.0, 0.0, None, None, None), f"{m}"
    m = {"n": 8, "kept": 6, "kept_2delta": 4, "N": 8}
    rates(m)
    assert (m["attained_of_ceiling"], m["optimum"], m["attained_of_optimum"]) == (0.5, 0.0, None), f"{m}"


@pytest.mark.claim("COR3")
def test_cor3_measure_bits_and_tokens_on_the_chain():
    """COR3 on the chain: ``|R(2δ)| = 1``, ``|R| = 2``, ``N = 1`` of 3 rows, so bits 0, 1, 0 and
    log2 3; with weights ``[1, 5, 1]`` the cheapest δ-cover is rows 0 and 2 (2 tokens, as greedy's),
    of 7; without exactness or weights no token keys."""
    e = _arc(0.0, 0.1, 0.2)
    m = REG["COR3"].measure(_ctx(e, CHAIN_T, weights=[1.0, 5.0, 1.0])).values
    assert (m["n"], m["kept_2delta"], m["R"], m["N"]) == (3, 1, 2, 1), f"{m}"
    assert (m["lower_bits"], m["upper_bits"], m["exact_bits"]) == (0.0, 1.0, 0.0), f"{m}"
    assert m["lossless_bits"] == pytest.approx(np.log2(3)), f"{m}"
    assert (m["T_opt"], m["T_greedy"], m["T_all"]) == (2.0, 2.0, 7.0), f"{m}"
    assert REG["COR3"].holds(m) is True, f"{m}"
    cheap_middle = REG["COR3"].measure(_ctx(e, CHAIN_T, weights=[1.0, 0.5, 1.0])).values
    assert (cheap_middle["T_opt"], cheap_middle["T_greedy"]) == (0.5, 2.0), f"the middle row alone: {cheap_middle}"
    plain = REG["COR3"].measure(_ctx(e, CHAIN_T)).values
    assert "T_opt" not in plain, f"no weights: no T(δ): {plain}"
    inexact = REG["COR3"].measure(_ctx(e, CHAIN_T, weights=[1.0, 5.0, 1.0], exact_limit=2)).values
    assert "T_opt" not in inexact and inexact["N"] is None, f"n > exact_limit: no MILP: {inexact}"


@pytest.mark.claim("COR3")
def test_cor3_rule_each_inequality_counts():
    """``|R(2δ)| <= |R|``; with ``N``: ``|R(2δ)| <= N <= |R|``; with ``T(δ)``: ``T(δ) <= T_greedy``
    up to ``TOKEN_TOL``, inclusive."""
    from lam_ref.claims.cor3 import TOKEN_TOL

    holds = REG["COR3"].holds
    base = {"kept_2delta": 2, "R": 4, "N": 3}
    assert holds(base) is True and holds({**base, "N": None}) is True, "inside the bracket"
    assert holds({**base, "N": 2}) is True and holds({**base, "N": 4}) is True, "both ends inclusive"
    assert holds({**base, "N": 1}) is False, "N below |R(2δ)| fails"
    assert holds({**base, "N": 5}) is False, "N above |R| fails"
    assert holds({"kept_2delta": 5, "R": 4, "N": None}) is False, "|R(2δ)| above |R| fails without N"
    assert holds({"kept_2delta": 4, "R": 4, "N": None}) is True, "|R(2δ)| = |R| holds"
    tok = {**base, "T_greedy": 12.0}
    assert holds({**tok, "T_opt": 12.0 + TOKEN_TOL}) is True, "T(δ) = T_greedy + tol holds"
    assert holds({**tok, "T_opt": 12.0 + 1e-6}) is False, "T(δ) above T_greedy fails"
    assert holds({**tok, "T_opt": None}) is True, "an unsolved T(δ) is not checked"
    assert holds({"kept_2delta": 5, "R": 4, "N": None, "T_opt": 1.0, "T_greedy": 2.0}) is False, \
        "a T(δ) that holds does not hide a failed bracket"


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


@pytest.mark.claim("COR2")
def test_cor2_sources_are_uniform_dirichlet_and_a_point_mass():
    """``sources(n, count, rng)``: the uniform law, ``count`` Dirichlet(0.3) draws of the
    generator, then a point mass at a row the generator picks next."""
    from lam_ref.claims.cor2 import sources

    got = sources(5, 3, np.random.default_rng(7))
    rng = np.random.default_rng(7)
    want = [np.full(5, 0.2)] + [rng.dirichlet([0.3] * 5) for _ in range(3)]
    point = np.zeros(5)
    point[rng.integers(5)] = 1.0
    want.append(point)
    assert len(got) == 5, f"uniform, 3 draws, a point mass: {len(got)}"
    for i, (g, w) in enumerate(zip(got, want)):
        assert np.array_equal(g, w), f"source {i}: {g} vs {w}"


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


@pytest.mark.claim("COR2")
def test_cor2_measure_on_the_chain():
    """COR2 on the chain (greedy maps row 1 to row 0): under the uniform law ``H(π(X)) =
    H(2/3, 1/3)``, ``log2|R| = 1``, six sources, the least slack over them and an identity error
    of (almost) 0; the rule is inclusive at both tolerances."""
    from lam_ref.claims.cor2 import BITS_TOL, sources

    ctx = _ctx(_arc(0.0, 0.1, 0.2), CHAIN_T, seed=5)
    m = REG["COR2"].measure(ctx).values
    h_uniform = -(2 / 3 * np.log2(2 / 3) + 1 / 3 * np.log2(1 / 3))
    assert m["H_pi_uniform"] == pytest.approx(h_uniform, abs=1e-12) and m["log2_R"] == 1.0, f"{m}"
    slack = []
    for p in sources(3, 4, np.random.default_rng(5)):
        q = np.array([p[0] + p[1], p[2]])
        q = q[q > 0]
        slack.append(1.0 + float((q * np.log2(q)).sum()))
    assert m["sources"] == 6 and m["min_slack_bits"] == pytest.approx(min(slack), abs=1e-12), f"{m} vs {slack}"
    assert 0 <= m["max_identity_error"] <= 1e-12, f"{m}"
    holds = REG["COR2"].holds
    assert holds({"min_slack_bits": -BITS_TOL, "max_identity_error": BITS_TOL}) is True, "both tolerances inclusive"
    assert holds({"min_slack_bits": -2 * BITS_TOL, "max_identity_error": 0.0}) is False, "H(π(X)) above log2|R| fails"
    assert holds({"min_slack_bits": 0.0, "max_identity_error": 2 * BITS_TOL}) is False, "I != H(π(X)) fails"


@pytest.mark.claim("COR2")
def test_cor2_describe_rounds_only_round_off_to_zero():
    """A slack within ``(-BITS_TOL, 0)`` is round-off of an equality and prints as 0; ``-BITS_TOL``
    itself and anything below print as they are."""
    from lam_ref.claims.cor2 import BITS_TOL

    row = {"H_pi_uniform": 1.0, "sources": 6, "log2_R": 1.0}
    for slack, shown in ((-BITS_TOL, "-1e-09"), (-2e-9, "-2e-09"), (-5e-10, "0.0000"), (0.25, "0.2500")):
        got = REG["COR2"].describe({**row, "min_slack_bits": slack})[0]
        assert f"least log2|R| - H(π(X)) {shown} over 6" in got, f"slack {slack}: {got!r}"


@pytest.mark.claim("DEF1")
def test_def1_measure_and_rule():
    """DEF1's row: ``δ``, the measured ``δ̂`` and the compactor's reported one, ``|R|``, ``n``, the
    verdicts; the note lists the problems; the rule needs validity, order and ``δ̂`` reported to
    1e-15 (inclusive)."""
    e = _arc(0.0, 0.1, 0.2)
    ok = REG["DEF1"].measure(_ctx(e, CHAIN_T))
    d01 = np.linalg.norm(np.float32(e[0]) - np.float32(e[1]))
    assert ok.note == "" and ok.values["valid"] is True and ok.values["ordered"] is True, f"{ok}"
    assert (ok.values["kept"], ok.values["n"]) == (2, 3), f"{ok}"
    assert ok.values["delta"] == pytest.approx(0.15, abs=1e-12), f"{ok}"
    assert ok.values["delta_hat"] == pytest.approx(d01, rel=1e-6) == ok.values["delta_hat_reported"], f"{ok}"
    bad = REG["DEF1"].measure(_ctx(e, CHAIN_T, pi=[0, 0, 0]))
    assert bad.values["valid"] is False and bad.note.startswith("row 2 is 0.19966"), f"{bad}"
    two = REG["DEF1"].measure(_ctx(e, CHAIN_T, pi=[0, 2, 0]))
    assert re.fullmatch(r"pi\[1\] = 2 is not retained \(pi\[2\] = 0\); row 2 is 0\.19966\d+ from pi\[2\] = 0, "
                        r"more than delta = 0\.15", two.note), f"two problems, joined by '; ': {two.note!r}"
    holds = REG["DEF1"].holds
    m = {"valid": True, "ordered": True, "delta_hat": 0.5, "delta_hat_reported": 0.5 + 1e-15}
    assert holds(m) is True, "reported δ̂ within 1e-15 holds"
    assert holds({**m, "delta_hat_reported": 0.5 + 1e-14}) is False, "a reported δ̂ off by 1e-14 fails"
    assert holds({**m, "valid": False}) is False and holds({**m, "ordered": False}) is False, "both verdicts count"


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
def test_eq1_residuals_on_all_pairs_and_on_a_sample():
    """All ``n(n-1)/2`` pairs when there are at most ``max_pairs`` (inclusive), else ``max_pairs``
    random pairs less those with ``i = j``; a pair on the threshold's either side is decided
    alike by both rules; fewer than two rows give no pair."""
    from lam_ref.theory import eq1_residuals

    e = _arc(0.0, 0.1, 0.2, 0.3)
    full = eq1_residuals(e, CHAIN_T, max_pairs=6)
    assert (full["pairs"], full["disagreements"], full["within_slack"]) == (6, 0, True), f"{full}"
    assert 0 <= full["max_residual"] <= full["slack"] < 1e-6, f"{full}"
    for seed in range(10):
        sampled = eq1_residuals(e, CHAIN_T, max_pairs=5, seed=seed)
        rng = np.random.default_rng(seed)
        i, j = rng.integers(0, 4, size=5), rng.integers(0, 4, size=5)
        assert sampled["pairs"] == int(np.sum(i != j)), f"seed {seed}: {sampled} vs {int(np.sum(i != j))}"
    assert eq1_residuals(e[:1], CHAIN_T) == {"pairs": 0, "max_residual": 0.0, "slack": 0.0, "disagreements": 0,
                                            "within_slack": True}, "one row: no pair"
    m = REG["EQ1"].measure(_ctx(e, CHAIN_T, seed=1)).values
    assert m == eq1_residuals(e.astype(np.float32), CHAIN_T, seed=1), f"{m}"
    holds = REG["EQ1"].holds
    assert holds({"disagreements": 0, "within_slack": True}) is True, "no disagreement, within the slack"
    assert holds({"disagreements": 1, "within_slack": True}) is False, "a differing decision fails"
    assert holds({"disagreements": 0, "within_slack": False}) is False, "a residual beyond the slack fails"


@pytest.fixture
def probe_package(tmp_path, monkeypatch):
    """A fresh package ``_lamref_probe`` on ``sys.path``: ``shadow`` is a submodule *and* a function
    of the package (the function wins as attribute), ``lazy`` a submodule the package does not
    import. Removed from ``sys.modules`` afterwards."""
    import sys

    pkg = tmp_path / "_lamref_probe"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("from .shadow import shadow\n")
    (pkg / "shadow.py").write_text("def shadow():\n    return 1\n\n\nclass K:\n    def m(self):\n        return 2\n")
    (pkg / "lazy.py").write_text("def f():\n    return 3\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    yield "_lamref_probe"
    for name in [n for n in sys.modules if n == "_lamref_probe" or n.startswith("_lamref_probe.")]:
        del sys.modules[name]


def test_resolve_imports_the_longest_module_prefix_then_attributes(probe_package):
    """``resolve`` imports the longest prefix that is a module (a submodule the package does not
    import included) and takes the rest as attributes: an attribute that shadows a submodule is
    the attribute; a two-part name is a module's attribute."""
    import importlib

    from lam_ref.claims import resolve

    shadow_mod = importlib.import_module(f"{probe_package}.shadow")
    assert resolve(f"{probe_package}.shadow") is importlib.import_module(probe_package).shadow, "the function, not the module"
    assert resolve(f"{probe_package}.shadow") is not shadow_mod, "the attribute shadows the submodule"
    assert resolve(f"{probe_package}.shadow.K.m") is shadow_mod.K.m, "module, class, method"
    assert resolve(f"{probe_package}.lazy.f")() == 3, "a submodule the package does not import is imported"
    assert resolve("json.dumps") is importlib.import_module("json").dumps, "two parts: a module's attribute"
    with pytest.raises(ImportError, match=r"cannot import 'nosuchmodule_xyz\.thing'"):
        resolve("nosuchmodule_xyz.thing")


def _bounded(value, lower, upper):
    """The record of a MILP stopped by its time limit with a feasible, unproven solution."""
    from lam_ref.covering import ExactResult

    return ExactResult(float(value), np.zeros(0, dtype=np.int64), False, float(lower), float(upper), "milp", 0.0)


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


@pytest.mark.claim("COR3")
def test_cor3_token_optimum_uses_the_time_limit_and_only_a_proven_value(monkeypatch):
    """COR3 passes the context's time limit to the ``T(δ)`` MILP (with no time at all on 60 rows
    the solver finds no solution and the error says so) and reports ``T(δ)`` only when proven
    optimal. The exact ``N`` is solved first without a limit; the unproven ``T(δ)`` is the record
    of a time-limited solve (a time-out with a solution cannot be produced deterministically)."""
    from lam_ref.claims import cor3
    from lam_ref.covering import covering_number
    from lam_ref.geometry import LamValueError

    rng = np.random.default_rng(0)
    e = rng.standard_normal((60, 8))
    e /= np.linalg.norm(e, axis=1, keepdims=True)
    ctx = _ctx(e, 0.3, weights=rng.uniform(1.0, 5.0, 60), time_limit=0.0)
    ctx.covering = covering_number(ctx.e, 0.3)
    with pytest.raises(LamValueError, match="token_weighted_optimum: the MILP solver returned no solution"):
        REG["COR3"].measure(ctx)
    monkeypatch.setattr(cor3, "token_weighted_optimum", lambda *a, **k: _bounded(2.0, 1.0, 2.0))
    m = REG["COR3"].measure(_ctx(_arc(0.0, 0.1, 0.2), CHAIN_T, weights=[1.0, 5.0, 1.0])).values
    assert m["T_opt"] is None and (m["T_greedy"], m["T_all"]) == (2.0, 7.0), f"an unproven T(δ) is not reported: {m}"


@pytest.mark.claim("EQ1")
def test_eq1_samples_above_100000_pairs_with_the_seed():
    """448 rows have 100128 pairs, more than the default ``max_pairs``: 100000 pairs are drawn,
    with seed 0 by default; EQ1's measure draws them with the set's seed."""
    from lam_ref.theory import eq1_residuals

    rng = np.random.default_rng(0)
    e = rng.standard_normal((448, 4))
    e = (e / np.linalg.norm(e, axis=1, keepdims=True)).astype(np.float32)
    r0, r1 = eq1_residuals(e, 0.9, seed=0), eq1_residuals(e, 0.9, seed=1)
    draws = np.random.default_rng(1).integers(0, 448, size=(2, 100_000))
    assert r1["pairs"] == int(np.sum(draws[0] != draws[1])) != r0["pairs"], f"sampled, by the seed: {r0} {r1}"
    assert eq1_residuals(e, 0.9) == r0, "the default seed is 0"
    assert REG["EQ1"].measure(_ctx(e, 0.9, seed=1)).values == r1, "the measure uses the set's seed"


@pytest.mark.claim("PROP1")
def test_prop1_measure_with_an_empty_top_list():
    """``k = 0``: every top list is empty, hence injective, with no gap and no collapse (the
    statement is vacuous, not an error)."""
    m = REG["PROP1"].measure(_ctx(_fan(), 0.99, n_queries=8, top_k=0)).values
    assert (m["injective_queries"], m["max_gap_injective"], m["min_gap_injective"], m["max_collapse"]) == (8, 0.0, 0.0, 0.0), f"{m}"


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


@pytest.mark.claim("COR2")
def test_map_entropy_and_cor3_tokens_computed_in_float64():
    """A float32 law and float32 token weights are summed in float64 (the values as given).

    Tolerance: the entropies are three-term sums of ``p·log2 p`` over the same float64 values
    (no BLAS); summed in any order they differ by at most ``2u·Σ|p log2 p| ≈ 3.4e-16 < 1e-15``,
    while a float32 sum is off by about 1e-8."""
    from lam_ref.theory import map_entropy

    p32 = np.array([0.125, 0.375, 0.5], dtype=np.float32)
    m = map_entropy([0, 1, 2], p32)
    p64 = p32.astype(np.float64)
    h = float(-(p64 * np.log2(p64)).sum())
    assert m["H_X"] == pytest.approx(h, abs=1e-15) and m["H_pi"] == pytest.approx(h, abs=1e-15), f"{m} vs {h}"
    w32 = np.array([0.1, 0.2, 0.3], dtype=np.float32)
    got = REG["COR3"].measure(_ctx(_arc(0.0, 0.1, 0.2), CHAIN_T, weights=w32)).values
    w64 = w32.astype(np.float64)
    assert got["T_all"] == float(w64.sum()) and got["T_greedy"] == float(w64[0] + w64[2]), f"{got}"


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


@pytest.mark.claim("THM2")
def test_thm2_says_why_the_optimum_is_missing_and_the_table_shows_it():
    """Issue 23 §6: above ``exact_limit`` THM2 has no exact ``N``; its note says so, and
    ``verify``'s table row carries the note (not only the JSON)."""
    from lam_ref.claims._base import ClaimResult
    from lam_ref.verify import table_rows

    exact = REG["THM2"].measure(_ctx(_arc(0.0, 0.1, 0.2), CHAIN_T))
    assert exact.values["N"] == 1 and exact.note == "", f"solved: N known, no note: {exact}"
    inexact = REG["THM2"].measure(_ctx(_arc(0.0, 0.1, 0.2), CHAIN_T, exact_limit=2))
    assert inexact.values["N"] is None and inexact.note == "n > 2: exact N skipped", f"{inexact}"
    row = table_rows([ClaimResult("THM2", True, inexact.values, inexact.note)])[0]
    assert "[n > 2: exact N skipped]" in row[1], f"the table names the reason: {row}"
