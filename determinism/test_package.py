"""The determinism package's layout (issue 20 items 2 and 3) and its kernel matrix (issue 22): the STAB
margins stand alone (no torch, no subprocess), one provenance module (lam_ref.provenance, outside the
package) asks the machine about itself,
every former public name still imports, one schema mechanism with one id convention, reports name no
absolute path, and the kernel configurations are resolved against this CPU (unknown or unsupported:
skipped with the reason, never an error)."""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

import pytest

from lam_ref import schemas
from lam_ref.cli import main
from lam_ref.determinism import kernels as K
from lam_ref.determinism import load_report

from .conftest import INPUTS, REPORTS

ROOT = Path(__file__).resolve().parents[1]
PKG = ROOT / "lam_ref"
DEMO = INPUTS / "demo_agent.traj.json"
#: The public names of lam_ref.determinism before it became a package (the module's ``__all__`` then).
FORMER_NAMES = (
    "DEFAULT_BATCH_SIZES DEFAULT_THRESHOLDS DEVICES DTYPES MARGIN_SLACK REFERENCE_BATCH_SIZE REL_EBS SCHEMA "
    "Comparison Corpus at_risk compare decision_margins device_kwargs encode_corpus first_divergence greedy_map "
    "jitter load_corpus load_report make_weights_copy probe require_cuda risk_bound weights_identity "
    "identity execution_target InlineSteps"
).split()


def test_stab_margins_module_loads_no_torch_and_no_subprocess():
    """Issue 20 item 2 (claim STAB): importing lam_ref.determinism.margins in a fresh interpreter
    adds neither torch nor subprocess to sys.modules (the certificate's math needs neither). The
    baseline is numpy itself: numpy 2.2, the last for Python 3.10, imports ``platform`` and with
    it ``subprocess`` there, which is numpy's doing, not lam_ref's."""
    code = ("import sys, numpy; base = set(sys.modules); import lam_ref.determinism.margins as m; "
            "print(sorted(k for k in ('torch', 'subprocess', 'sentence_transformers') if k in sys.modules and k not in base))")
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=False)
    assert res.returncode == 0, f"import failed: {res.stderr[-1500:]}"
    assert res.stdout.strip() == "[]", f"lam_ref.determinism.margins loaded {res.stdout.strip()}"


def _imports(path: Path) -> set[str]:
    """Every module an ``import`` statement of ``path`` names (module level and inside functions)."""
    out: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            out.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            out.add("." * node.level + (node.module or ""))
    return out


def test_stab_margins_module_imports_only_geometry_statically():
    """Issue 20 item 2, on the source: margins.py imports numpy, the standard library's math/typing and
    lam_ref.geometry only (function-local imports included), and geometry imports no lam_ref module
    that could bring torch or subprocess in."""
    got = _imports(PKG / "determinism" / "margins.py")
    allowed = {"__future__", "math", "collections.abc", "typing", "numpy", "..geometry"}
    assert got <= allowed, f"margins.py imports {sorted(got - allowed)} beyond {sorted(allowed)}"
    geo = _imports(PKG / "geometry.py")
    assert not {m for m in geo if m.startswith(".") or "torch" in m or m == "subprocess"}, \
        f"geometry.py imports {sorted(geo)}: the margins' only lam_ref dependency must stay a leaf"


def test_nvidia_smi_is_named_in_exactly_one_file():
    """Issue 20 item 2: the machine facts live in one module; ``nvidia-smi`` is run from exactly one
    file under lam_ref/ (lam_ref/provenance.py)."""
    hits = sorted(p.relative_to(ROOT).as_posix() for p in PKG.rglob("*")
                  if p.is_file() and p.suffix in {".py", ".json", ".md", ".txt", ".c", ".sh"}
                  and "nvidia-smi" in p.read_text(encoding="utf-8", errors="replace"))
    assert hits == ["lam_ref/provenance.py"], f"'nvidia-smi' appears in {hits}"


