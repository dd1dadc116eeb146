"""Issue 34: diagnoses, verdicts beyond pass/fail, the float32-cosine tie band (SPEC §2.2), the kept-set
form (SPEC §15.5), the shipped adapters and docs/compliance.md.

Each conformance change is shown to catch a deliberately wrong implementation (the mutants m200-m210 of
:mod:`lam_ref.conformance.witnesses.mutants`, or a small module written here), and the allowed alternatives
(controls c15, c16) to pass. The adapters run where their library is installed and skip, saying so,
where it is not.
"""

from __future__ import annotations

import importlib.metadata
import importlib.util
import math
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lam_ref.conformance import run_checks
from lam_ref.conformance.adapters import ADAPTERS
from lam_ref.conformance.keptset import read_kept
from lam_ref.conformance.precision import cosine_f32_band_sq, gamma, judge
from lam_ref.conformance.report import build_report, validate_report
from lam_ref.geometry import LamValueError
from lam_ref.substitution import oracle

ROOT = Path(__file__).resolve().parents[2]
M = "lam_ref.conformance.witnesses.mutants."
SMALL = 0.3  # a third of the default example counts: every kill below is found well within it


def _run(impl, select, scale=SMALL, **kw):
    return {r.id: r for r in run_checks(impl, scale=scale, select=select, **kw)}


def _has(package: str) -> bool:
    return importlib.util.find_spec(package) is not None


# ------------------------------------------------------------------------------------------ §2.2 tie band
@settings(max_examples=60, deadline=None)
@given(d=st.integers(1, 1024), seed=st.integers(0, 2**32 - 1))
def test_float32_cosine_error_stays_inside_the_band_spec_2_2(d, seed):
    """SPEC §2.2 derivation: for float32 unit rows, 2 - 2 fl32(â·b̂) (normalized and summed in float32)
    differs from the exact sq by at most the band β(D, ν)."""
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((2, d))
    x = (x / np.linalg.norm(x, axis=1, keepdims=True)).astype(np.float32)
    if d > 1 and seed % 2:  # near-duplicates too: the band matters most near the threshold
        x[1] = (x[0].astype(np.float64) + 1e-3 * rng.standard_normal(d)).astype(np.float32)
        x[1] /= np.float32(np.linalg.norm(x[1].astype(np.float64)))
    u = x / np.sqrt(np.sum(x * x, axis=1, dtype=np.float32), dtype=np.float32)[:, None]
    cos32 = float(np.dot(u[0], u[1]))  # float32 dot product
    sq = float(np.sum((x[0].astype(np.float64) - x[1].astype(np.float64)) ** 2))
    nu = float(np.max(np.abs(np.linalg.norm(x.astype(np.float64), axis=1) - 1)))
    assert abs((2 - 2 * cos32) - sq) <= cosine_f32_band_sq(d, nu), (
        f"D = {d}: |2 - 2 fl32(cos) - sq| = {abs((2 - 2 * cos32) - sq)!r} exceeds the band {cosine_f32_band_sq(d, nu)!r}"
    )


def test_band_formula_values():
    """The band at D = 384 is about 1.4e-4 in sq (docs/conformance.md §8) and grows with D."""
    assert 1.3e-4 < cosine_f32_band_sq(384) < 1.5e-4, f"band at D = 384: {cosine_f32_band_sq(384)!r}"
    assert cosine_f32_band_sq(16) < cosine_f32_band_sq(384) < cosine_f32_band_sq(1024), "the band must grow with D"
    assert math.isclose(gamma(10), 10 * 2.0**-24 / (1 - 10 * 2.0**-24)), "γ_n is Higham's n u / (1 - n u)"


def test_float32_cosine_control_passes_core_f32_and_fails_core():
    """An allowed float32 cosine implementation (control c15, profile core-f32) passes; the same code under
    the exact core profile (m206) fails on near copies at t = 1 with threshold-precision; a
    float16 cosine (m209) fails core-f32."""
    ok = _run("lam_ref.conformance.witnesses.controls.c16_cosine_f32", ["substitute_f32"])
    assert ok and all(r.outcome == "passed" for r in ok.values()), {k: (r.outcome, r.message) for k, r in ok.items()}
    bad = _run(M + "m206_cosine_f32", ["substitute.identical_t1"], scale=1.0)["substitute.identical_t1"]
    assert bad.outcome == "failed", f"m206 must fail substitute.identical_t1, got {bad.outcome}"
    assert bad.diagnosis["properties"] == ["threshold-precision"], f"diagnosis {bad.diagnosis}"
    half = _run(M + "m209_cosine_f16", ["substitute_f32.sound"])["substitute_f32.sound"]
    assert half.outcome == "failed", f"a float16 cosine must fail substitute_f32.sound, got {half.outcome}"


