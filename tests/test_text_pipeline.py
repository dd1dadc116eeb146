"""The compaction pipeline (SPEC §3, 6, 7, 8; paper §2.3, Algorithm 1, Table 12) with the
deterministic hashing encoder; the real encoder is exercised in ``test_text_encoders.py``."""

from __future__ import annotations

import hashlib
import json

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from lam_ref import substitute
from lam_ref.geometry import LamValueError, delta_from_t
from lam_ref.text.audit import AuditError, AuditStore
from lam_ref.text.chunking import get_tokenizer
from lam_ref.text.encoders import HashingEncoder
from lam_ref.text.pipeline import CompactionConfig, compact_trajectory, encode_chunks, strip_stub_lines
from lam_ref.text.records import OBSERVATION, Record, Trajectory
from lam_ref.text.stubs import L1Stub, try_parse_stub

ENC = HashingEncoder(64)
TOK = get_tokenizer()

VOCAB = ["def f(x):", "    return x + 1", "ok", "", "FAILED test_a", "😀 emoji line", "中文 行", "Traceback:",
         "  File \"a.py\", line 3", "x = 1", "y = 2", "(exit status 0)", "    ", "[LAM:looks like a stub",
         "crlf line\r", "\r", "nul\x00byte", "x = 1\r"]


@st.composite
def trajectories(draw):
    """Random trajectories with exact and near repeats (edits of earlier observations)."""
    n_turns = draw(st.integers(1, 6))
    records = [Record("user", "task", 0, "gen:$")]
    past: list[str] = []
    for turn in range(n_turns):
        records.append(Record("action", draw(st.sampled_from(["ls", "cat a.py", "pytest"])), turn, "gen"))
        for _ in range(draw(st.integers(0, 2))):
            if past and draw(st.booleans()):
                lines = draw(st.sampled_from(past)).split("\n")
                if lines and draw(st.booleans()):
                    lines[draw(st.integers(0, len(lines) - 1))] = draw(st.sampled_from(VOCAB))
                text = "\n".join(lines)
            else:
                text = "\n".join(draw(st.lists(st.sampled_from(VOCAB), max_size=14)))
            past.append(text)
            records.append(Record(OBSERVATION, text, turn, "gen"))
    return Trajectory("gen", "jsonl", "gen.jsonl", tuple(records))


configs = st.builds(
    CompactionConfig,
    threshold=st.sampled_from([0.5, 0.8, 0.95, 1.0]),
    layers=st.sampled_from([("l1", "l0"), ("l0", "l1"), ("l1",), ("l0",)]),
    window=st.sampled_from([4, 16, 512]),
)


@given(traj=trajectories(), config=configs)
def test_audit_round_trip(traj, config):
    """Claim (SPEC §8): the residual plus the audit store restore every original record byte for
    byte, in every layer order and window size (small windows split emoji across windows), also
    after a save/load of the store. Shown to fail on a wrong L1 residual that cut at the raw window
    byte offsets without moving to a character boundary (a split emoji made the residual invalid
    UTF-8), and on one whose audit stored the unsnapped window bytes."""
    res = compact_trajectory(traj, ENC, config)
    originals = [r.text for r in traj.records]
    assert res.restore() == originals, "audit round trip lost bytes"
    again = AuditStore.from_json(json.loads(json.dumps(res.audit.to_json())))
    assert again.restore([r.text for r in res.residual_records()]) == originals, "restore after save/load"
    assert res.delta_hat <= delta_from_t(config.threshold), "THM1: δ̂ <= δ"


@given(traj=trajectories(), t=st.sampled_from([0.5, 0.8, 0.95]), window=st.sampled_from([8, 64]))
def test_online_and_batch_residuals_are_byte_identical(traj, t, window):
    """Claim (SPEC §6, Table 10 "online ≡ batch"): feeding each turn's windows to the online session
    gives the same π as Algorithm 2 run on all embeddings at once, and byte-identical residuals.
    Shown to fail on a wrong driver that admitted each turn into a fresh session (no memory
    across turns)."""
    on = compact_trajectory(traj, ENC, CompactionConfig(threshold=t, window=window, driver="online"))
    off = compact_trajectory(traj, ENC, CompactionConfig(threshold=t, window=window, driver="batch"))
    assert on.residual_texts == off.residual_texts, "online and batch residuals differ"
    obs = [(i, traj.records[i].turn, traj.records[i].text) for i in traj.observation_indices]
    enc = encode_chunks(obs, ENC, TOK, window=window)
    if enc.embeddings.shape[0]:
        ref = substitute(enc.embeddings, t)
        assert np.array_equal(on.pi, ref.pi), "online π must equal Algorithm 2's π"
        assert on.deletion_digest == ref.deletion_digest and on.map_digest == ref.map_digest, "digests differ"


@given(traj=trajectories(), t=st.sampled_from([0.5, 0.8, 0.95]))
def test_l1_stubs_name_valid_representatives(traj, t):
    """Claim (SPEC §1, §8): one L1 stub per dropped window; it names a retained smaller id, π maps
    the chunk to it, and its distance is at most δ (THM1). Shown to fail on a wrong residual that
    wrote one stub per run of consecutive dropped windows instead of one per window."""
    res = compact_trajectory(traj, ENC, CompactionConfig(threshold=t, window=16))
    stubs = [s for text in res.residual_texts for ln in text.split("\n")
             if isinstance(s := try_parse_stub(ln), L1Stub)]
    deleted = set(res.deleted_ids.tolist())
    assert {s.chunk for s in stubs} == deleted and len(stubs) == len(deleted), "one stub per dropped window"
    for s in stubs:
        assert res.pi[s.chunk] == s.rep and res.pi[s.rep] == s.rep, f"{s} does not match π"
        assert s.distance <= delta_from_t(t) + 5e-5, f"{s} exceeds δ"


