"""Progress a person can trust (issue 35 §5): the plain lines a log gets (stderr not a terminal)
show the time left and never repeat their last line; ``windows`` never falls behind ``encoded``;
counts are in the singular for one; a file of several trajectories (LoCoMo) shows how many are
done; ``compare`` counts trajectories, the probe no trajectories it does not count; ``cct thm3``
shows progress; the probe's labels give the precision a backend really ran at; ``determinism
compare`` notes a report given twice. Every test reads what the command wrote on stderr."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest

from lam_ref.cct.theorems import subsets_up_to, thm3_item_bits, thm3_select_budget
from lam_ref.cli import main
from lam_ref.commands._progress import RunProgress
from lam_ref.determinism.report import compare, load_report
from tests.datagen import swe_agent_traj

LINE = re.compile(r"^(?P<desc>[\w ]+): (?P<done>\d+)/(?P<total>\d+) (?P<unit>\w+)(?P<within> \(.*\))? \| "
                  r"(?P<counts>.*) \[(?P<elapsed>[\d:]+)<(?P<left>[\d:]+|\?)\]$")


def _lines(err: str, desc: str) -> list[re.Match]:
    out = [LINE.match(x) for x in err.splitlines() if x.startswith(desc + ":")]
    assert out and all(out), f"every progress line has the plain form with the time left: {err!r}"
    return out  # type: ignore[return-value]


def _count(counts: str, word: str) -> int:
    m = re.search(rf"(\d+) {word}", counts)
    return int(m.group(1)) if m else 0


def _corpus(tmp_path: Path, n: int) -> Path:
    d = tmp_path / "runs"
    d.mkdir()
    for i in range(n):
        (d / f"r{i}.traj").write_text(json.dumps(swe_agent_traj(i, repeats=3 + i)))
    return d


@pytest.fixture
def every_update(monkeypatch):
    """Plain-line mode writes a line at every update (its interval at 0)."""
    monkeypatch.setattr(RunProgress, "PLAIN_INTERVAL_S", 0.0)


def test_plain_lines_show_time_left_and_encoded_never_ahead(tmp_path, capsys, every_update):
    """Claim: with stderr not a terminal every line ends in ``[elapsed<left]`` (``?`` before any
    work is done, then a time); the windows counted are never fewer than those encoded."""
    d = _corpus(tmp_path, 3)
    assert main(["compact", str(d), "--encoder", "hash", "--batch-size", "1"]) == 0
    lines = _lines(capsys.readouterr().err, "compact")
    assert lines[0]["left"] == "?" and any(m["left"] != "?" for m in lines[1:]), \
        f"time left: unknown at the start, then estimated: {[m['left'] for m in lines]}"
    assert any(_count(m["counts"], "encoded") and m["done"] == "0" for m in lines), \
        "a line inside the first file shows windows encoded (batch size 1)"
    for m in lines:
        assert _count(m["counts"], "encoded") <= _count(m["counts"], "windows?"), \
            f"encoded runs ahead of windows: {m.group(0)}"
    assert lines[-1]["done"] == "3" and lines[-1]["left"] == "00:00", f"the last line is the finished run: {lines[-1][0]}"


def test_one_is_singular(tmp_path, capsys):
    """Claim: one trajectory is ``1 trajectory`` (not ``1 trajectories``)."""
    d = _corpus(tmp_path, 1)
    assert main(["compact", str(d), "--encoder", "hash"]) == 0
    err = capsys.readouterr().err
    last = _lines(err, "compact")[-1]
    assert "1 trajectory," in last["counts"] and "1 trajectories" not in err, f"singular: {last[0]}"


def test_locomo_file_shows_its_conversations(tmp_path, capsys, every_update):
    """Claim: a LoCoMo run (one file, several conversations) says how many conversations of the
    file are done while it is read, and ends at ``1/1 files``."""
    turns = [{"speaker": "A", "dia_id": f"D1:{k + 1}", "text": f"turn {k} of the talk"} for k in range(4)]
    data = [{"sample_id": f"c{s}", "conversation": {"speaker_a": "A", "speaker_b": "B", "session_1": turns}, "qa": []}
            for s in range(3)]
    src = tmp_path / "locomo10.json"
    src.write_text(json.dumps(data))
    assert main(["compact", str(src), "--encoder", "hash"]) == 0
    lines = _lines(capsys.readouterr().err, "compact")
    within = [m["within"] for m in lines if m["within"]]
    assert " (1/3 trajectories of this file)" in within and " (2/3 trajectories of this file)" in within, \
        f"the conversations done are shown: {[m[0] for m in lines]}"
    assert lines[-1]["done"] == "1" and lines[-1]["total"] == "1" and "3 trajectories" in lines[-1]["counts"], \
        f"the run ends at 1/1 files with 3 trajectories: {lines[-1][0]}"


def test_compare_counts_trajectories_and_ends_once(tmp_path, capsys, every_update):
    """Claim: ``compare``'s bar counts trajectories (what it walks), and its final line is written
    once (the last update already said it)."""
    d = _corpus(tmp_path, 2)
    assert main(["compare", str(d), "--encoder", "hash", "--methods", "lam,l0"]) == 0
    lines = _lines(capsys.readouterr().err, "compare")
    assert all(m["unit"] == "trajectories" for m in lines), f"unit: {[m['unit'] for m in lines]}"
    texts = [m.group(0).rsplit(" [", 1)[0] for m in lines]
    assert len(texts) >= 2 and texts[-1] != texts[-2], f"no duplicated final line: {texts[-3:]}"


def test_probe_shows_no_trajectory_count_and_compare_notes_repeats(tmp_path, capsys):
    """Claims: the probe's bar counts steps and windows, never ``0 trajectories``; ``determinism
    compare`` given the same report twice (one path twice, or a copy) says so in a note."""
    d = _corpus(tmp_path, 2)
    rep = tmp_path / "probe.json"
    assert main(["determinism", "probe", str(d), "--encoder", "hash", "--batch-sizes", "2,4",
                 "--thresholds", "0.95", "--json", str(rep)]) == 0
    err = capsys.readouterr().err
    steps = _lines(err, "determinism probe")
    assert "trajector" not in err, f"no trajectory count in the probe's bar: {[m[0] for m in steps]}"
    copy = tmp_path / "copy.json"
    shutil.copy(rep, copy)
    main(["determinism", "compare", str(rep), str(rep), str(copy)])
    err = capsys.readouterr().err
    notes = [x for x in err.splitlines() if "note:" in x]
    assert len(notes) == 2 and all("same report as" in x for x in notes), f"two repeats noted: {err!r}"
    main(["determinism", "compare", str(rep)])
    assert "note:" not in capsys.readouterr().err, "one report: no note"


def test_probe_labels_the_backends_precision(tmp_path, capsys):
    """Claim: a run of the ``openvino-bf16`` backend is labelled ``bfloat16`` in compare's rows and
    divergence lines, whatever ``--dtype`` said (its settings hold float32, torch's option)."""
    d = _corpus(tmp_path, 2)
    rep = tmp_path / "probe.json"
    assert main(["determinism", "probe", str(d), "--encoder", "hash", "--batch-sizes", "2",
                 "--thresholds", "0.95", "--json", str(rep), "--no-progress"]) == 0
    capsys.readouterr()
    doc = load_report(str(rep))
    doc["encoder"]["backend"] = "openvino-bf16"
    rows = compare([doc]).rows
    assert rows and all(r["dtype"] == "bfloat16" for r in rows), f"labelled by the real precision: {rows}"
    doc["encoder"]["backend"] = "torch"
    assert all(r["dtype"] == "float32" for r in compare([doc]).rows), "torch runs keep --dtype"


def test_cct_thm3_shows_progress_and_keeps_its_budgets(capsys):
    """Claims: ``cct thm3`` writes a progress line per budget pair computed on stderr (it was silent
    for 27 s), and the SELECT budget is still ``log2 n`` times the least ``j`` with ``A(j) >= (1-ε)2^n``
    (the definition, summed from scratch)."""
    assert main(["cct", "thm3", "--n", "4", "64", "--eps", "0", "0.25"]) == 0
    lines = _lines(capsys.readouterr().err, "cct thm3")
    assert lines[-1]["done"] == lines[-1]["total"] == "4" and lines[-1]["unit"] == "budgets", lines[-1][0]
    for n in (4, 8, 16, 64, 128):
        for eps in (0, 0.01, 0.25, 0.5, 0.9):
            need = (1 - __import__("fractions").Fraction(eps)) * (1 << n)
            j = next(j for j in range(n + 1) if subsets_up_to(n, j) >= need)
            assert thm3_select_budget(n, eps) == thm3_item_bits(n) * j, f"SELECT budget n={n} eps={eps}"
