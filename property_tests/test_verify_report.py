"""``lam_ref.verify.verify_set`` and ``lam-ref verify``: every claim check passes on valid data,
the reported numbers equal independent computations, and a broken compactor is reported as FAIL."""

from __future__ import annotations

import json

import numpy as np
import pytest
from hypothesis import assume, given, settings

from lam_ref import verify as V
from lam_ref.cli import main
from lam_ref.covering import brute_force_covering, brute_force_packing, delta_graph, t_half
from lam_ref.geometry import t_prime
from lam_ref.strategies import embeddings_and_threshold, tie_band_violations
from lam_ref.substitution import substitute

ALL = ("EQ1", "DEF1", "THM1", "HULL", "COR1", "PROP1", "COR2", "PROP2", "THM2", "COR3", "GEMLINK", "BAND")


@pytest.mark.claim("DEF1")
@pytest.mark.claim("THM1")
@pytest.mark.claim("PROP2")
@pytest.mark.claim("THM2")
@settings(max_examples=15)
@given(embeddings_and_threshold(min_n=2, max_n=12))
def test_verify_set_passes_and_matches_brute_force(data):
    """On valid data every claim passes; N, M, N(δ/2) equal brute force; the ceiling and the
    optimum equal the greedy and brute-force counts. Shown to fail on a broken compactor
    (:func:`test_verify_reports_a_broken_compactor`)."""
    e, t = data
    assume(t_prime(t) < -1 or not tie_band_violations(e, t_prime(t)))
    assume(not tie_band_violations(e, t_half(t)))
    rep = V.verify_set(e, t, n_queries=32)
    failed = [c for c in ALL if rep.results[c].passed is False]
    assert not failed, f"claims failed on valid data: {[(c, rep.results[c].note) for c in failed]}"
    p2 = rep.results["PROP2"].measured
    adj = delta_graph(e, t)
    assert p2["N"] == brute_force_covering(adj).value, "N differs from brute force"
    assert p2["M"] == brute_force_packing(adj).value, "M differs from brute force"
    assert p2["N_half"] == brute_force_covering(delta_graph(e, t_half(t))).value, "N(delta/2) differs"
    th = rep.results["THM2"].measured
    n = e.shape[0]
    assert th["optimum"] == 1 - p2["N"] / n, "optimum from N"
    assert th["attained"] == 1 - substitute(e, t).kept_count / n, "attained from the banded run"


@pytest.mark.claim("THM1")
@pytest.mark.claim("DEF1")
def test_verify_reports_a_broken_compactor(monkeypatch, tmp_path):
    """A compactor that merges at radius 2δ is reported: DEF1 and THM1 FAIL, exit status 1."""
    rng = np.random.default_rng(5)
    base = rng.standard_normal((6, 16))
    rows = [b + s * rng.standard_normal(16) for b in base for s in (0.0, 0.15, 0.3)]
    e = np.array([r / np.linalg.norm(r) for r in rows], dtype=np.float32)
    real = V.substitute

    def broken(emb, t, **kw):
        return real(emb, max(-1.0, t_prime(t)), exhaustive=True)

    monkeypatch.setattr(V, "substitute", broken)
    rep = V.verify_set(e, 0.95, n_queries=16)
    assert rep.results["DEF1"].passed is False and "more than delta" in rep.results["DEF1"].note, "DEF1 must fail"
    assert rep.results["THM1"].passed is False, "THM1 must fail against the configured delta"
    path = tmp_path / "e.npy"
    np.save(path, e)
    assert main(["verify", str(path), "--queries", "16"]) == 1, "exit status 1 when a claim fails"


@pytest.mark.claim("THM2")
def test_cli_json_report(tmp_path, capsys):
    """``lam-ref verify x.npy --json -``: one entry per claim, counts consistent with the table."""
    rng = np.random.default_rng(1)
    base = rng.standard_normal((3, 8))
    rows = [b + s * rng.standard_normal(8) for b in base for s in (0.0, 0.1, 0.2, 0.4)]
    e = np.array([r / np.linalg.norm(r) for r in rows], dtype=np.float32)
    path = tmp_path / "e.npy"
    np.save(path, e)
    assert main(["verify", str(path), "--json", "-", "--queries", "32"]) == 0, "valid data passes"
    out = capsys.readouterr().out
    report = json.loads(out)
    claims = {c["claim"]: c for c in report["claims"]}
    assert set(ALL) <= set(claims), f"claims in the report: {sorted(claims)}"
    m = claims["THM2"]["measured"]
    assert m["n"] == 12 and m["kept"] == substitute(e, 0.95).kept_count, "counts in the report"
    assert m["N"] == brute_force_covering(delta_graph(e, 0.95)).value, "exact N in the report"
    assert report["failed"] == [], "nothing failed"


def test_cli_errors(tmp_path, capsys):
    """A missing file and non-unit rows are refused with a message naming the problem (exit 2)."""
    assert main(["verify", str(tmp_path / "missing.npy")]) == 2, "missing file"
    assert "does not exist" in capsys.readouterr().err, "message names the missing path"
    bad = tmp_path / "bad.npy"
    np.save(bad, np.full((3, 4), 2.0, dtype=np.float32))
    assert main(["verify", str(bad)]) == 2, "non-unit rows"
    assert "norm" in capsys.readouterr().err, "message names the norm problem"
    assert main(["verify", str(bad), "--queries", "0"]) == 2, "bad option"


@pytest.mark.claim("COR3")
def test_cli_on_trajectories_with_token_weights(tmp_path, capsys):
    """``lam-ref verify`` on a JSONL trajectory (hashing encoder, no torch): one set per
    trajectory, window token counts as weights, ``T(δ)`` <= the tokens greedy keeps <= all."""
    pytest.importorskip("lam_ref.text.pipeline")
    obs = ["line one\nline two\nerror: x", "line one\nline two\nerror: x", "something else entirely", "line one\nline two\nerror: y"]
    lines = []
    for turn, text in enumerate(obs):
        lines.append(json.dumps({"role": "action", "text": f"run {turn}", "turn": turn}))
        lines.append(json.dumps({"role": "observation", "text": text, "turn": turn}))
    path = tmp_path / "traj.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    assert main(["verify", str(path), "--encoder", "hash", "--json", "-", "-t", "0.9", "--queries", "16"]) == 0, "passes"
    report = json.loads(capsys.readouterr().out)
    assert len(report["sets"]) == 1 and report["sets"][0]["n"] == 4, "one trajectory, four windows"
    cor3 = {c["claim"]: c for c in report["claims"]}["COR3"]["measured"]
    assert cor3["T_opt"] <= cor3["T_greedy"] <= cor3["T_all"], f"token weights {cor3}"
    assert cor3["R"] <= 3, "the exact repeat must merge"