def test_identical_observations_by_hand():
    """Two identical short observations: the second becomes exactly one L1 stub at distance 0
    (identical text, identical embedding); gross removal is exactly 1/2 (whole-text counts by hand)."""
    text = "collected 3 items\n\ntest_a.py ...   [100%]\n3 passed in 0.01s"
    traj = Trajectory("t", "jsonl", "t.jsonl", (
        Record("action", "pytest", 0, "s"), Record(OBSERVATION, text, 0, "s"),
        Record("action", "pytest", 1, "s"), Record(OBSERVATION, text, 1, "s"),
    ))
    res = compact_trajectory(traj, ENC, CompactionConfig())
    assert res.residual_texts[1] == text, "the first copy stays"
    assert res.residual_texts[3] == "[LAM:L1 1=0 d=0.0000]", f"got {res.residual_texts[3]!r}"
    n = TOK.count(text)
    assert res.tokens_original == 2 * n, "tok(original) over whole texts"
    assert res.tokens_residual_gross == n, "gross: stub line not counted"
    assert res.tokens_residual_net == n + TOK.count("[LAM:L1 1=0 d=0.0000]"), "net: stub counted"
    assert res.removal.gross == 0.5, "removal_gross = (2n - n) / 2n"
    assert res.to_json()["deletion_digest"] == hashlib.sha256(b"1").hexdigest()[:16], "SPEC §10: deleted set {1}"


def test_l1_stub_gets_its_own_line():
    """A dropped window in the middle of a line: the stub is put on its own line (SPEC §8)."""
    a = "alpha beta gamma delta"
    traj = Trajectory("t", "jsonl", "t.jsonl", (Record(OBSERVATION, a + " " + a, 0, "s"),))
    # window of 4 tokens: "alpha beta gamma delta" is 4 cl100k tokens, the repeat " alpha beta gamma delta"
    # too; the hashing encoder sees the same lower-cased words, so the second window is at distance 0
    res = compact_trajectory(traj, ENC, CompactionConfig(window=4, threshold=0.9))
    assert res.residual_texts[0] == a + "\n[LAM:L1 1=0 d=0.0000]", res.residual_texts[0]
    assert strip_stub_lines(res.residual_texts[0]) == a, "gross text drops the stub line"
    assert res.restore()[0] == a + " " + a, "audit restores the inserted separator away"


def test_l0_only_needs_no_encoder_and_per_layer_consistency():
    """``layers=("l0",)`` runs without an encoder; the L1-alone removal reported by a full run equals
    the removal of a separate ``layers=("l1",)`` run (same denominator, Table 12)."""
    traj = Trajectory("t", "jsonl", "t.jsonl", (
        Record(OBSERVATION, "a\nb\nc", 0, "s"), Record(OBSERVATION, "a\nb\nc\nd", 1, "s")))
    l0 = compact_trajectory(traj, None, CompactionConfig(layers=("l0",)))
    assert l0.residual_texts[1] == "[LAM:L0 3 lines=r0:0]\nd", f"got {l0.residual_texts[1]!r}"
    assert l0.to_json()["l1_removal"] is None, "no encoder: L1 alone is not measured"
    full = compact_trajectory(traj, ENC, CompactionConfig(threshold=0.8))
    alone = compact_trajectory(traj, ENC, CompactionConfig(threshold=0.8, layers=("l1",)))
    assert full.to_json()["l1_removal"] == alone.removal.net, "L1-alone removal must match a pure L1 run"
    assert full.to_json()["l0_removal"] == l0.removal.net, "L0-alone removal must match a pure L0 run"
    both = compact_trajectory(traj, ENC, CompactionConfig(threshold=0.8, both_orders=True)).to_json()
    rev = compact_trajectory(traj, ENC, CompactionConfig(threshold=0.8, layers=("l0", "l1")))
    assert set(both["layer_removal"]) == {"L1", "L0", "L1->L0", "L0->L1"}, "Table 12's four rows"
    assert both["layer_removal"]["L0->L1"] == rev.removal.net, "the other order equals a run in that order"
    assert both["layer_removal"]["L1->L0"] == full.removal.net, "the main order is the run itself"
    with pytest.raises(LamValueError, match="encoder is required"):
        compact_trajectory(traj, None, CompactionConfig())


def test_tampered_residual_is_refused(tmp_path):
    traj = Trajectory("t", "jsonl", "t.jsonl", (Record(OBSERVATION, "x\ny", 0, "s"), Record(OBSERVATION, "x\ny", 1, "s")))
    res = compact_trajectory(traj, ENC, CompactionConfig())
    bad = list(res.residual_texts)
    bad[1] = bad[1] + " "
    with pytest.raises(AuditError, match="record 1"):
        res.audit.restore(bad)
    path = res.audit.save(tmp_path / "a.json")
    assert AuditStore.load(path).restore(res.residual_texts) == ["x\ny", "x\ny"], "saved store restores"
    obj = json.loads(path.read_text())
    obj["body"]["sha256"][0] = "0" * 64
    path.write_text(json.dumps(obj))
    with pytest.raises(AuditError, match="checksum"):
        AuditStore.load(path)
    path.write_text("{not json")
    with pytest.raises(AuditError, match="cannot be read"):
        AuditStore.load(path)


def test_config_validation():
    with pytest.raises(LamValueError, match="layers"):
        CompactionConfig(layers=("l1", "l1"))
    with pytest.raises(LamValueError, match="layers"):
        CompactionConfig(layers=("l2",))
    with pytest.raises(LamValueError, match="threshold"):
        CompactionConfig(threshold=1.5)
    with pytest.raises(LamValueError, match="driver"):
        CompactionConfig(driver="gpu")
