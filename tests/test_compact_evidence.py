"""Evidence retention in ``lam-ref compact``'s report (issue 35 §4; SPEC §12, App. F.2/F.3).

A LoCoMo trajectory carries evidence: the dialogue turns its QA items name. ``compact`` reports,
per trajectory and in its TOTAL, how many of those turns the residual still holds verbatim
(``qa_evidence``), by the rule ``sweep`` uses (:func:`lam_ref.evidence.qa_evidence_retention`).
With ``--gold`` it reports the gold patches' evidence lines the same way (``evidence``,
:func:`lam_ref.evidence.gold_evidence`). The expected figures below are computed here from the
written residual files and the test's own input, never from the report; the evidence is built so
that some of it is stubbed by L1 (a near-duplicate of an earlier window) and some kept."""

from __future__ import annotations

import json
from fractions import Fraction
from pathlib import Path

import pytest

from lam_ref.cli import main
from lam_ref.evidence import pool_evidence, qa_evidence_retention
from lam_ref.geometry import LamValueError
from lam_ref.text.loaders import MalformedEvidenceWarning, load_file

from .datagen import swe_agent_traj, write_locomo

MUSEUM = "the museum visit was great and the weather was sunny all day long"
CELLO = "my sister plays the cello in an orchestra"
#: Two conversations: ``(turns, evidence ids per QA item)``. ``D1:4`` of conv-1 and ``D1:3`` of
#: conv-2 repeat an earlier turn up to punctuation (the hashing encoder reads them as the same
#: window: L1 stubs them, and their text is nowhere verbatim); ``D9:9`` names no turn (dropped,
#: with a warning).
CONVERSATIONS = [
    (["we walked to the harbour museum and bought two tickets",
      "I remember the cafe next to it was closed",
      MUSEUM, MUSEUM + "!",
      "I bought a red kayak last summer in Oslo"],
     [["D1:2", "D1:4"], ["D1:5", "D1:3"], ["D1:4"]]),
    ([CELLO, "she practices every evening after dinner", CELLO + "."],
     [["D1:3"], ["D1:2"], ["D9:9"]]),
]
THRESHOLD = "0.9"
#: The paper's stub rule (every dropped window becomes a stub, SPEC §8.1 ``--l0-stubs paper``): the short
#: turns here would otherwise stay verbatim under the net-positive rule, and no evidence would be lost.
RUN = ["--encoder", "hash", "--no-progress", "--no-l2", "--l0-stubs", "paper"]


def _expected(conversations, residual_dir: Path) -> list[tuple[int, int]]:
    """Per conversation ``(witnessed, kept)``: the distinct texts of the turns the QA evidence
    names (read from the input itself), and how many of them some residual observation of the
    written ``*conv-<n>.residual.jsonl`` contains verbatim."""
    out = []
    for n, (turns, evidence) in enumerate(conversations, start=1):
        by_id = {f"D1:{i + 1}": t for i, t in enumerate(turns)}
        texts = list(dict.fromkeys(by_id[e] for ev in evidence for e in ev if e in by_id))
        (path,) = residual_dir.glob(f"*conv-{n}.residual.jsonl")
        residual = [r["text"] for r in map(json.loads, path.read_text(encoding="utf-8").splitlines())
                    if r["role"] == "observation"]
        out.append((len(texts), sum(any(t in r for r in residual) for t in texts)))
    return out


def _compact(tmp_path: Path, capsys, src: Path, name: str = "c") -> tuple[dict, str, str]:
    rep = tmp_path / f"{name}.json"
    rc = main(["compact", str(src), *RUN, "-t", THRESHOLD, "--json", str(rep),
               "--residual-dir", str(tmp_path / name), "--mkdir"])
    cap = capsys.readouterr()
    assert rc == 0, f"compact ran: {cap.err}"
    return json.loads(rep.read_text(encoding="utf-8")), cap.out, cap.err


