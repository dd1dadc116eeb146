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
from lam_ref.conformance.mutants import load_mutants

DOC = Path(__file__).resolve().parents[1] / "docs" / "conformance.md"
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


def test_page_lists_every_check_and_mutant():
    """The 'What is checked' table names every registered check with its claim; the mutant table names
    every shipped mutant with the claim it declares."""
    text = DOC.read_text(encoding="utf-8")
    for c in CHECKS:
        assert re.search(rf"\| `{re.escape(c.id)}` \| {c.claim} \|", text), f"docs/conformance.md lacks the row for {c.id} ({c.claim})"
    for m in load_mutants():
        name = m.__name__.rsplit(".", 1)[1]
        assert re.search(rf"\| `{name}` \| [^|]+ \| {m.VIOLATES} \|", text), f"docs/conformance.md lacks mutant {name} ({m.VIOLATES})"
    n = len(load_mutants())
    assert f"ships {n} small implementations" in text, f"the page must say how many mutants ship ({n})"