def test_judge_band_accepts_either_answer_inside_and_only_there():
    """A pair inside the band may merge or not; a pair beyond it may not merge (the replay judge)."""
    e = np.array([[1, 0], [0.5, math.sqrt(0.75)]], dtype=np.float32)  # cos = 0.5 up to float32 rounding
    t = 0.5
    band = cosine_f32_band_sq(2)
    for kept in ([True, True], [True, False]):
        found = judge(e, t, np.array(kept), np.array([0, 0 if not kept[1] else 1]), band=band)
        assert found == [], f"in the band either answer is accepted, got {found}"
    far = judge(e, 0.9, np.array([True, False]), np.array([0, 0]), band=band)
    assert [f.property for f in far] == ["unsound-merge"], f"a merge far beyond δ must be unsound: {far}"


# ------------------------------------------------------------------------------------------ §15.5 kept set
@pytest.mark.parametrize(
    ("out", "needle"),
    [(np.array([0, 5]), "kept index 5 (position 1) is out of range"), (np.array([0, 2, 2]), "kept index 2 appears twice"),
     (np.array([1, 0]), "kept index 0 (position 1) comes after 1"), (np.array([-1]), "kept index -1"),
     ((np.array([0]), np.array([0, 3, 0])), "witness 3 of dropped row 1 is out of range"),
     ((np.array([0]), np.array([[0, 1]])), "pair 0 = (0, 1) must satisfy")],
)
def test_bad_kept_output_is_a_contract_failure_naming_the_index(out, needle):
    """SPEC §15.5 bad input: out of range, duplicate, wrong order are AssertionErrors naming the index."""
    with pytest.raises(AssertionError) as err:
        read_kept(out, 3)
    assert needle in str(err.value), f"message {err.value!s} lacks {needle!r}"


@pytest.mark.parametrize(("mutant", "check", "prop"), [
    ("m200_kept_unsorted", "kept.contract", "output-contract"),
    ("m201_kept_duplicate", "kept.contract", "output-contract"),
    ("m202_kept_drops_unrepresented", "kept.sound", "unrepresented-drop"),
    ("m203_kept_strict", "kept.equals_oracle", "strict-threshold"),
    ("m204_kept_nearest_witness", "kept.equals_oracle", "witness-differs"),
    ("m205_kept_keeps_newest", "kept.prefix", "prefix-property"),
    ("m210_kept_pairs_window", "kept.sound", "found-pair-ignored"),
])
def test_kept_set_mutants_fail_with_their_diagnosis(mutant, check, prop):
    """Each kept-set mutant fails its check (never a traceback), and the diagnosis computed on the
    counterexample names the property it breaks."""
    r = _run(M + mutant, [check])[check]
    assert r.outcome == "failed" and r.exception == "AssertionError", f"{mutant}: {r.outcome} {r.exception} {r.message}"
    assert prop in r.diagnosis["properties"], f"{mutant}: diagnosis {r.diagnosis['properties']} lacks {prop}"


def test_kept_equal_witness_differs_is_reported_as_such():
    """The issue's example: a library keeping exactly the greedy kept set but naming another witness is
    diagnosed 'kept set equal, witness differs', and the summary says so."""
    results = run_checks(M + "m204_kept_nearest_witness", scale=SMALL, select=["kept."])
    failed = [r for r in results if r.outcome == "failed"]
    assert failed and all(r.diagnosis["kept_equal"] for r in failed), [(r.id, r.diagnosis) for r in failed]
    report = build_report(None, [r.to_json() for r in results], profile="custom", runner="python", started=0, finished=1,
                          describe={"profiles": ["kept-set"]})
    props = report["properties"]
    assert props["kept_equal"] == props["compared"] == len(failed) and props["witness_differs"] == len(failed), props
    assert list(report).index("properties") < list(report).index("tests"), "the report must lead with the summary"


