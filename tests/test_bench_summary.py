"""``benchmarks/summary.py`` (issue 26 §6): docs/performance.md shows the figures its result files
hold, and the check notices a figure that changed."""

from __future__ import annotations

import importlib.util
import json
import shutil
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _summary():
    spec = importlib.util.spec_from_file_location("bench_summary", ROOT / "benchmarks" / "summary.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_the_performance_page_shows_the_committed_results():
    """The marked table of docs/performance.md equals what the committed result files give."""
    assert _summary().main(["--check"]) == 0, "run benchmarks/summary.py: docs/performance.md is stale"


def test_a_changed_figure_fails_the_check(tmp_path):
    """A result file whose figure changed no longer matches the page (the check can fail), and
    writing the page puts the new figure in it."""
    mod = _summary()
    res = tmp_path / "results"
    shutil.copytree(ROOT / "benchmarks" / "results" / "epyc-avx2", res)
    page = tmp_path / "performance.md"
    page.write_text(f"# P\n\n{mod.BEGIN}\n{mod.END}\n", encoding="utf-8")
    assert mod.main(["--results", str(res), "--page", str(page)]) == 0
    assert mod.main(["--results", str(res), "--page", str(page), "--check"]) == 0, "fresh page passes"
    doc = json.loads((res / "reuse.json").read_text(encoding="utf-8"))
    doc["ratio_median"] = 9.87
    (res / "reuse.json").write_text(json.dumps(doc), encoding="utf-8")
    assert mod.main(["--results", str(res), "--page", str(page), "--check"]) == 1, "a stale page fails the check"
    mod.main(["--results", str(res), "--page", str(page)])
    assert "9.87×" in page.read_text(encoding="utf-8"), "the new figure is written"


def test_bad_arguments_are_one_line(tmp_path, capsys):
    mod = _summary()
    assert mod.main(["--results", str(tmp_path / "absent")]) == 2
    assert "--results" in capsys.readouterr().err
    page = tmp_path / "p.md"
    page.write_text("no markers\n", encoding="utf-8")
    with pytest.raises(SystemExit, match="bench-summary:begin"):
        mod.main(["--results", str(ROOT / "benchmarks" / "results"), "--page", str(page)])
