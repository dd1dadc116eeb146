"""``lam-ref cct``: the membership table, --json, the PNG+SVG plot, the toy and Theorem 3 tables,
and one-line errors with exit code 2 on bad input."""

from __future__ import annotations

import json

import pytest

from lam_ref.cli import main


@pytest.mark.claim("CCT-APPA")
def test_membership_table_json_and_plot(tmp_path, capsys):
    out = tmp_path / "m.json"
    stem = tmp_path / "plot"
    rc = main(["cct", "membership", "--members", "300", "--queries", "40", "--seeds", "1", "2",
               "--bits-per-item", "2", "16", "--json", str(out), "--plot", str(stem)])
    assert rc == 0, "exit 0"
    text = capsys.readouterr().out
    assert "bloom" in text and "lower bound" in text and "random-subset" in text, "table printed"
    data = json.loads(out.read_text())
    assert data["members"] == 300 and len(data["results"]) == 7 * 2, "7 compactors x 2 budgets"
    for r in data["results"]:
        assert r["bits_used"] <= r["budget"], f"{r['compactor']} over budget"
        assert r["queries"] == 160, "2 seeds x (40 + 40)"
    assert (tmp_path / "plot.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n", "a PNG"
    assert b"<svg" in (tmp_path / "plot.svg").read_bytes()[:2000], "an SVG"


@pytest.mark.claim("CCT-THM3")
def test_thm3_and_toy_json(capsys):
    assert main(["cct", "thm3", "--n", "8", "--eps", "0", "--json", "-"]) == 0, "exit 0"
    rows = json.loads(capsys.readouterr().out)
    assert rows == [{"n": 8, "eps": 0.0, "gen_bits": 8, "select_bits": 24}], f"{rows}"
    assert main(["cct", "toy", "--max-bits", "1", "--json", "-"]) == 0, "exit 0"
    toy = json.loads(capsys.readouterr().out)
    assert [r["bits"] for r in toy["rows"]] == [0, 1], "budgets 0..1"


@pytest.mark.parametrize(
    "argv, needle",
    [
        (["cct", "membership", "--members", "50", "--queries", "0"], "--queries must be in"),
        (["cct", "membership", "--members", "50", "--queries", "10", "--bits-per-item", "-1"], "--bits-per-item must be"),
        (["cct", "thm3", "--n", "6"], "n must be a power of two"),
        (["cct", "thm3", "--eps", "1.0"], "eps must be in [0, 1)"),
        (["cct", "toy", "--max-bits", "9"], "max_bits must be an integer in [0, 6]"),
        (["cct", "toy", "--universe", "12", "--members", "6"], "exceeds the toy limit"),
    ],
)
def test_bad_input_one_line_exit_2(argv, needle, capsys):
    assert main(argv) == 2, "exit 2"
    err = capsys.readouterr().err.strip()
    assert needle in err and "\n" not in err, f"one line naming the argument: {err!r}"