def test_kept_set_control_passes():
    """Control c16 (the greedy rule in the kept-set form) passes every kept-set check: no false alarm."""
    res = _run("lam_ref.conformance.witnesses.controls.c17_kept_greedy", ["kept"], scale=1.0)
    assert len(res) == 8 and all(r.outcome == "passed" for r in res.values()), {k: r.message for k, r in res.items() if r.outcome != "passed"}


# ------------------------------------------------------------------------------------------ diagnosis of π forms
def test_online_failure_caused_by_the_batch_is_diagnosed_as_the_batch():
    """Issue 34: online.* failing because the batch differs from the oracle is not 'online ≠ batch'."""
    r = _run(M + "m02_nearest_witness", ["online.equals_batch"])["online.equals_batch"]
    assert r.outcome == "failed", r.outcome
    assert "witness-differs" in r.diagnosis["properties"], r.diagnosis
    assert "online-differs-from-batch" not in r.diagnosis["properties"], r.diagnosis
    r8 = _run(M + "m08_no_intra_turn", ["online.equals_batch"])["online.equals_batch"]
    assert "online-differs-from-batch" in r8.diagnosis["properties"], r8.diagnosis


def test_ties_are_judged_evenly_for_incomplete_implementations():
    """COMPLETE = False: exact_ties and signed_zeros both skip (held to soundness), and ties_sound holds an
    incomplete implementation with δ² = 2 - t (m207) to soundness on the same cases."""
    res = _run(M + "m207_incomplete_two_minus_t", ["substitute.exact_ties", "substitute.signed_zeros", "substitute.ties_sound"])
    assert res["substitute.exact_ties"].outcome == res["substitute.signed_zeros"].outcome == "skipped", res
    assert res["substitute.ties_sound"].outcome == "failed", res["substitute.ties_sound"].message
    assert "unsound-merge" in res["substitute.ties_sound"].diagnosis["properties"], res["substitute.ties_sound"].diagnosis


# ------------------------------------------------------------------------------------------ verdicts
def _module(tmp_path, name, body):
    (tmp_path / f"{name}.py").write_text(textwrap.dedent(body), encoding="utf-8")
    sys.path.insert(0, str(tmp_path))
    return name


def test_memory_error_is_resource_with_the_size_never_a_contract_failure(tmp_path, monkeypatch):
    """MemoryError at scale is RESOURCE with the size tried; the same check still fails a wrong answer."""
    monkeypatch.syspath_prepend(str(tmp_path))
    _module(tmp_path, "oom_impl", """
        from lam_ref.conformance.adapter import substitute as _ok
        def substitute(e, t):
            if e.shape[0] > 20000:
                raise MemoryError("cannot allocate the Gram matrix")
            return _ok(e, t)
    """)
    _module(tmp_path, "wrong_at_scale", """
        from lam_ref.conformance.adapter import substitute as _ok
        def substitute(e, t):
            pi = _ok(e, t)
            if e.shape[0] > 20000:
                pi[-1] = pi[-1] - 1 if pi[-1] == len(pi) - 1 and pi[pi[-1] - 1] == pi[-1] - 1 else 0
            return pi
    """)
    r = _run("oom_impl", ["substitute.large_ids"], scale=1.0)["substitute.large_ids"]
    assert r.outcome == "resource" and "65,600 rows" in r.reason and "MemoryError" in r.reason, (r.outcome, r.reason)
    w = _run("wrong_at_scale", ["substitute.large_ids"], scale=1.0)["substitute.large_ids"]
    assert w.outcome == "failed", f"a wrong π at scale must still fail: {w.outcome} {w.reason}"
    # a MemoryError on a small input is the implementation's bug (an allocation sized from an unchecked header)
    small = _run(M + "m130_codec_trusts_n_allocation", ["validation.codec_header"])["validation.codec_header"]
    assert small.outcome == "failed", f"MemoryError on an 8-byte body must fail, got {small.outcome} {small.reason}"