def test_compact_reports_the_qa_evidence_turns_its_residual_keeps(tmp_path, capsys):
    """SPEC §12 on LoCoMo QA evidence: each trajectory's ``qa_evidence`` (witnessed, kept,
    retention) and TOTAL's pooled micro retention equal the fractions computed from the residual
    files ``compact`` wrote; the table shows them in its evidence column."""
    src = write_locomo(tmp_path / "locomo10.json", CONVERSATIONS)
    report, out, _ = _compact(tmp_path, capsys, src)
    expected = _expected(CONVERSATIONS, tmp_path / "c")
    assert sum(w - k for w, k in expected) >= 2 and sum(k for _, k in expected) >= 2, (
        f"precondition: some evidence turns stubbed and some kept, per conversation {expected}")
    for traj, (w, k) in zip(report["trajectories"], expected):
        q = traj["qa_evidence"]
        assert (q["witnessed"], q["kept"]) == (w, k), f"{traj['id']}: reported {q}, residual gives {k}/{w}"
        assert q["retention"] == float(Fraction(k, w)), f"{traj['id']}: retention {q['retention']} != {k}/{w}"
    total = report["total"]["qa_evidence"]
    w_all, k_all = sum(w for w, _ in expected), sum(k for _, k in expected)
    assert (total["witnessed"], total["kept"], total["lost"]) == (w_all, k_all, w_all - k_all), f"TOTAL {total}"
    assert total["micro"] == float(Fraction(k_all, w_all)), f"TOTAL micro {total['micro']} != {k_all}/{w_all}"
    assert total["macro_intact"] == float(Fraction(sum(w == k for w, k in expected), len(expected))), (
        f"TOTAL macro_intact {total['macro_intact']} for per-conversation {expected}")
    header = out.splitlines()[0].split()
    assert "QA" in header and "evidence" in header, f"the table has a QA evidence column: {header}"
    total_line = next(x for x in out.splitlines() if x.startswith("TOTAL"))
    assert f"{k_all}/{w_all} ({100 * k_all / w_all:.2f}%)" in total_line, f"TOTAL row shows {k_all}/{w_all}: {total_line!r}"


def test_compact_total_equals_sweep_at_the_same_threshold(tmp_path, capsys):
    """compact's TOTAL ``qa_evidence`` is what ``sweep`` reports at the same threshold on the same
    input (``rows[].qa_evidence``): one rule, one pooling."""
    src = write_locomo(tmp_path / "locomo10.json", CONVERSATIONS)
    report, _, _ = _compact(tmp_path, capsys, src)
    sj = tmp_path / "sweep.json"
    assert main(["sweep", str(src), "--encoder", "hash", "--no-progress", "--l0-stubs", "paper", "-t", THRESHOLD, "--json", str(sj)]) == 0, (
        f"sweep ran: {capsys.readouterr().err}")
    out = capsys.readouterr().out
    (row,) = json.loads(sj.read_text(encoding="utf-8"))["rows"]
    total = report["total"]["qa_evidence"]
    assert total["witnessed"] > total["kept"] > 0, f"precondition: evidence both lost and kept: {total}"
    assert row["qa_evidence"] == total, f"sweep t={THRESHOLD}: {row['qa_evidence']} != compact TOTAL {total}"
    assert "QA evidence" in out and f"{total['kept']}/{total['witnessed']}" in out, f"sweep's table shows it: {out!r}"


def test_compact_warns_of_evidence_ids_iff_it_reports_evidence(tmp_path, capsys):
    """Issue 35 §4: compact warns about a LoCoMo evidence id it cannot read (one ``lam-ref compact:
    warning:`` line, naming the QA item) exactly when it reports evidence; on an input without
    QA evidence there is neither an evidence warning nor an evidence column or figure."""
    src = write_locomo(tmp_path / "locomo10.json", CONVERSATIONS)
    report, _, err = _compact(tmp_path, capsys, src)
    warned = [x for x in err.splitlines() if x.startswith("lam-ref compact: warning: ")]
    assert len(warned) == 1 and "qa[2].evidence[0]" in warned[0] and "D9:9" in warned[0], f"one warning: {warned}"
    assert report["total"]["qa_evidence"] is not None, "and compact reports evidence"
    swe = tmp_path / "swe" / "a.traj"
    swe.parent.mkdir()
    swe.write_text(json.dumps(swe_agent_traj(1)), encoding="utf-8")
    report, out, err = _compact(tmp_path, capsys, swe, name="s")
    assert "evidence" not in err, f"no evidence, no evidence warning: {err!r}"
    assert report["total"]["qa_evidence"] is None and report["trajectories"][0]["qa_evidence"] is None, (
        "no QA items: no qa_evidence figure (not a vacuous 100 %)")
    assert "evidence" not in out.splitlines()[0], f"no evidence column: {out.splitlines()[0]!r}"


