"""Never longer than the input, or said loudly (SPEC §8.1, issue 35 §3): with net-positive stubs
(``--l0-stubs net-positive``, the default) an L1-dropped window is replaced by its stub only when
the stub has fewer bytes and fewer cl100k tokens than the window; on short LoCoMo-like turns the
residual is then never longer than the input, L1's decisions and digests are those of the paper's
rule, and restore stays byte-exact. With the paper's rule the table flags every trajectory that grew."""

from __future__ import annotations

import json
from pathlib import Path

from lam_ref.cli import main

#: Short chat turns that repeat (LoCoMo-like): a stub (about 12 tokens) costs more than each.
TURNS = ["Hey! How was your weekend?", "ok", "It was great, we went hiking.", "haha same", "ok", "yes",
         "Did you see the game?", "haha same", "yes", "ok", "no", "ok", "lol", "yes", "lol", "no"]


def _locomo(path: Path, turns: list[str]) -> Path:
    dialogue = [{"speaker": "A" if k % 2 else "B", "dia_id": f"D1:{k + 1}", "text": t} for k, t in enumerate(turns)]
    data = [{"sample_id": "conv-1", "conversation": {"speaker_a": "A", "speaker_b": "B", "session_1": dialogue,
                                                      "session_1_date_time": "1 May 2023"}, "qa": []}]
    path.write_text(json.dumps(data, indent=2))
    return path


def _compact(capsys, src: Path, rep: Path, *extra: str) -> tuple[dict, str]:
    rc = main(["compact", str(src), "--encoder", "hash", "--check", "--no-progress", "--json", str(rep), *extra])
    cap = capsys.readouterr()
    assert rc == 0, f"compact failed: {cap.err}"
    return json.loads(rep.read_text()), cap.out


def test_short_turns_never_grow_and_keep_the_decisions(tmp_path, capsys):
    """Claim (SPEC §8.1): by default no residual is longer than its input in tokens; the windows whose
    stub would cost more stay verbatim (``l1_stubs_skipped``), while ``kept``, the deletion digest
    and the map digest equal the paper's rule's; the audit round trip holds (``--check``)."""
    src = _locomo(tmp_path / "locomo10.json", TURNS)
    rule, out = _compact(capsys, src, tmp_path / "rule.json")
    paper, out_paper = _compact(capsys, src, tmp_path / "paper.json", "--l0-stubs", "paper")
    (t,), (p,) = rule["trajectories"], paper["trajectories"]
    assert p["tokens_residual_net"] > p["tokens_original"], f"the paper's stubs make this input grow: {p['removal_net']}"
    assert t["tokens_residual_net"] <= t["tokens_original"], f"never longer than the input: {t['removal_net']}"
    assert t["l1_stubs_skipped"] > 0 and t["l1_stubs"] + t["l1_stubs_skipped"] == p["l1_stubs"], \
        f"the dropped windows are stubbed or kept verbatim: {t['l1_stubs']} + {t['l1_stubs_skipped']} vs {p['l1_stubs']}"
    for key in ("kept_chunks", "deletion_digest", "map_digest", "delta_hat"):
        assert t[key] == p[key], f"L1's decisions are the rule's: {key} {t[key]} != {p[key]}"
    assert "(grew)" in out_paper and "(grew)" not in out, "the table flags growth only where it happened"
    assert "note: 1 trajectory residual(s) longer than the input" in out_paper, f"said loudly: {out_paper}"


def test_long_repeats_still_become_stubs(tmp_path, capsys):
    """The rule skips only stubs that cost more: a long repeated turn is still replaced (mutant
    check: a rule that skipped every stub would keep it)."""
    long_turn = "I think the best plan is to meet at the station at nine and take the early train. " * 3
    src = _locomo(tmp_path / "locomo10.json", [long_turn, "ok", long_turn, "ok"])
    rule, _ = _compact(capsys, src, tmp_path / "rule.json")
    (t,) = rule["trajectories"]
    assert t["l1_stubs"] == 1 and t["l1_stubs_skipped"] == 1, f"long repeat stubbed, short one kept: {t}"
    assert t["removal_net"] > 0.2, f"the long repeat's removal is kept: {t['removal_net']}"