def test_conformance_report_takes_its_machine_facts_from_provenance():
    """One provenance module serves both report writers: conformance/report.py has no subprocess and
    no /proc/cpuinfo reading of its own and imports lam_ref.provenance."""
    src = (PKG / "conformance" / "report.py").read_text(encoding="utf-8")
    mods = _imports(PKG / "conformance" / "report.py")
    assert "..provenance" in mods, f"conformance/report.py imports {sorted(mods)}"
    assert "subprocess" not in mods and "/proc/cpuinfo" not in src, "a second copy of the machine facts"


#: What the conformance report must not load (issue 36 §5): the probe's package (its encoder and
#: corpus modules), the text pipeline's encoder side, and the encoder's libraries.
NOT_FOR_THE_REPORT = ("lam_ref.determinism", "lam_ref.text.encoders", "lam_ref.text.backends", "lam_ref.text.loaders",
                      "lam_ref.text.pipeline", "torch", "sentence_transformers", "transformers")


def _loaded_by(module: str) -> list[str]:
    """The modules a fresh interpreter holds after ``import module`` (besides what it had before)."""
    code = ("import sys; before = set(sys.modules); import " + module + "\n"
            "print('\\n'.join(sorted(set(sys.modules) - before)))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert out.returncode == 0, f"import {module} failed: {out.stderr[-2000:]}"
    return out.stdout.split()


def test_conformance_report_loads_no_encoder_or_corpus_module():
    """Issue 36 §5: importing the conformance report loads its machine facts (lam_ref.provenance) and no
    module of lam_ref.determinism (48 lam_ref modules, the encoder and corpus ones among them, when
    provenance lived there), no encoder module and no torch."""
    got = _loaded_by("lam_ref.conformance.report")
    assert "lam_ref.provenance" in got, "the report's machine facts"
    bad = [m for m in got if any(m == f or m.startswith(f + ".") for f in NOT_FOR_THE_REPORT)]
    assert not bad, f"importing lam_ref.conformance.report loads {bad}"


def test_the_forbidden_modules_are_what_the_probe_package_loads():
    """The check above is not vacuous: importing lam_ref.determinism (provenance's former home) does
    load the corpus and encoder modules it forbids."""
    got = _loaded_by("lam_ref.determinism")
    assert {"lam_ref.determinism.corpus", "lam_ref.determinism.encoder"} <= set(got), \
        f"lam_ref.determinism loads {[m for m in got if m.startswith('lam_ref.')]}"


@pytest.mark.parametrize("name", FORMER_NAMES)
def test_former_public_names_still_import(name):
    """Issue 20 "Keep": every public name of the former lam_ref/determinism.py imports from the package."""
    import lam_ref.determinism as det

    assert hasattr(det, name), f"lam_ref.determinism.{name} is gone"
    assert name in det.__all__, f"{name} is not in lam_ref.determinism.__all__"


def _resolve(target: str, home) -> bool:
    import importlib

    if "." not in target:
        return hasattr(home, target)
    parts = target.split(".")
    for k in range(len(parts), 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:k]))
        except ImportError:
            continue
        for attr in parts[k:]:
            if not hasattr(obj, attr):
                return False
            obj = getattr(obj, attr)
        return True
    return False


def test_docstrings_cite_only_names_that_exist():
    """The former module docstring cited a ``REPORT_KEYS`` that never existed: every ``:data:``,
    ``:func:`` and ``:class:`` target in the package's source resolves (and REPORT_KEYS is gone)."""
    import importlib
    import re

    missing = []
    for path in sorted((PKG / "determinism").glob("*.py")):
        home = importlib.import_module("lam_ref.determinism" + ("" if path.stem == "__init__" else f".{path.stem}"))
        text = path.read_text(encoding="utf-8")
        assert "REPORT_KEYS" not in text, f"{path.name} still cites REPORT_KEYS"
        for role, target in re.findall(r":(data|func|class):`~?([A-Za-z_][\w.]*)`", text):
            if not _resolve(target, home):
                missing.append(f"{path.name}: :{role}:`{target}`")
    assert not missing, f"docstrings cite names that do not exist: {missing}"


