"""``lam-ref sweep`` and ``lam-ref determinism probe`` on Dask equal the serial commands (paper
Tables 3, 11, 14, 17 and App. D; claims ``STAB`` for the probe): the sweep as one task per input
file running the serial per-trajectory measurement, folded in input order; the probe as one task
per encoding, jitter and greedy. Reports are compared whole (apart from timings and the
``distributed`` key) at 1 and 2 workers; ``--resume`` skips finished files and refuses other
settings; bad input gives one line and exit 2.

Clusters are in-process (``LAM_REF_DASK_PROCESSES=0``: workers are threads running the same task
functions); the encoder is the deterministic hashing encoder.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

distributed = pytest.importorskip("distributed")

from lam_ref.cli import main  # noqa: E402
from lam_ref.determinism import load_report  # noqa: E402

from .datagen import outcome, outcome_lines  # noqa: E402
from .datagen import write_jsonl_trajectory as _jsonl  # noqa: E402

pytestmark = pytest.mark.dask

DEMO = Path(__file__).resolve().parents[1] / "determinism" / "inputs" / "demo_agent.traj.json"
HANDLER = "def handler(request):\n    return render_page(request)\n" + "".join(
    f"def helper_{i}(value):\n    return value * {i} + offset_{i}\n" for i in range(12))
EVIDENCE = "return render_page(request)"


@pytest.fixture(autouse=True)
def inproc(monkeypatch):
    monkeypatch.setenv("LAM_REF_DASK_PROCESSES", "0")
    monkeypatch.setenv("LAM_REF_DASK_TIMEOUT", "2")


def _locomo(path: Path) -> None:
    a, b = "the cat sat on the mat", "completely different words here"
    path.write_text(json.dumps([{
        "sample_id": "conv-1",
        "conversation": {"speaker_a": "Ann", "speaker_b": "Bo",
                         "session_1": [{"speaker": "Ann", "dia_id": "D1:1", "text": a},
                                       {"speaker": "Bo", "dia_id": "D1:2", "text": b},
                                       {"speaker": "Ann", "dia_id": "D1:3", "text": a}]},
        "qa": [{"question": a, "answer": "x", "evidence": ["D1:3"], "category": 1},
               {"question": b, "answer": "y", "evidence": ["D1:2"], "category": 1}],
    }]))


def _corpus(tmp_path: Path) -> tuple[Path, Path]:
    """Nine files: trajectories with and without gold patches (witnessed or not), merges at some
    thresholds, a LoCoMo file (QA queries and evidence hits), and one unreadable file."""
    d = tmp_path / "runs"
    d.mkdir()
    out = "collected 4 items\n\ntest_y.py ....  [100%]\n4 passed in 0.02s"
    for i in range(6):
        _jsonl(d / f"a{i}.jsonl", [("cat f.py", HANDLER), ("ls", f"f.py setup{i % 2}.py"), ("cat f.py", HANDLER),
                                   ("pytest", out + f"\nrun {i % 3}"), ("pytest", out)])
    _jsonl(d / "b.jsonl", [("ls", "alpha.txt"), ("cat alpha.txt", "one two three four")])
    _locomo(d / "locomo10.json")
    (d / "z.jsonl").write_bytes(b"\xff\xfe not text")
    gold = tmp_path / "gold.json"
    patch = f"--- a/f.py\n+++ b/f.py\n+{EVIDENCE}\n"
    gold.write_text(json.dumps({"a0": patch, "a3": patch, "b": "+never observed in any output at all\n",
                                "nowhere": patch}))
    return d, gold


def _run(capsys, *argv: str) -> tuple[int, str, str]:
    rc = main(list(argv))
    cap = capsys.readouterr()
    return rc, cap.out, cap.err


def _sweep(capsys, d: Path, gold: Path, out: Path, *extra: str) -> tuple[int, str, str]:
    return _run(capsys, "sweep", str(d), "--encoder", "hash", "-t", "0.99", "0.9", "0.5", "--gold", str(gold),
                "--recall-k", "2", "--json", str(out), "--no-progress", *extra)


@pytest.mark.parametrize("workers", ["1", "2"])
def test_sweep_workers_equals_serial(tmp_path, capsys, workers):
    """Every row (removal, keep, δ̂, merge distances, recall@k, QA hits, exact and relaxed evidence,
    ECR@τ), the sets, the query counts, the unmatched gold ids and the failures equal the serial
    sweep's; the unreadable file fails in both (exit 1), the others complete."""
    d, gold = _corpus(tmp_path)
    ser, par = tmp_path / "s.json", tmp_path / "p.json"
    rc_s, out_s, err_s = _sweep(capsys, d, gold, ser)
    rc_p, out_p, err_p = _sweep(capsys, d, gold, par, "--workers", workers)
    assert rc_s == rc_p == 1, f"one unreadable file: exit 1 in both (serial {rc_s}, dask {rc_p}): {err_p}"
    a, b = json.loads(ser.read_text()), json.loads(par.read_text())
    assert a["sets"]["evidence"]["trajectories"] >= 1 and a["rows"][0]["evidence_hit"] is not None, \
        f"precondition: the corpus exercises evidence and QA hits: {a['sets']}"
    assert a["rows"][-1]["keep"] < 1.0 and len(a["failures"]) == 1, "precondition: merges happen, one file fails"
    dist = b.pop("distributed")
    assert outcome(a) == outcome(b), "the Dask sweep's report equals the serial one key for key (but the encoding counts)"
    assert (dist["workers"], dist["files"], dist["computed"]) == (int(workers), 9, 9), f"where it ran: {dist}"
    assert outcome_lines(out_p)[:len(outcome_lines(out_s))] == outcome_lines(out_s), \
        "the same table and summary lines as the serial command (but the encoding counts)"
    assert "z.jsonl" in err_p and "failed" in err_p, f"the failure names the file: {err_p}"


