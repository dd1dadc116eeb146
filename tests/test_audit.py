"""``lam-ref audit`` (issue 21 §6; docs/audit.md): Theorem 1's premise (THM1), δ̂ (SPEC §1.5),
Algorithm 2's π (DEF1, SPEC §5.1) and the exact optimum (SPEC §11.1) of a compactor's output.

Expected answers come from the construction of the data (angles on a circle, so every distance is
known) and from a brute-force float64 loop written here, never from the command's own code.
"""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from lam_ref.audit import audit_output
from lam_ref.cli import main
from lam_ref.peers.masking import mask
from lam_ref.peers.semdedup import cluster_rule
from lam_ref.text.chunking import get_tokenizer
from lam_ref.text.encoders import get_encoder
from lam_ref.text.pipeline import encode_chunks
from lam_ref.text.records import Record, Trajectory

T30 = math.cos(math.radians(30.0))  # δ is the chord of 30°


def _circle(*angles: float, dim: int = 2) -> np.ndarray:
    e = np.zeros((len(angles), dim))
    e[:, 0] = np.cos(np.radians(angles))
    e[:, 1] = np.sin(np.radians(angles))
    return e.astype(np.float32)


def _brute_violators(e: np.ndarray, kept: set[int], t: float, segments: list[tuple[int, int]] | None = None) -> list[int]:
    """Deleted rows with no kept row of their trajectory within δ, by the SPEC §2.1 rule, one pair at a time."""
    d2 = 2.0 - 2.0 * t
    segments = segments or [(0, e.shape[0])]
    out = []
    for a, b in segments:
        for i in range(a, b):
            if i in kept:
                continue
            if not any(float(((e[i].astype(np.float64) - e[j].astype(np.float64)) ** 2).sum()) <= d2 for j in kept if a <= j < b):
                out.append(i)
    return out


def _run(capsys, *argv: str) -> tuple[int, str, str]:
    rc = main(["audit", *argv])
    out = capsys.readouterr()
    return rc, out.out, out.err


CHAIN = _circle(0, 25, 50, 75, 100)  # links of 25° within δ (30°), two links (50°) beyond


def test_algorithm2_output_passes_and_equals_algorithm2(tmp_path, capsys):
    """Greedy keeps 0, 50, 100 on the chain (DEF1); the premise holds and δ̂ is the 25° chord (THM1)."""
    np.save(tmp_path / "e.npy", CHAIN)
    np.save(tmp_path / "pi.npy", np.array([0, 0, 2, 2, 4]))
    rc, out, _ = _run(capsys, str(tmp_path / "e.npy"), "--pi", str(tmp_path / "pi.npy"), "-t", repr(T30),
                      "--json", str(tmp_path / "r.json"))
    r = json.loads((tmp_path / "r.json").read_text())
    assert rc == 0 and r["premise_holds"] and r["equals_algorithm2"], f"Algorithm 2's own π must pass: {r}"
    chord25 = 2 * math.sin(math.radians(12.5))
    assert r["delta_hat_pi"] == pytest.approx(chord25, abs=1e-6), f"δ̂ is the 25° chord {chord25}, got {r['delta_hat_pi']}"
    assert "Theorem 1 premise" in out and "holds" in out, f"the table states the premise: {out}"


def test_exact_optimum_gap_on_the_chain(tmp_path):
    """SPEC §11.1: the chain is covered by 2 centres (25°, 75°), greedy keeps 3: gap +1 (COR3's room)."""
    r = audit_output(CHAIN, T30, kept=[0, 2, 4])
    assert r["exact"]["optimum"] == 2 and r["exact"]["kept"] == 3, f"N(S, δ) = 2 for the 5-link chain, got {r['exact']}"
    r = audit_output(CHAIN, T30, kept=[1, 3])
    assert r["premise_holds"] and not r["equals_algorithm2"], "the optimal cover {1, 3} is valid but not Algorithm 2"
    assert r["first_difference"]["row"] == 0, f"Algorithm 2 keeps row 0; the first difference is there: {r['first_difference']}"


def test_violations_are_listed_and_exit_1(tmp_path, capsys):
    np.save(tmp_path / "e.npy", CHAIN)
    (tmp_path / "kept.json").write_text(json.dumps([0, 4]))
    rc, out, _ = _run(capsys, str(tmp_path / "e.npy"), "--kept", str(tmp_path / "kept.json"), "-t", repr(T30),
                      "--json", str(tmp_path / "r.json"))
    r = json.loads((tmp_path / "r.json").read_text())
    want = _brute_violators(CHAIN, {0, 4}, T30)
    assert rc == 1 and [v["row"] for v in r["violations"]] == want == [2], f"row 2 (50° from both kept rows) has no witness: {r['violations']}"
    assert r["violations"][0]["distance"] == pytest.approx(2 * math.sin(math.radians(25)), abs=1e-6), "nearest is 50° away"
    assert r["delta_hat_nearest"] > r["delta"], "δ̂ over a kept set that is not a δ-cover exceeds δ"
    assert "VIOLATED" in out and "violations" in out, f"the table lists the violators: {out}"