# ------------------------------------------------------------------------------------------------
# one schema mechanism (issue 20 item 3)


def test_committed_version_1_reports_still_load_and_are_migrated():
    """Reports written with the former id ``lam_ref.determinism/1`` load as schema
    ``lam_ref.determinism.report`` version 1 (the committed AMD reports are such files)."""
    old = [p for p in sorted(REPORTS.glob("*.json")) if json.loads(p.read_text())["schema"] == "lam_ref.determinism/1"]
    assert old, "no committed version-1 report left to prove that old reports load"
    doc = load_report(old[0])
    assert (doc["schema"], doc["schema_version"]) == ("lam_ref.determinism.report", 1), (doc["schema"], doc.get("schema_version"))


def _strings(obj, where=""):
    if isinstance(obj, str):
        yield where, obj
    elif isinstance(obj, dict):
        for k, v in obj.items():
            yield from _strings(v, f"{where}.{k}")
    elif isinstance(obj, list):
        for i, v in enumerate(obj):
            yield from _strings(v, f"{where}[{i}]")


ALL_REPORTS = sorted(p for p in REPORTS.rglob("*.json") if p.name != "matrix.json")


@pytest.mark.parametrize("path", ALL_REPORTS, ids=[p.relative_to(REPORTS).as_posix() for p in ALL_REPORTS])
def test_committed_reports_name_no_absolute_path(path):
    """Issue 22 item 3: no report records an absolute path of the machine that made it (the encoder
    is named by name and weight digest; input paths are relative to the folder given)."""
    bad = [(w, s) for w, s in _strings(json.loads(path.read_text())) if s.startswith("/") or s[1:3] in (":\\", ":/")]
    assert not bad, f"{path.name}: absolute paths {bad[:3]}"


# ------------------------------------------------------------------------------------------------
# kernel configurations (issue 22 items 2 and 3)


def test_unknown_and_unsupported_configurations_are_skipped_with_the_reason(monkeypatch):
    """An unknown name, an unknown OpenBLAS core and a core the CPU lacks are rows 'skipped' with a
    reason naming them, never an error; no process is started for them."""
    monkeypatch.setattr(K, "cpu_flags", lambda: frozenset({"sse2", "pni", "sse4_2"}))
    monkeypatch.setattr(K, "effective", lambda *a, **k: pytest.fail("no process may start for a skipped configuration"))
    rows = {p.name: p for p in K.plan(["openblas-Bogus", "warp-drive", "openblas-SkylakeX", "torch-avx2"])}
    assert rows["openblas-Bogus"].status == "skipped" and "'openblas-Bogus'" in rows["openblas-Bogus"].reason, rows
    assert rows["warp-drive"].status == "skipped" and "unknown kernel configuration" in rows["warp-drive"].reason, rows
    assert rows["openblas-SkylakeX"].status == "skipped" and "lacks avx512f" in rows["openblas-SkylakeX"].reason, rows
    assert rows["torch-avx2"].status == "skipped" and "lacks avx2" in rows["torch-avx2"].reason, rows


def test_x86_cores_are_skipped_on_another_architecture(monkeypatch):
    monkeypatch.setattr(K, "cpu_flags", lambda: frozenset({"neon", "asimd"}))
    monkeypatch.setattr(K, "effective", lambda *a, **k: pytest.fail("no process may start"))
    (row,) = K.plan(["openblas-Nehalem"])
    assert row.status == "skipped" and "not x86-64" in row.reason, row