def test_sweep_resume_skips_finished_files_and_refuses_other_settings(tmp_path, capsys):
    d, gold = _corpus(tmp_path)
    run = tmp_path / "run"
    j1, j2, j3 = tmp_path / "1.json", tmp_path / "2.json", tmp_path / "3.json"
    assert _sweep(capsys, d, gold, j1, "--resume", str(run))[0] == 1, "one unreadable file: exit 1"
    stamps = {p.name: p.stat().st_mtime_ns for p in (run / "files").iterdir()}
    assert len(stamps) == 9, f"one output per input file: {sorted(stamps)}"
    rc, out, _ = _sweep(capsys, d, gold, j2, "--resume", str(run), "--taus", "0.5")
    assert rc == 1 and "9 resumed, 0 computed" in out, f"ECR levels are folded afterwards: nothing recomputed: {out}"
    assert {p.name: p.stat().st_mtime_ns for p in (run / "files").iterdir()} == stamps, "no output rewritten"
    a, b = json.loads(j1.read_text()), json.loads(j2.read_text())
    assert a["rows"] == b["rows"] and list(b["ecr"]) == ["0.5"], "the same rows, the new τ"
    (run / "files" / "0000003.json").unlink()
    rc, out, _ = _sweep(capsys, d, gold, j3, "--resume", str(run))
    assert rc == 1 and "8 resumed, 1 computed" in out, f"only the missing file is recomputed: {out}"
    a.pop("distributed")
    c = json.loads(j3.read_text())
    c.pop("distributed")
    assert a == c, "a resumed run's report equals the first run's"
    rc, _, err = _run(capsys, "sweep", str(d), "--encoder", "hash", "-t", "0.9", "--gold", str(gold), "--recall-k", "2",
                      "--resume", str(run), "--no-progress")
    assert rc == 2 and err.count("\n") == 1 and "other settings" in err and "thresholds" in err, \
        f"other thresholds: one line, exit 2: {err!r}"
    gold.write_text(json.dumps({"a0": "+something else entirely here\n"}))
    rc, _, err = _sweep(capsys, d, gold, j3, "--resume", str(run))
    assert rc == 2 and "gold_sha256" in err, f"other gold patches are named: {err!r}"