def test_budget_rows_shows_scale_checks_as_not_run(tmp_path, monkeypatch):
    """BUDGET = {"rows": 2000}: the scale checks are not run (never passed) and the core profile is incomplete."""
    monkeypatch.syspath_prepend(str(tmp_path))
    _module(tmp_path, "budget_impl", """
        from lam_ref.conformance.adapter import substitute
        BUDGET = {"rows": 2000}
    """)
    res = run_checks("budget_impl", scale=0.05, select=["substitute.large", "substitute.retained_4096", "substitute.contract"])
    out = {r.id: r.outcome for r in res}
    assert out["substitute.large_ids"] == out["substitute.retained_4096"] == "not_run", out
    assert out["substitute.large"] == out["substitute.contract"] == "passed", out
    from lam_ref.conformance.impl import load_implementation

    report = build_report(load_implementation("budget_impl"), [r.to_json() for r in res], profile="custom", runner="python",
                          started=0, finished=1)
    assert report["profiles"]["core"]["verdict"] == "incomplete", report["profiles"]["core"]
    assert validate_report(report) == [], validate_report(report)
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(tmp_path), str(ROOT), os.environ.get("PYTHONPATH", "")]))
    server = f"{sys.executable} -m lam_ref.conformance.server --impl budget_impl"
    over_exec = run_checks(f"exec:{server}", select=["substitute.large_ids"], exec_timeout=30)
    assert [r.outcome for r in over_exec] == ["not_run"], [(r.outcome, r.reason) for r in over_exec]
    _module(tmp_path, "bad_budget", "from lam_ref.conformance.adapter import substitute\nBUDGET = {'rows': -1}\n")
    with pytest.raises(LamValueError, match=r"BUDGET\['rows'\] must be a positive number"):
        run_checks("bad_budget", select=["substitute.contract"])


def test_exec_unreachable_rules_are_not_applicable():
    """Over exec, layout / byte order / fresh results are not applicable (the client always sends fresh
    C-order little-endian arrays); in-process the same rule still fails a static output buffer (m33)."""
    server = f"{sys.executable} -m lam_ref.conformance.server --impl {M}m33_substitute_static_buffer"
    res = _run(f"exec:{server}", ["substitute.fresh_results", "substitute.layouts", "substitute.byte_order"], exec_timeout=30)
    assert {r.outcome for r in res.values()} == {"not_applicable"}, {k: (r.outcome, r.reason) for k, r in res.items()}
    inproc = _run(M + "m33_substitute_static_buffer", ["substitute.fresh_results"])["substitute.fresh_results"]
    assert inproc.outcome == "failed", f"in-process the rule applies and m33 fails it: {inproc.outcome}"


# ------------------------------------------------------------------------------------------ adapters
ADAPTER_PARAMS = [pytest.param(name, marks=pytest.mark.skipif(not _has(pkg.replace("-", "_")), reason=f"{pkg} is not installed (pip install {pkg})"))
                  for name, (_mod, pkg, _extra) in ADAPTERS.items()]


@pytest.mark.parametrize("adapter", ADAPTER_PARAMS)
def test_adapter_runs_the_kept_set_checks(adapter):
    """Each shipped adapter loads by its short name, declares the kept-set profiles and passes the output
    contract; its soundness under the float32 band is what docs/compliance.md records for its version."""
    res = _run(adapter, ["kept.contract", "kept_f32.contract", "kept_f32.sound"])
    assert res["kept.contract"].outcome == res["kept_f32.contract"].outcome == "passed", {k: r.message for k, r in res.items()}
    semhash_old = adapter.startswith("semhash") and importlib.metadata.version("semhash").startswith("0.4")
    want = "failed" if adapter == "langchain" or semhash_old else "passed"
    assert res["kept_f32.sound"].outcome == want, (adapter, res["kept_f32.sound"].message)


@pytest.mark.skipif(not _has("semhash"), reason="semhash is not installed (pip install semhash)")
def test_semhash_adapter_small_case_and_real_encoder():
    """Three rows: kept {0, 1}, and semhash >= 0.5 names row 1 for row 2 (the greedy rule names 0); on
    rows of lam_ref's test encoder the exact backend keeps the oracle's set up to the float32 band."""
    from lam_ref.conformance.adapters import TestEncoder
    from lam_ref.conformance.adapters import semhash as adapter

    e = np.array([[1, 0, 0], [0, 1, 0], [0.6, 0.8, 0]], dtype=np.float32)
    out = read_kept(adapter.kept(e, 0.5), 3)
    assert out.kept.tolist() == [0, 1], f"kept {out.kept.tolist()}"
    if out.witness is not None:
        assert out.witness.tolist() == [0, 1, 1], f"semhash 0.5 names the most similar kept row: {out.witness.tolist()}"
    texts = ["the cat sat on the mat", "the cat sat on the mat today", "a dog ran", "a dog ran home", "stock prices fell"]
    rows = TestEncoder().encode(texts)
    got = read_kept(adapter.kept(rows, 0.6), len(texts))
    band = cosine_f32_band_sq(rows.shape[1])
    assert judge(rows, 0.6, got.mask, band=band) == [], f"kept {got.kept.tolist()}, oracle {np.flatnonzero(oracle(rows, 0.6).pi == np.arange(5))}"