def test_config_env_clears_inherited_kernel_variables():
    """A configuration runs with only its own kernel variables: an inherited OPENBLAS_CORETYPE (this
    environment sets one) is removed; thread counts are kept."""
    base = {"OPENBLAS_CORETYPE": "Haswell", "OMP_NUM_THREADS": "2", "ATEN_CPU_CAPABILITY": "avx2", "X": "1"}
    env = K.config_env(K.CONFIGURATIONS["openblas-Nehalem"], base)
    assert env == {"OPENBLAS_CORETYPE": "Nehalem", "OMP_NUM_THREADS": "2", "X": "1"}, env
    assert "OPENBLAS_CORETYPE" not in K.config_env(K.CONFIGURATIONS["default"], base), "default sets nothing"


def test_effective_reads_the_openblas_core_in_use():
    """What runs is read, not assumed: a fresh process under openblas-Nehalem reports OpenBLAS's
    Nehalem kernels through threadpoolctl."""
    if K._missing_flags(K.OPENBLAS_CORETYPES["Nehalem"]):
        pytest.skip("this CPU cannot run OpenBLAS's Nehalem kernels")
    k = K.effective(K.CONFIGURATIONS["openblas-Nehalem"], torch=False)
    if k["openblas"] is None:
        pytest.skip("numpy does not use OpenBLAS here")
    assert k["openblas"] == "Nehalem", f"OPENBLAS_CORETYPE=Nehalem runs {k['openblas']}"


def test_matrix_runs_each_configuration_and_ends_with_the_verdict(tmp_path, capsys):
    """``lam-ref determinism matrix``: one report per configuration that runs (with its kernel
    configuration recorded), an unknown one skipped with the reason, the summary valid under its
    schema, exit 0 when every digest agrees (the hashing encoder: no jitter at all)."""
    if K._missing_flags(K.OPENBLAS_CORETYPES["Nehalem"]):
        pytest.skip("this CPU cannot run OpenBLAS's Nehalem kernels")
    out = tmp_path / "m"
    out.mkdir()
    # two OpenBLAS cores every x86-64 CPU runs (no torch configuration: no process imports torch)
    rc = main(["determinism", "matrix", str(DEMO), "--encoder", "hash", "--batch-sizes", "8,64", "--thresholds", "0.9",
               "--configs", "openblas-Nehalem,openblas-Prescott,openblas-Bogus", "--out", str(out), "--no-progress"])
    text = capsys.readouterr().out
    assert rc == 0, f"matrix exit {rc}:\n{text}"
    got = sorted(p.name for p in out.iterdir())
    assert got in (["matrix.json", "openblas-Nehalem.json", "openblas-Prescott.json"], ["matrix.json", "openblas-Nehalem.json"]), \
        f"one report per configuration that runs (Prescott may run Nehalem's kernels on some builds): {got}"
    neh = load_report(out / "openblas-Nehalem.json")
    assert neh["configuration"] == {"name": "openblas-Nehalem", "env": {"OPENBLAS_CORETYPE": "Nehalem"}}, neh["configuration"]
    kern = neh["target"]["kernels"]
    assert kern["env"]["OPENBLAS_CORETYPE"] == "Nehalem" and kern["numpy_simd"]["enabled"] is not None, kern
    summary = json.loads((out / "matrix.json").read_text())
    schemas.validate(summary, "lam_ref.determinism.matrix")
    rows = {r["name"]: r for r in summary["configurations"]}
    assert rows["openblas-Bogus"]["status"] == "skipped" and "openblas-Bogus" in rows["openblas-Bogus"]["reason"], rows
    assert summary["agree"] and summary["max_cross_sq"] == 0.0, "the hashing encoder is exactly repeatable"
    assert "verdict: every digest agrees" in text and "skipped" in text, text


@pytest.mark.parametrize(
    "extra, fragment",
    [
        (["--batch-sizes", "0"], "batch size must be a positive integer, got 0"),
        (["--configs", ""], "--configs must be a comma-separated list"),
        (["--thresholds", "2"], "threshold must be in [-1, 1], got 2"),
    ],
)
def test_matrix_bad_arguments_exit_2_before_any_process(tmp_path, capsys, extra, fragment):
    out = tmp_path / "m"
    out.mkdir()
    argv = ["determinism", "matrix", str(DEMO), "--encoder", "hash", "--out", str(out), "--no-progress"]
    assert main(argv + extra) == 2, f"{extra}: exit 2"
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and fragment in err[0], err
    assert not list(out.iterdir()), "nothing written"


