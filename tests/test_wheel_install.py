"""Issue 34 §6: an outsider installs lam_ref from a wheel, without the torch/encoder extras, and runs the suite.

The wheel is built from this checkout (``pip wheel --no-deps --no-build-isolation``), installed with
``--no-deps --no-index`` into a fresh virtual environment whose only other packages are lam_ref's
required dependencies (numpy, scipy, xxhash, hypothesis, pytest, jsonschema, threadpoolctl and what
they need), linked from the running interpreter's environment: no network, and no torch,
sentence-transformers or tiktoken (the test asserts they cannot be imported there). In that
environment ``lam-ref conform`` runs on an example adapter and ``python -m lam_ref.conformance.vectors``
on lam_ref's own adapter, from a folder outside the checkout.
"""

from __future__ import annotations

import importlib.metadata as md
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
#: lam_ref's required dependencies (pyproject.toml [project] dependencies), by distribution name.
REQUIRED = ("numpy", "scipy", "xxhash", "hypothesis", "pytest", "jsonschema", "threadpoolctl")
ENCODER_ONLY = ("torch", "sentence_transformers", "tiktoken")


def _closure(names: tuple[str, ...]) -> set[str]:
    """Every distribution ``names`` need (their unconditional requirements, transitively)."""
    seen: set[str] = set()
    todo = list(names)
    while todo:
        name = todo.pop()
        key = name.lower().replace("_", "-")
        if key in seen:
            continue
        try:
            dist = md.distribution(name)
        except md.PackageNotFoundError:
            continue
        seen.add(key)
        for req in dist.requires or []:
            if ";" in req and "extra" in req.split(";", 1)[1]:
                continue
            todo.append(re.split(r"[ ;<>=!~\[(]", req, maxsplit=1)[0])
    return seen


def _top_levels(dist_names: set[str]) -> set[Path]:
    """The files and folders at the top of site-packages that the distributions installed."""
    out: set[Path] = set()
    for name in dist_names:
        dist = md.distribution(name)
        for f in dist.files or []:
            top = f.parts[0]
            if top in ("..", "__pycache__") or top.endswith(".pth"):
                continue
            out.add(Path(dist.locate_file(top)))
    return out


@pytest.mark.slow
def test_wheel_installs_and_runs_the_suite_without_the_encoder_extras(tmp_path):
    """Build the wheel, install it in a fresh venv without torch, run `lam-ref conform` and the vectors there."""
    dist = tmp_path / "dist"
    build = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q", "-w", str(dist), str(ROOT)],
                           capture_output=True, text=True, timeout=600, env={**os.environ, "PIP_NO_INDEX": "1"})
    assert build.returncode == 0, f"pip wheel failed:\n{build.stdout[-3000:]}\n{build.stderr[-3000:]}"
    wheels = list(dist.glob("lam_ref-*.whl"))
    assert len(wheels) == 1, f"expected one wheel, got {wheels}"

    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=120)
    py = venv / "bin" / "python"
    site = Path(subprocess.run([str(py), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                               capture_output=True, text=True, check=True).stdout.strip())
    deps = tmp_path / "deps"
    deps.mkdir()
    for top in _top_levels(_closure(REQUIRED)):
        (deps / top.name).symlink_to(top)
    (site / "lam_ref_deps.pth").write_text(str(deps) + "\n", encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "LAM_IMPL", "VIRTUAL_ENV")}
    install = subprocess.run([sys.executable, "-m", "pip", "--python", str(py), "install", "--no-deps", "--no-index", "-q", str(wheels[0])],
                             capture_output=True, text=True, timeout=300, env=env)
    assert install.returncode == 0, f"installing the wheel failed:\n{install.stdout[-3000:]}\n{install.stderr[-3000:]}"
    env["PATH"] = f"{venv / 'bin'}{os.pathsep}{env.get('PATH', '')}"
    work = tmp_path / "outside"
    work.mkdir()
    probe = subprocess.run([str(py), "-c", "import importlib.util as u, lam_ref; print(lam_ref.__file__); "
                            f"print([m for m in {ENCODER_ONLY!r} if u.find_spec(m)])"],
                           cwd=work, env=env, capture_output=True, text=True, timeout=120)
    assert probe.returncode == 0, probe.stderr
    where, present = probe.stdout.splitlines()[:2]
    assert str(venv) in where, f"lam_ref was imported from {where}, not from the wheel in the fresh venv"
    assert present == "[]", f"the fresh venv must not hold the encoder extras, found {present}"

    conform = subprocess.run([str(venv / "bin" / "lam-ref"), "conform", "--impl", "lam_ref.conformance.witnesses.controls.c17_kept_greedy",
                              "--json", "report.json"], cwd=work, env=env, capture_output=True, text=True, timeout=600)
    assert conform.returncode == 0, f"lam-ref conform from the wheel failed:\n{conform.stdout[-4000:]}\n{conform.stderr[-2000:]}"
    assert "kept-set passed" in conform.stdout, conform.stdout[-2000:]
    vectors = subprocess.run([str(py), "-m", "lam_ref.conformance.vectors", "--impl", "lam_ref.conformance.adapter", "core", "online"],
                             cwd=work, env=env, capture_output=True, text=True, timeout=600)
    assert vectors.returncode == 0, f"the vectors from the wheel failed:\n{vectors.stdout[-3000:]}\n{vectors.stderr[-2000:]}"