def test_qa_evidence_retention_is_none_without_qa_items(tmp_path):
    """A trajectory without QA items carries no QA evidence (``None``, not 100 %); a QA item whose
    only id was dropped witnesses nothing (``0/0``, retention 1 by Table 14's vacuous rule, shown "—")."""
    swe = tmp_path / "a.traj"
    swe.write_text(json.dumps(swe_agent_traj(1)), encoding="utf-8")
    (traj,) = load_file(swe)
    assert qa_evidence_retention(traj, [r.text for r in traj.records]) is None, "no QA items: None"
    src = write_locomo(tmp_path / "locomo10.json", [(["hello there friend of mine"], [["D9:9"]])])
    with pytest.warns(MalformedEvidenceWarning, match="D9:9"):
        (conv,) = load_file(src)
    r = qa_evidence_retention(conv, ["hello there friend of mine"])
    assert r is not None and r.witnessed_count == 0, f"a QA item with no readable id witnesses nothing: {r}"


@pytest.mark.parametrize("counts", [[(2, 3)], [(1, -1)]])
def test_pool_evidence_refuses_impossible_counts(counts):
    """Bad input: kept outside ``[0, witnessed]`` is one error naming the argument."""
    with pytest.raises(LamValueError, match=r"counts\[0\]"):
        pool_evidence(counts)


BASE = ("def compute_total(items):\n    return sum(item.price for item in items)\n\n\n"
        "def main():\n    print(compute_total(load_basket('basket.json')))\n")
NEAR = BASE.replace("item.price", "item.cost")  # one line differs: L1 stubs it, its line is gone
TRACE = ("Traceback (most recent call last):\n  File \"shop.py\", line 9, in main\n"
         "KeyError: 'price' was not found in the basket record")
#: SWE-agent trajectories (observations per step) and the gold patches of ``--gold``: the line
#: ``raise ValueError`` is in no observation (not witnessed), ``zzz`` matches no trajectory.
SWE_RUNS = {"a": [BASE, TRACE, NEAR], "b": [TRACE, BASE, BASE]}
PATCH = ("--- a/shop.py\n+++ b/shop.py\n@@ -1,2 +1,3 @@\n def compute_total(items):\n-    x\n"
         "+    return sum(item.cost for item in items)\n+    return sum(item.price for item in items)\n")
GOLD = {"a": PATCH + "+    raise ValueError('empty basket')\n", "b": PATCH, "zzz": PATCH}


def _swe_runs(tmp_path: Path) -> tuple[Path, Path]:
    runs = tmp_path / "runs"
    runs.mkdir()
    for name, obs in SWE_RUNS.items():
        steps = [{"action": f"step {i}", "observation": o, "thought": "t"} for i, o in enumerate(obs)]
        (runs / f"{name}.traj").write_text(json.dumps({"trajectory": steps}), encoding="utf-8")
    gold = tmp_path / "gold.json"
    gold.write_text(json.dumps(GOLD), encoding="utf-8")
    return runs, gold


def test_compact_gold_evidence_is_the_residuals_and_sweeps(tmp_path, capsys):
    """App. F.3 with ``--gold``: each trajectory's ``evidence`` (witnessed, kept, retention) equals
    the added patch lines of >= 12 characters found in its original observations and still found
    in its written residual; TOTAL (exact and relaxed) equals sweep's ``rows[].evidence`` at the
    same threshold; a gold id matching no trajectory is listed."""
    runs, gold = _swe_runs(tmp_path)
    rep = tmp_path / "c.json"
    assert main(["compact", str(runs), *RUN, "-t", THRESHOLD, "--gold", str(gold), "--json", str(rep),
                 "--residual-dir", str(tmp_path / "res"), "--mkdir"]) == 0, f"compact ran: {capsys.readouterr().err}"
    out = capsys.readouterr().out
    report = json.loads(rep.read_text(encoding="utf-8"))
    expected = {}
    for name, obs in SWE_RUNS.items():
        lines = [ln[1:].strip() for ln in GOLD[name].splitlines()
                 if ln.startswith("+") and not ln.startswith("+++") and len(ln[1:].strip()) >= 12]
        witnessed = [ln for ln in dict.fromkeys(lines) if any(ln in o for o in obs)]
        (path,) = (tmp_path / "res").glob(f"{name}.residual.jsonl")
        residual = [r["text"] for r in map(json.loads, path.read_text(encoding="utf-8").splitlines())
                    if r["role"] == "observation"]
        expected[name] = (len(witnessed), sum(any(ln in r for r in residual) for ln in witnessed))
    assert sum(w - k for w, k in expected.values()) >= 1 and sum(k for _, k in expected.values()) >= 2, (
        f"precondition: some witnessed lines lost and some kept: {expected}")
    for traj in report["trajectories"]:
        ev, (w, k) = traj["evidence"], expected[traj["id"]]
        assert (ev["gold_key"], ev["witnessed"], ev["kept"]) == (traj["id"], w, k), f"{traj['id']}: {ev} != {k}/{w}"
        assert ev["retention"] == float(Fraction(k, w)), f"{traj['id']}: retention {ev['retention']} != {k}/{w}"
    total = report["total"]["evidence"]
    w_all, k_all = sum(w for w, _ in expected.values()), sum(k for _, k in expected.values())
    assert (total["witnessed"], total["kept"], total["micro"]) == (w_all, k_all, float(Fraction(k_all, w_all))), (
        f"TOTAL {total} != {k_all}/{w_all}")
    assert report["gold_unmatched"] == ["zzz"], f"the unmatched gold id is listed: {report['gold_unmatched']}"
    header = out.splitlines()[0].split()
    assert "evidence" in header and "QA" not in header, f"a gold evidence column, no QA column: {header}"
    sj = tmp_path / "sweep.json"
    assert main(["sweep", str(runs), "--encoder", "hash", "--no-progress", "--l0-stubs", "paper", "-t", THRESHOLD, "--gold", str(gold),
                 "--json", str(sj)]) == 0, f"sweep ran: {capsys.readouterr().err}"
    (row,) = json.loads(sj.read_text(encoding="utf-8"))["rows"]
    keys = ("witnessed", "kept", "lost", "micro", "macro_intact", "trajectories", "trajectories_with_evidence")
    assert {k: row["evidence"][k] for k in keys} == {k: total[k] for k in keys}, (
        f"sweep t={THRESHOLD}: {row['evidence']} != compact TOTAL {total}")
    assert row["evidence"]["relaxed"] == total["relaxed"], f"relaxed: {row['evidence']['relaxed']} != {total['relaxed']}"