@pytest.mark.skipif(not _has("langchain_community"), reason="langchain-community is not installed (pip install langchain-community)")
def test_langchain_adapter_small_case():
    """Two near duplicates: EmbeddingsRedundantFilter keeps the later one (the greedy rule keeps row 0)."""
    from lam_ref.conformance.adapters import langchain as adapter

    e = np.array([[1, 0], [0.995, 0.0998749217771909]], dtype=np.float32)
    assert adapter.kept(e, 0.95).tolist() == [1], "langchain keeps the later of two near duplicates"


def test_missing_library_is_one_line_exit_2(tmp_path):
    """An adapter whose library is absent: one line naming the package, exit 2, no check run."""
    fake = tmp_path / "semhash"
    fake.mkdir()
    (fake / "__init__.py").write_text("raise ImportError('No module named semhash', name='semhash')\n", encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path), str(ROOT)])}
    res = subprocess.run([sys.executable, "-m", "lam_ref.cli", "conform", "--impl", "semhash"], env=env, cwd=tmp_path,
                         capture_output=True, text=True, timeout=300)
    lines = [ln for ln in res.stderr.splitlines() if ln.strip()]
    assert res.returncode == 2, f"exit {res.returncode}\n{res.stdout}\n{res.stderr}"
    assert len(lines) == 1 and "'semhash'" in lines[0] and "pip install semhash" in lines[0], res.stderr
    assert "lam_ref conformance: implementation" not in res.stdout, "no check may run"


# ------------------------------------------------------------------------------------------ compliance page
SCRIPTS = sorted((ROOT / "examples" / "compliance").glob("*.py"))


def _script_library(path: Path) -> tuple[str, str | None]:
    name = path.name
    if name.startswith("semhash04"):
        return "semhash", "0.4"
    return ("semhash" if name.startswith("semhash") else "langchain_community"), None


@pytest.mark.parametrize("script", SCRIPTS, ids=lambda p: p.name)
def test_compliance_script_reproduces_its_finding(script):
    """Each finding of docs/compliance.md is reproduced by a standalone script (exit 0) where the library
    (and the release the finding is about) is installed."""
    package, release = _script_library(script)
    if not _has(package):
        pytest.skip(f"{package} is not installed")
    if release is not None:
        version = importlib.metadata.version(package.replace("_", "-"))
        if not version.startswith(release):
            pytest.skip(f"the finding is about {package} {release}.x; {version} is installed")
    res = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=300)
    assert res.returncode == 0 and "REPRODUCED" in res.stdout, f"{script.name}: exit {res.returncode}\n{res.stdout}\n{res.stderr[-2000:]}"


def test_compliance_page_is_generated_from_the_records():
    """docs/compliance.md equals the rendering of docs/compliance/*.json, names a script for every property
    broken, and every script it names exists."""
    from lam_ref.conformance.compliance import load_records, render

    page = (ROOT / "docs" / "compliance.md").read_text(encoding="utf-8")
    assert page == render(load_records()), "docs/compliance.md is stale: python -m lam_ref.conformance.compliance --write docs/compliance.md"
    assert "no standalone script yet" not in page, "every finding needs a standalone script under examples/compliance/"
    import re

    for name in set(re.findall(r"examples/compliance/(\w+\.py)", page)):
        assert (ROOT / "examples" / "compliance" / name).is_file(), f"docs/compliance.md names a missing script {name}"


def test_generated_declaration_and_vocabulary_tables():
    """docs/conformance.md holds the registry's declarations table and the diagnosis vocabulary verbatim."""
    import re

    from lam_ref.conformance.declarations import declarations_table
    from lam_ref.conformance.diagnosis import vocabulary_table
    from lam_ref.conformance.registry import CHECKS

    text = (ROOT / "docs" / "conformance.md").read_text(encoding="utf-8")
    for name, table in (("declarations-table", declarations_table(CHECKS)), ("vocabulary-table", vocabulary_table())):
        m = re.search(rf"<!-- {name}:start -->\n(.*?)\n<!-- {name}:end -->", text, re.S)
        assert m is not None and m.group(1) == table, f"docs/conformance.md's {name} differs from the registry; regenerate it"
