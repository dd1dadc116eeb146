"""The suite as users run it (docs/conformance.md §3-§5): pytest plugin options, skip/xfail files, the JSON
report, the run header, ``lam-ref conform``, and a run from an installed wheel outside the checkout.

Every run here is a separate process started in a temporary folder, as a user's would be.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from hypothesis import settings

from lam_ref.conformance import CHECKS
from lam_ref.conformance.report import OUTCOMES, REPORT_SCHEMA, SCHEMA_ID, validate_report

REPO = Path(__file__).resolve().parents[2]
LAM_REF = shutil.which("lam-ref", path=str(Path(sys.executable).parent)) or "lam-ref"

ONLY_SUBSTITUTE = '''
"""A user's adapter that implements only the required part (SPEC §15)."""
import numpy as np

__version__ = "2.5.1"
COMPLETE = True


def substitute(embeddings, t):
    from lam_ref import substitute as ref
    return ref(embeddings, t, exhaustive=True).pi
'''


def _env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("LAM_IMPL", "PYTEST_ADDOPTS", "LAM_EXEC_TIMEOUT")}
    env.update(extra)
    return env


def _run(cmd: list[str], cwd: Path, timeout: float = 240, **env: str) -> subprocess.CompletedProcess:
    return subprocess.run(cmd, cwd=cwd, env=_env(**env), capture_output=True, text=True, timeout=timeout, check=False)


def _pytest(tmp_path: Path, *args: str, **env: str) -> subprocess.CompletedProcess:
    return _run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "--pyargs", "lam_ref.conformance.suite", *args], tmp_path, **env)


def _report(path: Path) -> dict:
    rep = json.loads(path.read_text())
    errors = validate_report(rep)
    assert not errors, f"report does not match REPORT_SCHEMA: {errors}"
    return rep


def _by_id(rep: dict) -> dict[str, dict]:
    return {t["id"]: t for t in rep["tests"]}


def test_missing_parts_skip_with_reason_and_report_follows_schema(tmp_path):
    """docs/conformance.md §3-§4: a module with only ``substitute``: the header names it, its version, parts and
    execution target; online/lines/codec tests skip naming the missing part; the report is valid."""
    (tmp_path / "only_sub.py").write_text(ONLY_SUBSTITUTE)
    res = _pytest(tmp_path, "--lam-impl=only_sub", "--lam-report=rep.json", "-rs")
    out = res.stdout + res.stderr
    assert res.returncode == 0, f"run failed:\n{out[-3000:]}"
    for needle in ("implementation only_sub (python)", "version 2.5.1", "parts provided: substitute", "execution target:", "CPU"):
        assert needle in out, f"run header lacks {needle!r}:\n{out[:2000]}"
    rep = _report(tmp_path / "rep.json")
    assert rep["schema"] == SCHEMA_ID and rep["runner"] == "pytest", f"header fields wrong: {rep['schema']}, {rep['runner']}"
    assert rep["implementation"]["version"] == "2.5.1" and rep["implementation"]["parts"]["codec"] is False, rep["implementation"]
    tests = _by_id(rep)
    assert set(tests) == {c.id for c in CHECKS}, f"report must list every check, has {sorted(tests)}"
    for c in CHECKS:
        t = tests[c.id]
        assert t["claim"] == c.claim and t["spec"] == c.spec, f"{c.id}: claim/spec not carried into the report: {t}"
        if set(c.parts) - {"substitute"}:
            assert t["outcome"] == "skipped", f"{c.id} needs {c.parts} and must be skipped, got {t['outcome']}"
            missing = sorted(set(c.parts) - {"substitute"})[0]
            assert f"optional part {missing!r} not provided" in t["reason"], f"{c.id}: skip reason {t['reason']!r}"
        elif "core" not in c.profiles:  # e.g. core-f32: a profile the default set does not claim
            assert t["outcome"] == "skipped" and "not declared" in t["reason"], f"{c.id}: {t['outcome']} {t['reason']!r}"
        else:
            assert t["outcome"] == "passed", f"{c.id}: {t['outcome']} {t['message']}"
    hyp = tests["substitute.equals_oracle"]["hypothesis"]
    # the run inherits HYPOTHESIS_PROFILE: derandomized under `ci`, random under `thorough`
    assert hyp["examples"] >= hyp["max_examples"] > 0, f"Hypothesis statistics missing: {hyp}"
    assert hyp["derandomize"] is settings.default.derandomize, f"the profile's derandomize is reported: {hyp}"
    assert rep["summary"]["total"] == len(CHECKS) and sum(rep["summary"][k] for k in OUTCOMES) == len(CHECKS), rep["summary"]
    assert rep["target"]["libraries"]["numpy"], f"library versions missing: {rep['target']}"
    assert len(rep["suite"]["source_sha256"]) == 64, f"suite identity missing: {rep['suite']}"


def test_skips_and_xfails_files_and_declared_expected_failures(tmp_path):
    """docs/conformance.md §5 and scikit-learn's expected failures: prefixes from files and EXPECTED_FAILURES mark
    tests skipped / xfailed / xpassed with their reasons; an id matching nothing is warned about."""
    (tmp_path / "strict.py").write_text(textwrap.dedent('''
        from lam_ref.conformance.witnesses.mutants.m03_strict_less import *  # noqa: F403
        EXPECTED_FAILURES = {"substitute.exact_ties": "our kernel compares with <"}
    '''))
    (tmp_path / "skips.txt").write_text("# skipped for now\ncodec.  # the codec is not ported yet\n")
    (tmp_path / "xfails.txt").write_text("substitute.chain # flaky on old GPUs\nsubstitute.no_such_check # typo\n")
    res = _pytest(
        tmp_path, "--lam-impl=strict", "--skips-file=skips.txt", "--xfails-file=xfails.txt", "--lam-report=rep.json",
        "-k", "exact_ties or chain or codec", "-rsxX",
    )
    out = res.stdout + res.stderr
    assert res.returncode == 0, f"xfailed/xpassed/skipped must not fail the run:\n{out[-3000:]}"
    assert "'substitute.no_such_check' matches no conformance test" in out, f"no warning for the unmatched id:\n{out[-2000:]}"
    tests = _by_id(_report(tmp_path / "rep.json"))
    assert tests["substitute.exact_ties"]["outcome"] == "xfailed", tests["substitute.exact_ties"]
    assert "compares with <" in tests["substitute.exact_ties"]["reason"], tests["substitute.exact_ties"]
    assert "expected π = [0, 0], got [0, 1]" in tests["substitute.exact_ties"]["message"], tests["substitute.exact_ties"]
    assert tests["substitute.exact_ties"]["counterexample"]["t"] == 0.0, "the failing exact case must be in the report"
    assert tests["substitute.chain"]["outcome"] == "xpassed", tests["substitute.chain"]
    for cid in ("codec.error_bound", "codec.deterministic"):
        assert tests[cid]["outcome"] == "skipped" and "not ported" in tests[cid]["reason"], tests[cid]
    assert tests["validation.codec"]["outcome"] == "passed", "prefix 'codec.' must not match 'validation.codec'"


def test_failure_report_carries_claim_and_minimal_counterexample(tmp_path):
    """docs/conformance.md §4: a failing property test reports its claim and Hypothesis' minimal counterexample."""
    res = _pytest(tmp_path, "--lam-impl=lam_ref.conformance.witnesses.mutants.m02_nearest_witness", "--lam-report=rep.json",
                  "-k", "equals_oracle")
    assert res.returncode == 1, f"the nearest-witness mutant must fail:\n{res.stdout[-2000:]}"
    assert "Failing test case" in res.stdout or "Falsifying example" in res.stdout, (
        "pytest output must show Hypothesis' minimal failing example"
    )
    t = _by_id(_report(tmp_path / "rep.json"))["substitute.equals_oracle"]
    assert t["outcome"] == "failed" and t["claim"] == "DEF1", t
    ce = t["counterexample"]
    assert ce is not None and ce[0]["dtype"] == "float32", f"counterexample must hold the embeddings: {ce}"
    n = ce[0]["shape"][0]
    # derandomized (ci) shrinking is reproducible; random (thorough) runs may stop shrinking a little earlier
    most = 12 if settings.default.derandomize else 32
    assert 3 <= n <= most, f"a nearest≠lowest counterexample needs an arrival and two retained rows; shrunk to {n} rows"
    assert t["hypothesis"]["failing"] >= 1, t["hypothesis"]


def test_env_var_and_unknown_implementation(tmp_path):
    """``LAM_IMPL`` selects the implementation; an unimportable one stops the run with a clear error."""
    res = _pytest(tmp_path, "-k", "exact_ties", LAM_IMPL="lam_ref.conformance.witnesses.mutants.m03_strict_less")
    assert res.returncode == 1 and "m03_strict_less" in res.stdout, f"LAM_IMPL was ignored:\n{res.stdout[-1500:]}"
    res = _pytest(tmp_path, "--lam-impl=no_such_pkg.impl")
    out = res.stdout + res.stderr
    assert res.returncode != 0 and "no_such_pkg.impl" in out and "cannot be imported" in out, out[-1500:]


def test_required_substitute_missing_fails(tmp_path):
    """SPEC §15: substitute is required: a module without it fails those checks (never skips them)."""
    (tmp_path / "online_only.py").write_text("from lam_ref.conformance.adapter import OnlineSession\n")
    res = _pytest(tmp_path, "--lam-impl=online_only", "-k", "exact_ties or sessions_independent")
    out = res.stdout
    assert res.returncode == 1, f"missing substitute must fail:\n{out[-2000:]}"
    assert "SPEC §15 requires substitute" in out and "1 failed, 1 passed" in out, out[-2000:]


def test_lam_ref_conform_command(tmp_path):
    """``lam-ref conform``: hermetic pytest run, JSON report, --list, exec implementations, bad files."""
    listing = _run([LAM_REF, "conform", "--list"], tmp_path)
    assert listing.returncode == 0 and all(c.id in listing.stdout for c in CHECKS), listing.stdout
    (tmp_path / "pytest.ini").write_text("[pytest]\naddopts = --this-option-does-not-exist\n")  # must not leak in
    res = _run(
        [LAM_REF, "conform", "--impl", f"exec:{sys.executable} -m lam_ref.conformance.server", "--json", "out/r.json", "--mkdir",
         "-k", "substitute or lines"],
        tmp_path,
    )
    assert res.returncode == 0, f"conform through exec failed:\n{res.stdout[-3000:]}{res.stderr[-2000:]}"
    assert "(exec)" in res.stdout and "separate process" in res.stdout, res.stdout[:1500]
    rep = _report(tmp_path / "out" / "r.json")
    assert rep["implementation"]["kind"] == "exec" and rep["summary"]["failed"] == 0, rep["summary"]
    bad = _run([LAM_REF, "conform", "--skips-file", "nope.txt"], tmp_path)
    assert bad.returncode == 2 and "nope.txt" in bad.stderr, bad.stderr


def test_runs_from_an_installed_wheel_outside_the_checkout(tmp_path):
    """docs/conformance.md §1, §3: build a wheel, install it into a folder, run `pytest --pyargs` and `lam-ref conform`
    from elsewhere: the installed copy (not the checkout) is what runs."""
    src = tmp_path / "src"
    src.mkdir()
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(REPO / name, src / name)
    shutil.copytree(REPO / "lam_ref", src / "lam_ref", ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    build = _run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "--no-build-isolation", str(src), "-w", str(tmp_path / "dist")], tmp_path)
    assert build.returncode == 0, f"wheel build failed: {build.stderr[-2000:]}"
    wheel = next((tmp_path / "dist").glob("lam_ref-*.whl"))
    site = tmp_path / "site"
    inst = _run([sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--target", str(site), str(wheel)], tmp_path)
    assert inst.returncode == 0, f"install failed: {inst.stderr[-2000:]}"
    work = tmp_path / "elsewhere"
    work.mkdir()
    env = {"PYTHONPATH": str(site)}
    where = _run([sys.executable, "-c", "import lam_ref.conformance.suite as s; print(s.__file__)"], work, **env)
    assert where.stdout.strip().startswith(str(site)), f"the checkout shadows the installed copy: {where.stdout}"
    res = _run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "--pyargs", "lam_ref.conformance.suite",
                "--lam-impl=lam_ref.conformance.adapter", "-k", "exact_ties or contract", "--lam-report=r.json"], work, **env)
    assert res.returncode == 0 and "2 passed" in res.stdout, f"installed suite failed:\n{res.stdout[-2000:]}"
    assert _report(work / "r.json")["suite"]["commit"] is None, "an installed suite is outside any git checkout"
    cli = _run([sys.executable, "-m", "lam_ref.cli", "conform", "--impl", "lam_ref.conformance.witnesses.independent", "-k", "boundary"], work, **env)
    assert cli.returncode == 0 and "1 passed" in cli.stdout, f"lam-ref conform from the wheel failed:\n{cli.stdout[-2000:]}"
    assert str(site) in cli.stdout, f"the run must show the installed suite's path:\n{cli.stdout[:1500]}"


def test_schema_document_lists_every_field():
    """The report schema is documented: docs/conformance.md names every top-level and per-test field."""
    doc = (REPO / "docs" / "conformance.md").read_text()
    fields = list(REPORT_SCHEMA["properties"]) + list(REPORT_SCHEMA["properties"]["tests"]["items"]["properties"])
    missing = [f for f in fields if f"`{f}`" not in doc]
    assert not missing, f"docs/conformance.md does not document report fields {missing}"


@pytest.mark.parametrize("broken", ["schema", "outcome", "summary"])
def test_report_validator_rejects_broken_reports(tmp_path, broken):
    """validate_report is a real check: it flags a wrong schema id, an unknown outcome, a missing key.
    (Shown to fail — i.e. to return errors — on each deliberately broken report below.)"""
    (tmp_path / "m.py").write_text(ONLY_SUBSTITUTE)
    from lam_ref.conformance import run_checks

    cwd = os.getcwd()
    os.chdir(tmp_path)
    try:
        run_checks("m", select=["substitute.exact_ties"], report=tmp_path / "r.json")
    finally:
        os.chdir(cwd)
    rep = _report(tmp_path / "r.json")
    assert rep["runner"] == "python", rep["runner"]
    if broken == "schema":
        rep["schema"] = "something.else"
    elif broken == "outcome":
        rep["tests"][0]["outcome"] = "maybe"
    else:
        del rep["summary"]
    assert validate_report(rep), f"validate_report accepted a report with a broken {broken}"


def test_execution_target_reports_the_gpu_model(tmp_path):
    """docs/conformance.md §4: the report's execution target names the GPU model when ``nvidia-smi`` lists one
    (a stand-in ``nvidia-smi`` printing two H200s), and ``null`` when there is none."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    fake = bin_dir / "nvidia-smi"
    fake.write_text("#!/bin/sh\n[ \"$1\" = \"--query-gpu=name\" ] || exit 2\nprintf 'NVIDIA H200\\nNVIDIA H200\\n'\n")
    fake.chmod(0o755)
    code = "import json; from lam_ref.conformance.report import execution_target; print(json.dumps(execution_target()))"
    with_gpu = _run([sys.executable, "-c", code], tmp_path, PATH=f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    target = json.loads(with_gpu.stdout)
    assert target["gpu"] == "NVIDIA H200; NVIDIA H200", f"GPU model not reported: {target}"
    assert target["cpu"] and "logical CPUs" in target["cpu"], f"CPU model missing: {target}"
    empty = tmp_path / "empty"
    empty.mkdir()
    no_gpu = _run([sys.executable, "-c", code], tmp_path, PATH=str(empty))
    assert json.loads(no_gpu.stdout)["gpu"] is None, f"no nvidia-smi must give gpu = null: {no_gpu.stdout}"
