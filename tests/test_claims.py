"""The claim registry (:mod:`lam_ref.claims`): every registered claim has a test, every test
names a registered claim, every implementing name imports (the same check the docs build runs)."""

from __future__ import annotations

from pathlib import Path

import pytest

from lam_ref.claims import CLAIMS, Claim, registry, registry_problems, resolve, scan_markers

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
        assert f'<a id="{c.id}"></a>' in written["claims.md"], f"{c.id} missing from the claims page"
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
