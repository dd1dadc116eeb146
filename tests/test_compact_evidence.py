"""Evidence retention in ``lam-ref compact``'s report (issue 35 §4; SPEC §12, App. F.2/F.3).

A LoCoMo trajectory carries evidence: the dialogue turns its QA items name. ``compact`` reports,
per trajectory and in its TOTAL, how many of those turns the residual still holds verbatim
(``qa_evidence``), by the rule ``sweep`` uses (:func:`lam_ref.evidence.qa_evidence_retention`).
The expected figures below are computed here from the written residual file and the test's own
input, never from the report; the evidence turns are built so that some are stubbed by L1 (a
near-duplicate of an earlier turn) and others kept."""

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
RUN = ["--encoder", "hash", "--no-progress", "--no-l2"]


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
    assert "evidence" in header, f"the table has an evidence column: {header}"
    total_line = next(x for x in out.splitlines() if x.startswith("TOTAL"))
    assert f"{k_all}/{w_all} ({100 * k_all / w_all:.2f}%)" in total_line, f"TOTAL row shows {k_all}/{w_all}: {total_line!r}"


def test_compact_total_equals_sweep_at_the_same_threshold(tmp_path, capsys):
    """compact's TOTAL ``qa_evidence`` is what ``sweep`` reports at the same threshold on the same
    input (``rows[].qa_evidence``): one rule, one pooling."""
    src = write_locomo(tmp_path / "locomo10.json", CONVERSATIONS)
    report, _, _ = _compact(tmp_path, capsys, src)
    sj = tmp_path / "sweep.json"
    assert main(["sweep", str(src), "--encoder", "hash", "--no-progress", "-t", THRESHOLD, "--json", str(sj)]) == 0, (
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
