"""``lam-ref compact`` and ``lam-ref sweep`` (docs/cli.md), with the deterministic hashing encoder."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from lam_ref.cli import main
from lam_ref.text.audit import AuditStore

from ..datagen import swe_agent_traj

REQUIRED = ["id", "format", "records", "observation_records", "chunks", "kept_chunks", "tokens_original",
            "tokens_residual_gross", "tokens_residual_net", "removal_gross", "removal_net", "l1_removal",
            "l0_removal", "threshold", "delta", "delta_hat", "deletion_digest", "map_digest", "encoder"]

def _sha16(text: str) -> str:
    return hashlib.sha256(text.encode("ascii")).hexdigest()[:16]




@pytest.fixture()
def corpus(tmp_path: Path) -> Path:
    d = tmp_path / "runs"
    (d / "a").mkdir(parents=True)
    (d / "a" / "one.traj").write_text(json.dumps(swe_agent_traj(1, repeats=1, tail="")))
    (d / "two.traj").write_text(json.dumps(swe_agent_traj(2, repeats=1, tail="")))
    (d / "broken.traj").write_text('{"trajectory": [{"observation": 7}]}')
    return d


def test_compact_report_residuals_and_failures(corpus, tmp_path, capsys):
    out_json = tmp_path / "report.json"
    rdir = tmp_path / "resid"
    rc = main(["compact", str(corpus), "--encoder", "hash", "--json", str(out_json), "--residual-dir", str(rdir), "--mkdir",
               "--check", "--no-progress"])
    cap = capsys.readouterr()
    assert rc == 1, "a file failed to load: exit status 1, the others still processed"
    assert "broken.traj" in cap.err and "$.trajectory[0].observation" in cap.err, f"failure names file and path: {cap.err}"
    assert "TOTAL" in cap.out and "a/one" in cap.out, "a table row per trajectory and the totals"
    rep = json.loads(out_json.read_text())
    assert [t["id"] for t in rep["trajectories"]] == ["a/one", "two"], "good files in order"
    for row in rep["trajectories"] + [rep["total"]]:
        missing = [k for k in REQUIRED if k not in row]
        assert not missing, f"report row lacks {missing}"
    assert len(rep["failures"]) == 1 and "broken.traj" in rep["failures"][0]["path"], rep["failures"]
    one = rep["trajectories"][0]
    assert one["observation_records"] == 3 and one["records"] == 9, "3 steps × (thought, action, observation)"
    assert one["chunks"] == 3 and one["kept_chunks"] == 2, "the repeated test output is one dropped window"
    assert one["deletion_digest"] == _sha16("2"), "SPEC §10 digest of the deleted set {2}"
    total = rep["total"]
    assert total["tokens_original"] == sum(t["tokens_original"] for t in rep["trajectories"]), "totals are sums"
    assert total["deletion_digest"] == _sha16("2\n5"), "corpus-global ids {2, 5} (second trajectory offset by 3)"
    assert rep["checks"]["problems"] == [], "δ̂ <= δ and audit round trip hold"
    # residual files restore the originals, read independently from the input JSON
    audit = AuditStore.load(rdir / "a__one.audit.json")
    resid = [json.loads(x)["text"] for x in (rdir / "a__one.residual.jsonl").read_text().splitlines()]
    restored = audit.restore(resid)
    steps = swe_agent_traj(1, repeats=1, tail="")["trajectory"]
    assert [restored[i] for i in (2, 5, 8)] == [s["observation"] for s in steps], "observations restored"


def test_compact_layers_and_bad_arguments(corpus, capsys):
    rc = main(["compact", str(corpus / "two.traj"), "--encoder", "hash", "--layers", "l0,l1", "--json", "-",
               "--no-progress"])
    rep = json.loads(capsys.readouterr().out)
    assert rc == 0 and rep["total"]["layers"] == "L0->L1", "reverse order runs"
    assert main(["compact", str(corpus), "--layers", "l1,l2", "--encoder", "hash"]) == 2, "bad layers: usage error"
    assert "layers" in capsys.readouterr().err, "the error names the argument"
    assert main(["compact", str(corpus / "nope.traj"), "--encoder", "hash", "--no-progress"]) == 2, \
        "a missing input is unusable input: exit 2 before any work"
    assert "nope.traj" in capsys.readouterr().err, "a missing path is named"


def test_sweep_rows_and_evidence(corpus, tmp_path, capsys):
    gold = tmp_path / "gold.json"
    gold.write_text(json.dumps({"one": "--- a/x.py\n+++ b/x.py\n+    return 1\n+test_x.py ..  [100%]\n",
                                "two": "+never seen in any observation line\n"}))
    rc = main(["sweep", str(corpus / "a"), str(corpus / "two.traj"), "--encoder", "hash", "--gold", str(gold),
               "-t", "0.99", "0.5", "--json", "-", "--no-progress"])
    rep = json.loads(capsys.readouterr().out)
    assert rc == 0, "all inputs loaded"
    assert [r["t"] for r in rep["rows"]] == [0.99, 0.5], "one row per threshold, in order"
    ev = rep["rows"][0]["evidence"]
    # "    return 1" is 8 characters (< 12, ignored); "test_x.py ..  [100%]" is witnessed in one; none in two
    assert (ev["witnessed"], ev["kept"]) == (1, 1), f"evidence counted by hand: {ev}"
    assert rep["ecr"]["0.999"] is not None, "ECR@0.999 exists when evidence is kept"
    assert all(r["removal_net"] > 0 for r in rep["rows"]), "the repeated output is removed at both thresholds"