@pytest.mark.parametrize("argv,needle", [
    (["--workers", "0"], "--workers must be a positive integer"),
    (["--scheduler", "not an address"], "--scheduler must be an address"),
    (["--workers", "1", "--save-embeddings", "{tmp}/e.npz"], "--save-embeddings runs serially only"),
    (["--resume", "{tmp}/run", "--save-embeddings", "{tmp}/e.npz"], "--save-embeddings runs serially only"),
])
def test_sweep_bad_cluster_arguments_one_line_exit_2(tmp_path, capsys, argv, needle):
    d, _ = _corpus(tmp_path)
    argv = [a.replace("{tmp}", str(tmp_path)) for a in argv]
    rc, _, err = _run(capsys, "sweep", str(d), "--encoder", "hash", "--no-progress", *argv)
    lines = [ln for ln in err.splitlines() if ln.startswith("lam-ref sweep: error")]
    assert rc == 2 and len(lines) == 1 and needle in lines[0], f"one line naming the problem for {argv}: {err!r}"
    assert not (tmp_path / "run").exists() and not (tmp_path / "e.npz").exists(), "nothing written"


_TIMING = {"encode_s", "codec_s", "greedy_s", "margin_s"}


def _without_timings(doc: dict) -> dict:
    doc = {k: v for k, v in doc.items() if k not in ("created_utc", "timings_s", "distributed")}
    doc["encodings"] = [{k: v for k, v in e.items() if k not in _TIMING} for e in doc["encodings"]]
    doc["runs"] = [{k: v for k, v in r.items() if k not in _TIMING} for r in doc["runs"]]
    return doc


@pytest.mark.claim("STAB")
@pytest.mark.parametrize("workers", ["1", "2"])
def test_probe_workers_equals_serial(tmp_path, capsys, workers):
    """The probe's steps as Dask tasks (one encoding per batch size, one jitter per batch size, one
    greedy per batch size and threshold) give the serial report: digests, margins, at-risk
    decisions, jitter, codec digests, input identity; ``determinism compare`` agrees."""
    ser, par = tmp_path / "s.json", tmp_path / "p.json"
    common = ["determinism", "probe", str(DEMO), "--encoder", "hash", "--batch-sizes", "8,64,16",
              "--thresholds", "0.9,0.5", "--no-progress"]
    assert _run(capsys, *common, "--out", str(ser))[0] == 0, "serial probe"
    rc, out, err = _run(capsys, *common, "--out", str(par), "--workers", workers)
    assert rc == 0, err
    a, b = json.loads(ser.read_text()), json.loads(par.read_text())
    assert any(r["dropped"] for r in a["runs"]), "precondition: some decisions delete windows"
    assert _without_timings(a) == _without_timings(b), "the Dask probe's report equals the serial one"
    dist = b["distributed"]
    assert dist["workers"] == int(workers) and [e["batch_size"] for e in dist["encodings"]] == [8, 64, 16], \
        f"where each encoding ran is recorded: {dist}"
    assert "local worker(s)" in out, f"the run says where the steps ran: {out}"
    load_report(par)  # the schema accepts the distributed key
    rc, out, err = _run(capsys, "determinism", "compare", str(ser), str(par))
    assert rc == 0 and "one deletion digest, one map digest" in out, f"compare agrees: {out} {err}"


@pytest.mark.parametrize("argv,needle", [
    (["--workers", "0"], "--workers must be a positive integer"),
    (["--workers", "1", "--scheduler", "tcp://127.0.0.1:9"], "not both"),
    (["--scheduler", "tcp://127.0.0.1:9"], "cannot be reached"),
    (["--workers", "1", "--dtype", "float16"], "float32 on the cpu only"),
])
def test_probe_bad_cluster_arguments_one_line_exit_2(tmp_path, capsys, argv, needle):
    out = tmp_path / "r.json"
    rc, _, err = _run(capsys, "determinism", "probe", str(DEMO), "--encoder", "hash", "--batch-sizes", "8",
                      "--out", str(out), "--no-progress", *argv)
    lines = [ln for ln in err.splitlines() if "error" in ln]
    assert rc == 2 and len(lines) == 1 and needle in lines[0], f"one line naming the problem for {argv}: {err!r}"
    assert not out.exists(), "no report written"