def test_matrix_refuses_a_missing_output_folder(tmp_path, capsys):
    assert main(["determinism", "matrix", str(DEMO), "--encoder", "hash", "--out", str(tmp_path / "no")]) == 2
    assert "--out" in capsys.readouterr().err, "the option is named"


# ------------------------------------------------------------------------------------------------
# the probe's CLI habits (issue 25)


def test_probe_takes_json_out_and_the_deprecated_out_alias(tmp_path, capsys):
    """``--json OUT`` like every command; ``--out`` still works; giving both (different) is refused."""
    a, b = tmp_path / "a.json", tmp_path / "b.json"
    base = ["determinism", "probe", str(DEMO), "--encoder", "hash", "--batch-sizes", "8", "--thresholds", "0.9"]
    assert main(base + ["--json", str(a)]) == 0 and a.is_file(), "--json OUT writes the report"
    assert main(base + ["--out", str(b), "--no-progress"]) == 0 and b.is_file(), "--out (deprecated) still writes it"
    capsys.readouterr()
    assert main(base + ["--json", str(a), "--out", str(b)]) == 2, "both: exit 2"
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "give one" in err[0], err
    assert main(base) == 2 and "--json OUT" in capsys.readouterr().err, "no output path: exit 2 naming --json"


def test_probe_progress_is_a_few_lines_in_a_redirected_stderr(tmp_path, capsys):
    """Issue 25: the probe uses the commands' one progress bar; into a non-terminal stderr it writes a
    few lines, not one per step, and no tqdm bar of its own."""
    out = tmp_path / "r.json"
    assert main(["determinism", "probe", str(DEMO), "--encoder", "hash", "--batch-sizes", "8,16,32,64",
                 "--thresholds", "0.9,0.5", "--json", str(out)]) == 0
    err = [ln for ln in capsys.readouterr().err.replace("\r", "\n").splitlines() if ln.strip()]
    assert len(err) <= 3, f"{len(err)} progress lines: {err}"
    assert all(ln.startswith("determinism probe:") and " steps |" in ln for ln in err), err


def test_portability_selections_name_tests_that_exist():
    """``make portability``'s default selections (docs/determinism.md, "Kernel matrix"): every test
    path a configuration runs or ignores exists (a renamed module would otherwise be run, or
    dropped, silently), the encoder tests the OpenBLAS/numpy configurations leave out are run by
    the torch configurations, and ``default`` runs the whole suite."""
    root = Path(__file__).resolve().parents[1]
    assert K.CONFIGURATIONS["default"].tests == (), "default runs the whole suite"
    torch_run = set(K.CONFIGURATIONS["torch-default"].tests)
    for name, cfg in K.CONFIGURATIONS.items():
        for arg in cfg.tests:
            path = arg.split("=", 1)[1] if arg.startswith("--ignore=") else arg
            if arg.startswith("-") and not arg.startswith("--ignore="):
                continue
            if arg == "not slow":
                continue
            assert (root / path).exists(), f"{name}: {arg!r} names no file or folder of the checkout"
    ignored = [a.split("=", 1)[1] for a in K.CONFIGURATIONS["numpy-no-avx512"].tests if a.startswith("--ignore=")]
    encoder_tests = [p for p in ignored if p in ("tests/text/test_encoders.py", "tests/test_demo.py", "determinism/test_encoder.py")]
    for p in encoder_tests:
        assert p in torch_run or p.split("/")[0] in torch_run, f"{p} is left out by numpy and run by no torch configuration"
    assert K._present(["-m", "not slow", "--ignore=x", "no/such/test.py", "tests"]) == ["-m", "not slow", "--ignore=x", "tests"], \
        "options and their values are kept, absent paths dropped"
