"""Packaging: the codec is registered through numcodecs' entry point, and the runtime
dependencies are exactly the third-party packages the library imports at module level."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
#: Import names that differ from their distribution names.
DIST_OF = {"yaml": "pyyaml"}


def test_numcodecs_finds_the_codec_in_a_fresh_process():
    """``numcodecs.get_codec({"id": "lam_ref.cuszp_plain"})`` works without importing
    ``lam_ref.codec`` first (the ``numcodecs.codecs`` entry point; SPEC §9)."""
    pytest.importorskip("numcodecs")
    code = (
        "import sys, numcodecs\n"
        "assert 'lam_ref.codec' not in sys.modules\n"
        "c = numcodecs.get_codec({'id': 'lam_ref.cuszp_plain', 'eb': 0.01})\n"
        "import numpy as np\n"
        "x = np.linspace(-1, 1, 100, dtype=np.float32)\n"
        "y = c.decode(c.encode(x))\n"
        "print(type(c).__module__, float(np.abs(y - x).max()) <= 0.01 + 1e-6)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=False)
    assert out.returncode == 0, f"get_codec failed in a fresh process: {out.stderr[-2000:]}"
    assert out.stdout.split() == ["lam_ref.codec", "True"], f"codec or round trip wrong: {out.stdout!r}"


def _module_level_imports(tree: ast.Module) -> set[str]:
    """Top-level package names imported at module level, outside ``try`` blocks (optional
    imports sit in ``try: ... except ImportError`` or inside functions)."""
    names: set[str] = set()
    for node in tree.body:
        if isinstance(node, ast.Import):
            names.update(a.name.split(".")[0] for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.add(node.module.split(".")[0])
    return names


def test_runtime_dependencies_are_exactly_what_the_library_imports():
    """``[project] dependencies`` lists every third-party package ``lam_ref`` imports at module
    level, and nothing else (sympy and tqdm belong to the dev extra)."""
    tomllib = pytest.importorskip("tomllib" if sys.version_info >= (3, 11) else "tomli")  # tomli: dev extra on 3.10
    deps = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["dependencies"]
    declared = {d.split(">")[0].split("=")[0].split("<")[0].split("[")[0].strip().lower() for d in deps}
    imported: set[str] = set()
    for path in (ROOT / "lam_ref").rglob("*.py"):
        if "_vendor" in path.parts:
            continue
        imported |= _module_level_imports(ast.parse(path.read_text(encoding="utf-8")))
    third_party = {DIST_OF.get(n, n).lower() for n in imported if n not in sys.stdlib_module_names and n != "lam_ref"}
    third_party.discard("__future__")
    assert third_party == declared, f"imported at module level {sorted(third_party)} vs dependencies {sorted(declared)}"
