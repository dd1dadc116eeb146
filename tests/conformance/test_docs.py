"""docs/conformance.md works exactly as written : its walkthrough is executed here.

Blocks preceded by ``<!-- test: file NAME -->`` are written to a fresh folder; blocks preceded by
``<!-- test: run rc=N expect="..." ... -->`` are run there with bash, in order, with this venv's
``python`` and ``lam-ref`` first on ``PATH``; the exit code and every ``expect`` string are checked.
The page's tables are checked against the registry of checks and the shipped mutants.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

from lam_ref.conformance import CHECKS
from lam_ref.conformance.witnesses.mutants import load_mutants

DOC = Path(__file__).resolve().parents[2] / "docs" / "conformance.md"
_STEP = re.compile(r"<!-- test: (file|run)([^>]*)-->\s*```[a-z]*\n(.*?)```", re.S)


def _steps() -> list[tuple[str, str, str]]:
    return [(m.group(1), m.group(2).strip(), m.group(3)) for m in _STEP.finditer(DOC.read_text(encoding="utf-8"))]


def test_walkthrough_runs_as_written(tmp_path):
    """Write the adapter, run the suite (2 failures), read the report, declare the expected failures
    (the run passes), run through the exec server: each step's exit code and output as the page says."""
    steps = _steps()
    assert [k for k, _, _ in steps].count("run") >= 4 and steps[0][0] == "file", f"walkthrough steps not found: {steps}"
    env = {k: v for k, v in os.environ.items() if k not in ("LAM_IMPL", "PYTEST_ADDOPTS", "LAM_EXEC_TIMEOUT")}
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    for kind, args, body in steps:
        if kind == "file":
            (tmp_path / args).write_text(body, encoding="utf-8")
            continue
        rc = int(re.search(r"rc=(\d+)", args).group(1))
        res = subprocess.run(["bash", "-c", body], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300, check=False)
        out = res.stdout + res.stderr
        assert res.returncode == rc, f"step {body.strip()[:80]!r}: exit code {res.returncode}, the page says {rc}\n{out[-4000:]}"
        for needle in re.findall(r'expect="([^"]*)"', args):
            assert needle in out, f"step {body.strip()[:80]!r}: output lacks {needle!r}\n{out[-4000:]}"


def test_generated_tables_equal_the_registry():
    """issue 20 item 6: the check table and the profile table on docs/conformance.md are generated from the one
    registration (the @check decorator): the page holds them verbatim (regenerate with
    ``python -m lam_ref.conformance.registry --write docs/conformance.md``)."""
    from lam_ref.conformance.profiles import markdown_table
    from lam_ref.conformance.registry import checks_table

    text = DOC.read_text(encoding="utf-8")
    for name, table in (("checks-table", checks_table()), ("profiles-table", markdown_table(CHECKS))):
        m = re.search(rf"<!-- {name}:start -->\n(.*?)\n<!-- {name}:end -->", text, re.S)
        assert m is not None, f"docs/conformance.md lacks the generated {name} block"
        assert m.group(1) == table, f"docs/conformance.md's {name} differs from the registry; regenerate it:\n{table}"


def test_check_module_names_derive_from_the_registry():
    """issue 36 §2: the registry scans the package ``lam_ref.conformance.checks`` (no hand-kept list of
    modules); every registered check comes from a module it found, the one named after the check's area;
    each module's ``check_*`` functions are exactly the checks it registers; no check module imports the
    registry back (the old checks <-> registry loop through importlib)."""
    import ast
    import importlib
    from pathlib import Path

    from lam_ref.conformance.registry import check_modules

    modules = check_modules()
    strays = sorted({c.func.__module__ for c in CHECKS} - set(modules))
    assert not strays, f"checks registered from modules outside the scanned package: {strays}"
    misplaced = [(c.id, c.func.__module__) for c in CHECKS if c.func.__module__ != f"lam_ref.conformance.checks.{c.area}"]
    assert not misplaced, f"checks outside the module of their area (lam_ref.conformance.checks.<area>): {misplaced}"
    for name in modules:
        mod = importlib.import_module(name)
        mine = {c.func.__name__ for c in CHECKS if c.func.__module__ == name}
        listed = {n for n, obj in vars(mod).items() if n.startswith("check_") and hasattr(obj, "check")}
        assert listed == mine, f"{name}: check functions {sorted(listed)} differ from its registered checks {sorted(mine)}"
        tree = ast.parse(Path(mod.__file__).read_text(encoding="utf-8"))
        imported = {node.module or "" for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)}
        assert not any(m.endswith("registry") for m in imported), f"{name} imports the registry ({sorted(imported)})"


def test_codec_page_worked_example_is_a_complete_vector():
    """A12: docs/codec.md prints the whole worked stream, CRC included; those bytes are what the check
    codec.v1_format requires, they decode to the values the page lists, and the v1 encoder writes them."""
    import numpy as np

    from lam_ref.codec import codec_decode, codec_encode
    from lam_ref.conformance.checks.codec import HAND_DECODED, HAND_STREAM, HAND_X

    page = (DOC.parent / "codec.md").read_text(encoding="utf-8")
    m = re.search(r"`(4C535A50 [0-9A-F ]+)`", page)
    assert m is not None and "<crc32>" not in page, "docs/codec.md must print the worked stream in full"
    blob = bytes.fromhex(m.group(1).replace(" ", ""))
    assert blob == HAND_STREAM, f"the page's stream {blob.hex()} differs from the check's {HAND_STREAM.hex()}"
    assert np.array_equal(codec_decode(blob), HAND_DECODED), "the page's stream does not decode to 3, 0, 1 x30, -1, -1, 0 x6"
    assert codec_encode(HAND_X, 0.5) == blob, "the v1 encoder does not write the page's stream"


def test_page_lists_every_check_and_mutant():
    """The 'What is checked' table names every registered check with its claim; the mutant table names
    every shipped mutant with the claim it declares."""
    text = DOC.read_text(encoding="utf-8")
    for c in CHECKS:
        assert re.search(rf"\| `{re.escape(c.id)}` \| {c.claim} \|", text), f"docs/conformance.md lacks the row for {c.id} ({c.claim})"
    designed = [m for m in load_mutants() if not hasattr(m, "CAUGHT_BY")]  # m46+: docs/conformance-mutants.md (tests/conformance/test_mutants.py)
    for m in designed:
        name = m.__name__.rsplit(".", 1)[1]
        assert re.search(rf"\| `{name}` \| [^|]+ \| {m.VIOLATES} \|", text), f"docs/conformance.md lacks mutant {name} ({m.VIOLATES})"
    n = len(designed)
    assert f"ships {n} small implementations" in text, f"the page must say how many mutants ship ({n})"
    for name, caught in re.findall(r"\| `(m\d\d_\w+)` \| [^|]*\(caught by ([^)]*)\) \|", text):
        said = set(re.findall(r"`([a-z_.0-9-]+)`", caught))
        named = {c.id for c in CHECKS if name in c.shown_to_fail_on}
        assert said == named, f"docs/conformance.md says {name} is caught by {sorted(said)}; the checks name {sorted(named)}"