def test_declared_representatives_are_checked(tmp_path):
    """With π: a representative must be retained, in the row's trajectory and within δ (DEF1)."""
    r = audit_output(CHAIN, T30, pi=[0, 0, 0, 2, 4])
    whys = {m["row"]: m["why"] for m in r["map_violations"]}
    assert whys == {2: "representative is farther than δ", 3: "representative is not retained"}, f"got {whys}"
    assert not r["premise_holds"], "an invalid representative fails the audit even when a witness exists"
    assert [v["row"] for v in r["violations"]] == _brute_violators(CHAIN, {0, 4}, T30), "cover violations as brute force"


def test_trajectory_boundaries_forbid_cross_trajectory_witnesses(tmp_path, capsys):
    """SPEC §1.1: matching is within a trajectory; row 3's only witness (row 2) is in the other one."""
    np.save(tmp_path / "e.npy", CHAIN)
    np.save(tmp_path / "kept.npy", np.array([0, 2]))
    np.save(tmp_path / "b.npy", np.array([0, 3]))
    rc, _, _ = _run(capsys, str(tmp_path / "e.npy"), "--kept", str(tmp_path / "kept.npy"), "-t", repr(T30),
                    "--boundaries", str(tmp_path / "b.npy"), "--json", str(tmp_path / "r.json"))
    r = json.loads((tmp_path / "r.json").read_text())
    want = _brute_violators(CHAIN, {0, 2}, T30, [(0, 3), (3, 5)])
    assert rc == 1 and [v["row"] for v in r["violations"]] == want == [3, 4], f"rows 3-4 keep nothing: {r['violations']}"
    assert r["violations"][0]["nearest_retained"] is None, "row 2 is within δ of row 3 but in another trajectory"
    assert [v["row"] for v in audit_output(CHAIN, T30, kept=[0, 2])["violations"]] == [4], "without boundaries row 2 covers row 3"
    assert r["algorithm2_kept"] == 3, f"Algorithm 2 per trajectory keeps 0, 2 (rows 0-2) and 3 (rows 3-4), got {r['algorithm2_kept']}"


def test_ids_map_the_output_to_rows(tmp_path, capsys):
    np.save(tmp_path / "e.npy", CHAIN)
    np.save(tmp_path / "ids.npy", np.array([100, 101, 102, 103, 104]))
    np.save(tmp_path / "kept.npy", np.array([100, 104]))
    rc, out, _ = _run(capsys, str(tmp_path / "e.npy"), "--kept", str(tmp_path / "kept.npy"), "-t", repr(T30),
                      "--ids", str(tmp_path / "ids.npy"), "--json", str(tmp_path / "r.json"))
    r = json.loads((tmp_path / "r.json").read_text())
    assert rc == 1 and r["violations"][0]["id"] == 102, f"violators are reported by the output's ids: {r['violations']}"


@pytest.mark.parametrize(
    "case, expect",
    [
        ("missing", "does not exist"),
        ("bad_json", "not readable JSON"),
        ("pi_length", "must hold 5 ids"),
        ("unknown_id", "names id 7"),
        ("bad_threshold", "--threshold must be in [-1, 1]"),
        ("not_unit", "row 1 has norm"),
        ("boundaries", "--boundaries"),
        ("max_exact", "--max-exact"),
    ],
)
def test_bad_input_is_one_line_exit_2_and_writes_nothing(tmp_path, capsys, case, expect):
    e = CHAIN.copy()
    if case == "not_unit":
        e[1] *= 1.01
    np.save(tmp_path / "e.npy", e)
    np.save(tmp_path / "ids.npy", np.arange(5))
    (tmp_path / "bad.json").write_text("[0, 2,")
    np.save(tmp_path / "pi3.npy", np.array([0, 0, 2]))
    np.save(tmp_path / "k7.npy", np.array([0, 7]))
    np.save(tmp_path / "b.npy", np.array([1, 3]))
    np.save(tmp_path / "k.npy", np.array([0, 2, 4]))
    base = [str(tmp_path / "e.npy"), "--json", str(tmp_path / "r.json"), "-t", "0.9"]
    argv = {
        "missing": ["--kept", str(tmp_path / "nope.npy")],
        "bad_json": ["--kept", str(tmp_path / "bad.json")],
        "pi_length": ["--pi", str(tmp_path / "pi3.npy")],
        "unknown_id": ["--kept", str(tmp_path / "k7.npy"), "--ids", str(tmp_path / "ids.npy")],
        "bad_threshold": ["--kept", str(tmp_path / "k.npy"), "-t", "1.5"],
        "not_unit": ["--kept", str(tmp_path / "k.npy")],
        "boundaries": ["--kept", str(tmp_path / "k.npy"), "--boundaries", str(tmp_path / "b.npy")],
        "max_exact": ["--kept", str(tmp_path / "k.npy"), "--max-exact", "-1"],
    }[case]
    rc, out, err = _run(capsys, *base, *argv)
    assert rc == 2, f"{case}: bad input must exit 2, got {rc}"
    assert expect in err and err.count("\n") == 1, f"{case}: one line naming the problem ({expect!r}), got {err!r}"
    assert not (tmp_path / "r.json").exists(), f"{case}: nothing may be written on bad input"


