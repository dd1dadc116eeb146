"""``lam-ref sweep``: gold-patch parsing, argument validation, the evidence set of ECR@τ, relaxed
evidence and LoCoMo QA retrieval (SPEC §12; paper App. F.2–F.4, eq. 8, Table 17).

Trajectories are small hand-made files scored with the deterministic hashing encoder
(``--encoder hash``: signed hashing of lower-cased word uni- and bigrams, so two texts with the same
words in the same order have the same embedding whatever their punctuation). Expected values are
worked out by hand in the comments, or (removal fractions) from per-trajectory token counts of
:func:`lam_ref.text.pipeline.compact_trajectory`, which the sweep only aggregates.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from lam_ref import evidence
from lam_ref import metrics as M
from lam_ref.cli import main
from lam_ref.geometry import LamValueError
from lam_ref.text.encoders import HashingEncoder
from lam_ref.text.loaders import load_file
from lam_ref.text.pipeline import CompactionConfig, compact_trajectory

from .datagen import write_jsonl_trajectory as _jsonl

SHARED = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "swe-agent-trajectories"
PYDICOM = next(iter(sorted(SHARED.rglob("pydicom__pydicom-1458.traj"))), None) if SHARED.is_dir() else None

HANDLER = "def handler(request):\n    return render_page(request)\n" + "".join(
    f"def helper_{i}(value):\n    return value * {i} + offset_{i}\n" for i in range(12))
EVIDENCE_A = "return render_page(request)"  # 27 characters: an evidence line (>= 12)


@pytest.fixture()
def runs(tmp_path: Path) -> Path:
    """a: repeated file read (one L1 merge), evidence witnessed and kept; b: no repeats, no gold;
    c: the same output three times, gold patch whose line is never observed."""
    d = tmp_path / "runs"
    _jsonl(d / "a.jsonl", [("cat f.py", HANDLER), ("ls", "f.py setup.py"), ("cat f.py", HANDLER)])
    _jsonl(d / "b.jsonl", [("ls", "alpha.txt"), ("cat alpha.txt", "one two three four"),
                           ("cat beta.txt", "five six seven eight nine")])
    out = "collected 4 items\n\ntest_y.py ....  [100%]\n4 passed in 0.02s"
    _jsonl(d / "c.jsonl", [("pytest", out), ("pytest", out), ("pytest", out)])
    return d


def _sweep_json(args: list[str], tmp_path: Path, capsys) -> tuple[int, dict, str, str]:
    out = tmp_path / "sweep.json"
    rc = main(["sweep", *args, "--encoder", "hash", "--no-progress", "--json", str(out)])
    cap = capsys.readouterr()
    assert out.exists(), f"the JSON report is written (rc={rc}, stderr={cap.err!r})"
    return rc, json.loads(out.read_text()), cap.out, cap.err


def _counts(path: Path, t: float) -> tuple[int, int]:
    (traj,) = load_file(path)
    res = compact_trajectory(traj, HashingEncoder(), CompactionConfig(threshold=t, per_layer=False))
    return res.tokens_original, res.tokens_residual_net


# ----------------------------------------------------------------------------------------------
# 1. gold files


def test_gold_single_jsonl_line_is_one_record(tmp_path, runs, capsys):
    rec = {"instance_id": "a", "patch": f"--- a/f.py\n+++ b/f.py\n+{EVIDENCE_A}\n"}
    for name in ("gold.jsonl", "gold.json"):
        p = tmp_path / name
        p.write_text(json.dumps(rec) + "\n")
        assert evidence.load_gold(str(p)) == {"a": rec["patch"]}, f"{name}: one line is one record, not {{id: patch}}"
    # a SWE-bench instance row carries more string fields; still one record keyed by instance_id
    swe = dict(rec, repo="o/r", base_commit="abc", FAIL_TO_PASS='["t"]', problem_statement="bug")
    (tmp_path / "swe.json").write_text(json.dumps(swe))
    assert evidence.load_gold(str(tmp_path / "swe.json")) == {"a": rec["patch"]}, "SWE-bench row: instance_id -> patch"
    # a JSON array of records
    (tmp_path / "arr.json").write_text(json.dumps([rec, {"instance_id": "c", "patch": "+x"}], indent=1))
    assert evidence.load_gold(str(tmp_path / "arr.json")) == {"a": rec["patch"], "c": "+x"}, "array of records"
    # a plain {id: patch} map is still a map
    (tmp_path / "map.json").write_text(json.dumps({"a": "+p1", "c": "+p2"}))
    assert evidence.load_gold(str(tmp_path / "map.json")) == {"a": "+p1", "c": "+p2"}, "{id: patch} map"
    # end to end: the evidence of trajectory a is found through the one-line JSONL
    rc, rep, _, err = _sweep_json([str(runs / "a.jsonl"), "--gold", str(tmp_path / "gold.jsonl"), "-t", "0.99"],
                                  tmp_path, capsys)
    assert rc == 0, f"sweep runs: {err}"
    ev = rep["rows"][0]["evidence"]
    assert (ev["witnessed"], ev["kept"]) == (1, 1), f"the one evidence line is witnessed and kept: {ev}"
    assert "no gold patch" not in err, f"trajectory a is matched: {err}"


@pytest.mark.parametrize("name, text, needle", [
    ("empty.json", "{}", "holds no patches"),
    ("empty.jsonl", "\n\n", "holds no patches"),
    ("map.jsonl", '{"a": "+patch line"}\n', "line 1"),
    ("nopatch.json", '{"instance_id": "a", "model_patch": "+x"}', "'patch'"),
    ("dup.jsonl", '{"instance_id": "a", "patch": "+x"}\n{"instance_id": "a", "patch": "+y"}\n', "line 2"),
    ("list.json", '[{"instance_id": "a", "patch": "+x"}, 3]', "$[1]"),
])
def test_gold_bad_files_are_rejected(tmp_path, runs, capsys, name, text, needle):
    p = tmp_path / name
    p.write_text(text)
    with pytest.raises(LamValueError) as exc:
        evidence.load_gold(str(p))
    assert name in str(exc.value) and needle in str(exc.value), f"error names the file and {needle!r}: {exc.value}"
    rc = main(["sweep", str(runs), "--encoder", "hash", "--gold", str(p), "--no-progress"])
    err = capsys.readouterr().err
    assert rc == 2 and "--gold" in err and name in err, f"usage error naming --gold and the file: rc={rc}, {err!r}"


def test_gold_not_utf8_names_file_and_offset(tmp_path, runs, capsys):
    bad = tmp_path / "gold.json"
    bad.write_bytes(b'{"a": "+abc\xff"}')  # the 0xff is byte 11 (0-based)
    rc = main(["sweep", str(runs), "--encoder", "hash", "--gold", str(bad), "--no-progress"])
    err = capsys.readouterr().err
    assert rc == 2, f"a non-UTF-8 gold file is a usage error, not a traceback: rc={rc}"
    assert "gold.json" in err and "offset 11" in err and "0xff" in err, f"names file, offset and byte: {err!r}"
    assert len(err.strip().splitlines()) == 1, f"one line: {err!r}"
    d = tmp_path / "patches"
    d.mkdir()
    (d / "a.patch").write_text("+fine line of text\n")
    (d / "c.diff").write_bytes(b"+ok line here\n+bad \xfe\n")  # 0xfe at byte 19
    with pytest.raises(LamValueError) as exc:
        evidence.load_gold(str(d))
    msg = str(exc.value)
    assert "c.diff" in msg and "offset 19" in msg and "0xfe" in msg, f"names the patch file and offset: {msg}"


def test_gold_directory_duplicate_ids(tmp_path):
    d = tmp_path / "patches"
    (d / "x").mkdir(parents=True)
    (d / "a.patch").write_text("+one patch\n")
    (d / "x" / "a.diff").write_text("+another patch\n")
    with pytest.raises(LamValueError) as exc:
        evidence.load_gold(str(d))
    assert "a.patch" in str(exc.value) and "a.diff" in str(exc.value), f"both files named: {exc.value}"
    (d / "x" / "a.diff").write_text("+one patch\n")
    assert evidence.load_gold(str(d)) == {"a": "+one patch\n"}, "the same patch twice is one patch"


# ----------------------------------------------------------------------------------------------
# 3. arguments are validated before the encoder loads


@pytest.mark.parametrize("extra, name, value", [
    (["--taus", "1.5"], "--taus", "1.5"),
    (["--taus", "0.99", "-0.001"], "--taus", "-0.001"),
    (["--taus", "abc"], "--taus", "abc"),
    (["--taus", "nan"], "--taus", "nan"),
    (["--taus", "1/0"], "--taus", "1/0"),
    (["--recall-k", "-1"], "--recall-k", "-1"),
    (["-t", "0.95", "1.5"], "--thresholds", "1.5"),
    (["-t", "nan"], "--thresholds", "nan"),
    (["--batch-size", "0"], "--batch-size", "0"),
    (["--layers", "l1,l2"], "--layers", "l1,l2"),
])
@pytest.mark.parametrize("with_gold", [False, True])
def test_arguments_validated_before_encoding(tmp_path, runs, capsys, monkeypatch, extra, name, value, with_gold):
    def no_encoder(*a, **k):
        raise AssertionError("the encoder was loaded before the arguments were validated")

    monkeypatch.setattr("lam_ref.text.encoders.get_encoder", no_encoder)  # run_encoder loads through it
    gold = tmp_path / "gold.json"
    gold.write_text(json.dumps({"a": f"+{EVIDENCE_A}\n"}))
    out = tmp_path / "out.json"
    args = ["sweep", str(runs), "--encoder", "hash", "--json", str(out), "--no-progress", *extra]
    rc = main(args + (["--gold", str(gold)] if with_gold else []))
    err = capsys.readouterr().err
    assert rc == 2, f"{extra}: usage error (exit 2), got {rc}: {err!r}"
    assert name in err and value in err, f"{extra}: the message names {name} and {value!r}: {err!r}"
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err, f"one-line message: {err!r}"
    assert not out.exists(), "no partial output file"


def test_json_destination_checked_before_encoding(tmp_path, runs, capsys, monkeypatch):
    monkeypatch.setattr("lam_ref.text.encoders.get_encoder", lambda *a, **k: pytest.fail("encoder loaded"))
    blocker = tmp_path / "afile"
    blocker.write_text("not a folder")
    for dest in (blocker / "out.json", tmp_path):
        rc = main(["sweep", str(runs), "--encoder", "hash", "--json", str(dest), "--no-progress"])
        err = capsys.readouterr().err
        assert rc == 2 and "--json" in err and str(dest) in err, f"an unwritable --json is named: rc={rc} {err!r}"


def test_exact_rational_taus_accepted(tmp_path, runs, capsys):
    gold = tmp_path / "gold.json"
    gold.write_text(json.dumps({"a": f"+{EVIDENCE_A}\n"}))
    rc, rep, _, err = _sweep_json([str(runs), "--gold", str(gold), "-t", "0.99", "--taus", "999/1000", "0", "1"],
                                  tmp_path, capsys)
    assert rc == 0, f"fractions and the bounds 0 and 1 are valid τ: {err}"
    assert sorted(rep["ecr"]) == ["0", "1", "999/1000"], f"τ keys as given: {list(rep['ecr'])}"


# ----------------------------------------------------------------------------------------------
# 4. ECR@τ: removal and evidence over the same trajectories


def test_ecr_removal_over_evidence_set(tmp_path, runs, capsys):
    gold = tmp_path / "gold.json"
    gold.write_text(json.dumps({"a": f"+{EVIDENCE_A}\n", "c": "+this line is never observed anywhere\n"}))
    t = 0.99
    rc, rep, out, err = _sweep_json([str(runs), "--gold", str(gold), "-t", str(t)], tmp_path, capsys)
    assert rc == 0, f"sweep runs: {err}"
    counts = {k: _counts(runs / f"{k}.jsonl", t) for k in "abc"}
    o_all = sum(o for o, _ in counts.values())
    n_all = sum(n for _, n in counts.values())
    (oa, na), (oc, nc) = counts["a"], counts["c"]
    assert oa > na and oc > nc, f"a and c have repeats to remove: {counts}"
    row = rep["rows"][0]
    assert row["trajectories"] == 3, "all three trajectories in the all-trajectory columns"
    assert row["removal_net"] == pytest.approx((o_all - n_all) / o_all, rel=1e-12), "removal column: all trajectories"
    assert rep["ecr"]["1.0"] == pytest.approx((oa - na) / oa, rel=1e-12), \
        f"ECR@1.0 is a's removal, not the all-trajectory {(o_all - n_all) / o_all}: {rep['ecr']}"
    ev = row["evidence"]
    # only a witnesses an evidence line: ρ of the operating point is a's removal alone
    assert ev["trajectories_with_evidence"] == 1 and ev["witnessed"] == 1, f"a alone witnesses evidence: {ev}"
    assert ev["removal_net"] == pytest.approx((oa - na) / oa, rel=1e-12), f"evidence-set removal is a's: {ev}"
    assert ev["gold_set"]["trajectories"] == 2, f"a and c have a gold patch: {ev['gold_set']}"
    assert ev["gold_set"]["removal_net"] == pytest.approx((oa + oc - na - nc) / (oa + oc), rel=1e-12), \
        f"gold-set removal over a and c: {ev['gold_set']}"
    sets = rep["sets"]
    assert (sets["all"]["trajectories"], sets["gold"]["trajectories"], sets["evidence"]["trajectories"]) == (3, 2, 1), \
        f"set sizes reported: {sets}"
    assert "1 trajectory without a gold patch" in err, f"the unmatched trajectory is counted: {err}"
    assert "1 trajectory with witnessed evidence" in out, f"the table names the evidence set: {out}"


def test_no_witnessed_evidence_gives_no_ecr(tmp_path, runs, capsys):
    gold = tmp_path / "gold.json"
    gold.write_text(json.dumps({"c": "+this line is never observed anywhere\n"}))
    rc, rep, _, err = _sweep_json([str(runs), "--gold", str(gold), "-t", "0.99"], tmp_path, capsys)
    assert rc == 0, err
    assert rep["ecr"] == {"1.0": None, "0.999": None, "0.99": None, "0.95": None}, \
        f"no witnessed line: ECR@τ is '—' at every τ, not a vacuous maximum: {rep['ecr']}"
    ev = rep["rows"][0]["evidence"]
    assert ev["witnessed"] == 0 and ev["micro"] is None and ev["relaxed"]["micro"] is None, \
        f"nothing witnessed: no retention figure, not a vacuous 100 %: {ev}"


def test_gold_ids_matching_nothing_are_named(tmp_path, runs, capsys):
    """A gold id that matches no trajectory (a typo, or the residual-file form of an id) is named on
    stderr and listed in the JSON, and the evidence columns show "—" rather than 100 %."""
    gold = tmp_path / "gold.json"
    gold.write_text(json.dumps({"sub__a": "+x = compute_something(1)\n", "a.jsonl": "+y\n"}))
    rc, rep, out, err = _sweep_json([str(runs), "--gold", str(gold), "-t", "0.99"], tmp_path, capsys)
    assert rc == 0, err
    assert "2 gold id(s) match no trajectory" in err and "'sub__a'" in err, f"unmatched ids named: {err}"
    assert rep["gold_unmatched"] == ["a.jsonl", "sub__a"], rep["gold_unmatched"]
    row = next(line for line in out.splitlines() if line.startswith("0.99"))
    assert "100.000%" not in row and "—" in row, f"no evidence figure for an empty set: {row!r}"


# ----------------------------------------------------------------------------------------------
# 5. relaxed evidence (App. F.4)


def test_relaxed_evidence_reported(tmp_path, capsys):
    # obs 1 and obs 2 have the same words in the same order (the hashing encoder ignores
    # punctuation): same embedding, so obs 2 is merged into obs 1 at any threshold. The evidence
    # line is verbatim only in obs 2 (witnessed, lost exactly); obs 1 keeps its tokens in order,
    # 4 tokens within a window of 4 <= 4 x 4 (relaxed: kept).
    obs1 = "config loaded\nalpha, beta; gamma: delta\nready"
    obs2 = "config loaded\nalpha beta gamma delta\nready"
    enc = HashingEncoder()
    assert np.array_equal(enc.encode([obs1])[0], enc.encode([obs2])[0]), "precondition: identical embeddings"
    p = _jsonl(tmp_path / "runs" / "d.jsonl", [("cat cfg", obs1), ("cat cfg2", obs2)])
    gold = tmp_path / "gold.json"
    gold.write_text(json.dumps({"d": "+alpha beta gamma delta\n"}))
    # the paper's stubs: obs 2 is shorter than its L1 stub, so the default net-positive rule would
    # keep it verbatim (SPEC §8.1) and nothing would be lost
    rc, rep, out, err = _sweep_json([str(p), "--gold", str(gold), "-t", "0.99", "--l0-stubs", "paper"], tmp_path,
                                    capsys)
    assert rc == 0, err
    ev = rep["rows"][0]["evidence"]
    assert (ev["witnessed"], ev["kept"], ev["lost"]) == (1, 0, 1), f"exact: the line is lost: {ev}"
    rel = ev["relaxed"]
    assert (rel["witnessed"], rel["kept"], rel["lost"]) == (1, 1, 0), f"relaxed: the line survives: {rel}"
    assert rel["micro"] == 1.0 and ev["micro"] == 0.0, f"micro retention exact 0, relaxed 1: {ev}"
    header = out.splitlines()[0]
    assert "relaxed" in header and "relaxed lost" in header, f"table has relaxed columns: {header}"
    assert rep["ecr"]["1.0"] is None, "ECR stays on exact retention (eq. 8): nothing qualifies at τ = 1"


# ----------------------------------------------------------------------------------------------
# 6. LoCoMo: QA questions as queries, evidence hit rate


def test_evidence_hits_by_hand():
    # 4 unit chunks; 1 and 3 are merged into 0 (π = [0, 0, 2, 0]); one query along chunk 1.
    e = np.array([[1, 0, 0], [0.8, 0.6, 0], [0, 0, 1], [0.6, 0.8, 0]], dtype=np.float32)
    pi = np.array([0, 0, 2, 0])
    q = np.array([[0, 1, 0]], dtype=np.float32)
    # scores q·e = [0, 0.6, 0, 0.8]: full top-1 = {3}, top-2 = {3, 1}; kept {0, 2} score 0, 0 -> top-1 = {0}
    full, sub = M.evidence_hits_at_k(e, q, pi, 1, [np.array([1])])
    assert (bool(full[0]), bool(sub[0])) == (False, True), "chunk 1 not in full top-1; its representative 0 is"
    full, sub = M.evidence_hits_at_k(e, q, pi, 2, [np.array([3])])
    assert (bool(full[0]), bool(sub[0])) == (True, True), "chunk 3 in full top-2; its representative 0 in kept top-2"
    full, sub = M.evidence_hits_at_k(e, q, pi, 1, [np.array([2])])
    assert (bool(full[0]), bool(sub[0])) == (False, False), "chunk 2 (score 0, kept) loses to 0 on the id tie"
    with pytest.raises(LamValueError, match="k must be >= 1"):
        M.evidence_hits_at_k(e, q, pi, 0, [np.array([1])])
    with pytest.raises(LamValueError, match="targets"):
        M.evidence_hits_at_k(e, q, pi, 1, [np.array([4])])


def _locomo(tmp_path: Path) -> Path:
    a, b = "the cat sat on the mat", "completely different words here"
    doc = [{
        "sample_id": "conv-1",
        "conversation": {
            "speaker_a": "Ann", "speaker_b": "Bo",
            "session_1": [{"speaker": "Ann", "dia_id": "D1:1", "text": a},
                          {"speaker": "Bo", "dia_id": "D1:2", "text": b},
                          {"speaker": "Ann", "dia_id": "D1:3", "text": a},
                          {"speaker": "Bo", "dia_id": "D1:4", "text": "another unrelated sentence about boats"}],
        },
        "qa": [
            {"question": a, "answer": "x", "evidence": ["D1:3"], "category": 1},
            {"question": b, "answer": "y", "evidence": ["D1:2"], "category": 1},
            {"question": b, "answer": "z", "evidence": ["D1:4"], "category": 2},
            {"question": "where is the boat", "answer": "w", "evidence": [], "category": 4},
        ],
    }]
    p = tmp_path / "locomo10.json"
    p.write_text(json.dumps(doc))
    return p


def test_locomo_qa_queries_and_evidence_hit(tmp_path, capsys):
    """Chunks 0..3 = records 0..3; record 2 repeats record 0, so π = [0, 1, 0, 3] at t = 0.99.
    With k = 1 (ties to the lower id):
    q1 = text of 0 and 2, evidence record 2: full top-1 = {0} (tie, lower id) -> miss; kept top-1 = {0}
       = π(2) -> hit.  q2 = text of 1, evidence 1: hit and hit.  q3 = text of 1, evidence 3: top-1 is
    1 -> miss and miss.  q4 has no evidence: not scored. Hit rates 1/3 before, 2/3 after.
    Recall@1 of every question is 1 (each full top-1 chunk is kept), over all 4 questions."""
    p = _locomo(tmp_path)
    rc, rep, out, err = _sweep_json([str(p), "-t", "0.99", "--recall-k", "1"], tmp_path, capsys)
    assert rc == 0, err
    row = rep["rows"][0]
    assert row["keep"] == pytest.approx(3 / 4), f"precondition: exactly the repeated turn is merged: {row['keep']}"
    assert row["recall_at_1"] == pytest.approx(1.0), f"R@1 from the QA questions, not '—': {row['recall_at_1']}"
    assert rep["recall_queries"] == {"action": 0, "qa": 4}, f"4 QA questions used as queries: {rep['recall_queries']}"
    hit = row["evidence_hit"]
    assert hit["questions"] == 3, f"3 questions have evidence chunks: {hit}"
    assert (hit["full"], hit["substituted"]) == (pytest.approx(1 / 3), pytest.approx(2 / 3)), f"by hand: {hit}"
    assert (hit["full_hits"], hit["substituted_hits"]) == (1, 2), f"hit counts by hand: {hit}"
    assert "hit@1" in out.splitlines()[0], f"table has the hit-rate columns: {out}"


def test_locomo_recall_k_zero_skips_qa(tmp_path, capsys):
    rc, rep, _, err = _sweep_json([str(_locomo(tmp_path)), "-t", "0.99", "--recall-k", "0"], tmp_path, capsys)
    assert rc == 0, err
    row = rep["rows"][0]
    assert row.get("evidence_hit") is None and row["recall_at_0"] is None, "k = 0 skips retrieval metrics"
    assert rep["recall_queries"] == {"action": 0, "qa": 0}, f"no queries encoded: {rep['recall_queries']}"


# ----------------------------------------------------------------------------------------------
# real data


@pytest.mark.skipif(PYDICOM is None, reason=f"shared trajectory pydicom__pydicom-1458.traj not found under {SHARED}")
def test_real_trajectory_one_line_jsonl_gold(tmp_path, capsys):
    """A real SWE-agent file and a one-line JSONL gold whose patch adds a line the agent saw (picked
    here from the raw JSON): the line is witnessed, so the trajectory is matched by its id."""
    assert PYDICOM is not None
    steps = json.loads(PYDICOM.read_text(encoding="utf-8"))["trajectory"]
    line = next(ln.strip() for s in steps for ln in (s.get("observation") or "").split("\n")
                if len(ln.strip()) >= 20 and not ln.strip().startswith("+"))
    gold = tmp_path / "gold.jsonl"
    gold.write_text(json.dumps({"instance_id": "pydicom__pydicom-1458", "patch": f"+{line}\n"}) + "\n")
    rc, rep, _, err = _sweep_json([str(PYDICOM), "--gold", str(gold), "-t", "0.95", "--recall-k", "0"],
                                  tmp_path, capsys)
    assert rc == 0, err
    ev = rep["rows"][0]["evidence"]
    assert ev["witnessed"] == 1 and ev["trajectories_with_evidence"] == 1, f"the real line is witnessed: {ev}"
