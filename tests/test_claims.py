"""The claim registry (:mod:`lam_ref.claims`): every registered claim has a test, every test
names a registered claim, every implementing name imports (the same check the docs build runs)."""

from __future__ import annotations

import importlib
import sys
from pathlib import Path

import pytest

from lam_ref.claims import CLAIMS, Claim, ClaimResult, registry, registry_problems, resolve, scan_markers
from lam_ref.claims._base import fmt

from .datagen import write_file

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


def test_scanner_finds_markers_and_their_tests(tmp_path):
    """Decorator markers map to the next def; a module-level pytestmark maps to no single test."""
    write_file(tmp_path / "tests/test_a.py",
        f'import pytest\n\n@pytest.mark.{MARK}("AAA")\n@pytest.mark.slow\ndef test_one():\n    pass\n',
    )
    write_file(tmp_path / "proofs/test_b.py", f"import pytest\npytestmark = pytest.mark.{MARK}('BBB')\n")
    found = scan_markers(tmp_path)
    got = [(m.claim, m.path, m.line, m.test) for m in found]
    assert got == [("BBB", "proofs/test_b.py", 2, None), ("AAA", "tests/test_a.py", 3, "test_one")], f"markers {got}"


def test_unknown_claim_and_untested_claim_are_reported(tmp_path):
    """A marker naming an unknown id and a registered claim with no marker are both problems."""
    write_file(tmp_path / "tests/test_x.py", f'import pytest\n\n@pytest.mark.{MARK}("KNOWN")\ndef test_x():\n    pass\n\n@pytest.mark.{MARK}("NOPE")\ndef test_y():\n    pass\n')
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
    write_file(tmp_path / "tests/test_x.py", f'@{MARK}("KNOWN")\ndef test_x():\n    pass\n')
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
    write_file(tmp_path / "tests/test_x.py", f'@{MARK}("NOPE")\ndef test_x():\n    pass\n')
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
# What the verify report shows of each claim (lam_ref.claims._base: fmt, ClaimResult, each claim's
# describe), and the scanner and resolver at their edges.
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


def test_scan_markers_skips_build_folders_and_reads_any_bytes(tmp_path):
    """Markers under ``.venv``, ``__pycache__`` and ``site`` are not tests of the project; a file
    with bytes that are not UTF-8 is still scanned; a ``pytestmark`` (even indented, as in a
    class) names no single test; a decorator marker names the next ``def``, not an earlier one."""
    write_file(tmp_path / "tests/test_a.py",
           b"def helper(): pass\n@pytest.mark." + MARK.encode() + b'("AAA")\ndef test_a():\n    pass\n')
    write_file(tmp_path / "tests/test_b.py", b"# \xff\xfe not utf-8\npytestmark = pytest.mark." + MARK.encode() + b'("BBB")\n'
           b"def test_b():\n    pass\n")
    write_file(tmp_path / "tests/test_c.py", b"class TestC:\n    pytestmark = pytest.mark." + MARK.encode() + b'("CCC")\n'
           b"    def test_c(self):\n        pass\n")
    for skipped in (".venv", "__pycache__", "site"):
        write_file(tmp_path / f"tests/{skipped}/test_d.py", b"@" + MARK.encode() + b'("DDD")\ndef test_d():\n    pass\n')
    got = [(m.claim, m.path, m.line, m.test) for m in scan_markers(tmp_path)]
    assert got == [("AAA", "tests/test_a.py", 2, "test_a"), ("BBB", "tests/test_b.py", 2, None),
                   ("CCC", "tests/test_c.py", 2, None)], f"markers found: {got}"


def test_registry_problems_name_the_test_the_folders_and_the_missing_part(tmp_path):
    """A problem names the offending test (``(module)`` for a ``pytestmark``), the folders that
    were searched (only those given), and a measured claim lacking its rule *or* its description."""
    from lam_ref.claims import Claim, Measurement, registry_problems

    write_file(tmp_path / "checks/test_x.py", b"pytestmark = pytest.mark." + MARK.encode() + b'("NOPE")\n')
    write_file(tmp_path / "tests/test_y.py", b"@" + MARK.encode() + b'("ALONE")\ndef test_y():\n    pass\n')
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