# ------------------------------------------------------------------------------------------------
# the peers' outputs (SPEC §16)
# ------------------------------------------------------------------------------------------------
def test_semdedup_output_violates_on_a_chain():
    """SemDeDup compares against dropped items too (SPEC §16): on the chain in one cluster, in
    arrival order (``keep="earliest"``), it drops every link after the first, so rows two links away
    keep no retained witness (C4)."""
    deleted = cluster_rule(CHAIN, np.zeros(5, np.int64), 1.0 - T30, keep="earliest")
    kept = np.flatnonzero(~deleted)
    assert kept.tolist() == [0], f"SemDeDup's rule drops every later link of the chain, kept {kept.tolist()}"
    r = audit_output(CHAIN, T30, kept=kept)
    assert [v["row"] for v in r["violations"]] == _brute_violators(CHAIN, {0}, T30) == [2, 3, 4], f"got {r['violations']}"
    assert not r["equals_algorithm2"] and r["first_difference"]["row"] == 2, f"first difference: {r['first_difference']}"


def _trajectory(texts: list[str]) -> Trajectory:
    recs = []
    for k, text in enumerate(texts):
        recs.append(Record("action", f"cmd {k}", k, f"synthetic:{k}a"))
        recs.append(Record("observation", text, k, f"synthetic:{k}o"))
    return Trajectory("synthetic", "jsonl", "synthetic.jsonl", tuple(recs))


def test_masking_output_violates_and_lam_passes():
    """Observation masking deletes old observations without a witness; LAM's π on the same chunks passes."""
    texts = ["alpha beta gamma delta " * 5, "listing of files: a.py b.py c.py", "alpha beta gamma delta " * 5,
             "traceback: KeyError 'x' in module y", "tests passed: 12 of 12", "final diff applied"]
    traj = _trajectory(texts)
    tok = get_tokenizer()
    enc = encode_chunks([(i, traj.records[i].turn, traj.records[i].text) for i in traj.observation_indices],
                        get_encoder("hash"), tok)
    x = enc.embeddings
    masked = set(mask(traj, 2, tok).deleted_units)
    kept = [c.id for c in enc.chunks if c.record not in masked]
    r = audit_output(x, 0.95, kept=kept)
    want = _brute_violators(x, set(kept), 0.95)
    assert [v["row"] for v in r["violations"]] == want and len(want) == 2, (
        f"masking (k = 2) deletes observations 1-3; the repeat of observation 0 has a witness, 1 and 3 do not: {want}"
    )
    from lam_ref.substitution import oracle

    lam = audit_output(x, 0.95, pi=oracle(x, 0.95).pi)
    assert lam["premise_holds"] and lam["equals_algorithm2"], f"LAM's own π passes the audit: {lam}"


THOROUGH = __import__("os").environ.get("HYPOTHESIS_PROFILE") == "thorough"


@pytest.mark.slow
@pytest.mark.data
@pytest.mark.skipif(not THOROUGH, reason="loads all-MiniLM-L6-v2 (about a minute): runs in the thorough profile")
def test_docs_audit_page_shows_what_the_command_prints(tmp_path):
    """docs/audit.md's three outputs are what `lam-ref audit` prints on the shared BabyEncryption trajectory."""
    from pathlib import Path

    from lam_ref.peers.semdedup import semdedup_deleted
    from lam_ref.text.loaders import load_file, shared_data_dir

    shared = shared_data_dir()
    found = sorted(shared.rglob("BabyEncryption.traj")) if shared else []
    if not found:
        pytest.skip("the shared SWE-agent trajectories (BabyEncryption.traj) are not here")
    traj = load_file(found[0])[0]
    tok = get_tokenizer()
    enc = encode_chunks([(i, traj.records[i].turn, traj.records[i].text) for i in traj.observation_indices],
                        get_encoder("all-MiniLM-L6-v2"), tok)
    x = enc.embeddings
    masked = set(mask(traj, 3, tok).deleted_units)
    outputs = {
        "semdedup": audit_output(x, 0.95, kept=np.setdiff1d(np.arange(x.shape[0]), semdedup_deleted(x, 0.05, seed=0))),
        "masking": audit_output(x, 0.95, kept=[c.id for c in enc.chunks if c.record not in masked]),
    }
    page = (Path(__file__).resolve().parents[1] / "docs" / "audit.md").read_text(encoding="utf-8")
    for name, r in outputs.items():
        line = f"kept / deleted                                      {r['kept']} / {r['deleted']}"
        assert line in page, f"docs/audit.md must show {name}'s kept / deleted {r['kept']} / {r['deleted']}"
        assert f"{r['delta_hat_nearest']:.17g}" in page, f"docs/audit.md must show {name}'s δ̂ {r['delta_hat_nearest']!r}"