def test_compact_gold_is_serial_only(tmp_path, capsys):
    """Bad input: ``--gold`` with the Dask options is one line naming the option (exit 2), before
    any cluster or encoder starts."""
    runs, gold = _swe_runs(tmp_path)
    assert main(["compact", str(runs), *RUN, "--gold", str(gold), "--workers", "1"]) == 2, "refused"
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "--gold" in err[0] and "serially" in err[0], f"one line naming --gold: {err}"


@pytest.mark.parametrize("argv", [["compact", "runs/"], ["sweep", "runs/"], ["compare", "runs/"]])
def test_gold_is_one_option_of_every_command_that_measures_evidence(argv):
    """Issue 35 §4: ``--gold`` is declared once (commands/_options.add_gold) and parsed alike by
    compact, sweep and compare: the same attribute, value and metavar."""
    from lam_ref.cli import build_parser

    parser = build_parser()
    args = parser.parse_args([*argv, "--gold", "g.json"])
    assert args.gold == "g.json", f"{argv[0]}: --gold parsed as {args.gold!r}"
    sub = next(a for a in parser._actions if a.dest == "command" or getattr(a, "choices", None))
    gold = next(a for a in sub.choices[argv[0]]._actions if "--gold" in a.option_strings)
    assert gold.metavar == "PATCHES", f"{argv[0]}: --gold metavar {gold.metavar!r}"


@pytest.mark.dask
def test_compact_on_dask_reports_and_warns_like_serial(tmp_path, capsys):
    """The Dask compact (``--workers 1``) carries the same ``qa_evidence`` per trajectory and in
    TOTAL as the serial run, and prints the same one evidence-id warning (issue 35 §4)."""
    pytest.importorskip("distributed")
    src = write_locomo(tmp_path / "locomo10.json", CONVERSATIONS)
    serial, _, _ = _compact(tmp_path, capsys, src)
    rep = tmp_path / "dask.json"
    assert main(["compact", str(src), *RUN, "-t", THRESHOLD, "--workers", "1", "--json", str(rep)]) == 0, (
        f"compact on Dask ran: {capsys.readouterr().err}")
    err = capsys.readouterr().err
    report = json.loads(rep.read_text(encoding="utf-8"))
    assert [t["qa_evidence"] for t in report["trajectories"]] == [t["qa_evidence"] for t in serial["trajectories"]], (
        "per-trajectory qa_evidence: Dask == serial")
    assert report["total"]["qa_evidence"] == serial["total"]["qa_evidence"], (
        f"TOTAL: Dask {report['total']['qa_evidence']} != serial {serial['total']['qa_evidence']}")
    warned = [x for x in err.splitlines() if x.startswith("lam-ref compact: warning: ")]
    assert len(warned) == 1 and "D9:9" in warned[0], f"one evidence-id warning on Dask too: {warned}"
