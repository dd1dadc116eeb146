"""Reproduction of the paper's cost-model figures (§2.6, App. E, G, M; SPEC §13–14).

Every expected number below is printed in the paper (the section or table is named beside it);
none is taken from this module's own output. Where the paper is inconsistent (SPEC §14) the test
says which number the model reproduces and why.
"""

from __future__ import annotations

import json
import math

import pytest

from lam_ref import costmodel as cm
from lam_ref.cli import main
from lam_ref.geometry import LamValueError


def rel(a: float, b: float) -> float:
    return abs(a - b) / abs(b)


# --- inputs ---------------------------------------------------------------------------------------


def test_kv_bytes_per_token_is_spec_value():
    """SPEC §13: Llama-3.1-8B in fp16 holds 131,072 B of KV cache per token."""
    assert cm.LLAMA31_8B.kv_bytes_per_token == 131_072, "2·L·H_kv·d_h·2 B must be 131,072"


def test_kv_capacity_854k_tokens():
    """App. M.2: modelled KV capacity at batch 1 is 854K tokens (Llama-3.1-8B on GB10)."""
    cap = cm.kv_capacity_tokens()
    assert round(cap / 1000) == 854, f"KV capacity {cap:.0f} tokens, paper 854K"


@pytest.mark.parametrize(("removal", "turn", "source"), [
    (0.0, 1341, "App. E.1: uncompacted run exhausts the KV cache at turn 1,341"),
    (0.17, 1615, "App. M.3: L0 alone supports 1,615 turns"),
    (0.2237, 1727, "App. M.3: LAM supports 1,727 turns"),
])
def test_kv_exhaustion_turns(removal, turn, source):
    """Growth regime C_n = nΔ(1 - r) with Δ = 636.8 (SPEC §13)."""
    assert cm.exhaustion_turn(removal) == turn, f"{source}; model gives {cm.exhaustion_turn(removal)}"


def test_l1_over_l0_growth_speedup_is_turn_capacity_ratio():
    """Table 27 / App. M.3: 1,727 vs 1,615 turns, 'a modelled 1.07× speedup'."""
    ratio = cm.exhaustion_turn(0.2237) / cm.exhaustion_turn(0.17)
    assert round(ratio, 2) == 1.07, f"L1 over L0 in the growth regime {ratio:.4f}, paper 1.07×"


# --- Table 7: φ and the Amdahl ceiling --------------------------------------------------------------

TABLE7 = {  # Table 7, percent
    (1, 3_000): 2.5, (1, 8_000): 6.4, (1, 32_000): 21.6, (1, 128_000): 52.4,
    (32, 3_000): 23.5, (32, 8_000): 45.0, (32, 32_000): 76.6, (32, 128_000): 92.9,
}


@pytest.mark.claim("AMDAHL")
@pytest.mark.parametrize(("batch", "context"), sorted(TABLE7))
def test_table7_phi_within_one_point(batch, context):
    """Table 7 (Δ = 637, G_a = 39, K = 1,000 tokens): φ within 1 percentage point of the printed value.

    Batch 1 agrees to 0.1 point; batch 32 sits 0.2–0.8 points below the print (the paper does not
    give the batch-32 decode model; ours amortises the weight stream over the batch, SPEC §13).
    """
    got = 100 * cm.phi(context, batch)
    assert abs(got - TABLE7[batch, context]) <= 1.0, f"φ(b={batch}, C={context}) = {got:.2f}%, paper {TABLE7[batch, context]}%"


@pytest.mark.claim("AMDAHL")
def test_amdahl_ceiling_batch1_32k():
    """§2.6: φ = 21.6% at batch 1 and 32K gives a ceiling of 1.28×."""
    c = cm.amdahl_ceiling(cm.phi(32_000, 1))
    assert round(c, 2) == 1.28, f"ceiling {c:.3f}, paper 1.28×"


@pytest.mark.claim("AMDAHL")
def test_amdahl_ceiling_is_the_printed_phi_inverse():
    """SPEC §14: 1/(1 - 0.766) is 4.27, the paper prints 4.28; we reproduce 4.27 from the printed φ
    (the rounding in the paper is the inconsistency, not the formula)."""
    assert round(cm.amdahl_ceiling(0.766), 2) == 4.27, "1/(1-0.766) must be 4.27"
    assert abs(cm.amdahl_ceiling(cm.phi(32_000, 32)) - 4.28) / 4.28 < 0.05, "model's batch-32 ceiling within 5% of 4.28×"


@pytest.mark.claim("AMDAHL")
def test_context_reduction_never_beats_ceiling():
    """Claim AMDAHL: removing the whole context-scaling part (C → 0) speeds a turn by exactly 1/(1-φ)."""
    for b in (1, 32):
        for c in (3_000, 32_000, 128_000):
            full = cm.prefill_time(637, c) + 39 * cm.decode_step_time(c, b)
            none = cm.prefill_time(637, 0) + 39 * cm.decode_step_time(0, b)
            assert math.isclose(full / none, cm.amdahl_ceiling(cm.phi(c, b)), rel_tol=1e-12), \
                f"speedup at C→0 must equal the ceiling (b={b}, C={c})"


# --- Table 8 and App. E.2 ----------------------------------------------------------------------------


@pytest.fixture(scope="module")
def t8():
    return {r["batch"]: r for r in cm.table8()}


@pytest.mark.parametrize(("batch", "gain"), [(1, 71.4), (32, 91.6)])
def test_table8_policy_gain_within_1pct(t8, batch, gain):
    """Table 8: testing before prefill instead of deleting in place, 71.4× (batch 1) and 91.6× (batch 32)."""
    got = t8[batch]["gain"]
    assert rel(got, gain) < 0.01, f"policy gain at batch {batch}: {got:.2f}, paper {gain}×"


@pytest.mark.parametrize(("batch", "dip", "first"), [(1, 1.186e6, 1.66e4), (32, 1.183e6, 1.29e4)])
def test_table8_totals_within_1pct(t8, batch, dip, first):
    """Table 8 totals: 1.186e6 / 1.183e6 s delete in place, 1.66e4 / 1.29e4 s test first."""
    assert rel(t8[batch]["delete_in_place_s"], dip) < 0.01, f"delete-in-place total at b={batch}"
    assert rel(t8[batch]["test_first_s"], first) < 0.01, f"test-first total at b={batch}"


def test_table8_shares(t8):
    """Table 8 / App. E.2: delete in place spends 98.6% on compaction and re-prefill (batch 1); test
    first spends 0.1% on compaction."""
    assert round(100 * t8[1]["delete_in_place_overhead_share"], 1) == 98.6, "98.6% overhead at batch 1"
    assert round(100 * t8[1]["test_first_compaction_share"], 1) == 0.1, "0.1% compaction share"


@pytest.mark.parametrize(("batch", "gain"), [(1, 63.5), (32, 81.5)])
def test_invalidated_share_variant(batch, gain):
    """App. E.2: recomputing at the measured mean invalidated share 0.94 gives 63.5×–81.5×."""
    row = {r["batch"]: r for r in cm.table8(invalidated_share=0.94)}[batch]
    assert rel(row["gain"], gain) < 0.01, f"gain with share 0.94 at b={batch}: {row['gain']:.2f}, paper {gain}×"


def test_reprefill_538s_is_quadratic_term_only():
    """SPEC §14 / App. E.2: 'rebuilding a 360K-token cache costs ≈538 s' is the 2LdC² term alone;
    the model charges both terms, so the full re-prefill is larger."""
    c = 360_000
    quad = cm.reprefill_time(c) - cm.prefill_time(c, 0)
    assert abs(quad - 538) < 1.0, f"quadratic term at 360K: {quad:.1f} s, paper ≈538 s"
    assert cm.reprefill_time(c) > 600, "the full rebuild adds the 2PC term on top"


def test_turn_inference_at_360k_about_12s():
    """App. E.2: '≈12 s for the turn's inference' at C = 360K, batch 1."""
    t = cm.turn_time(360_000, removal=0.2237)
    assert 11.0 < t < 13.0, f"turn at 360K: {t:.2f} s, paper ≈12 s"


# --- Table 2 ---------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def t2():
    return {r["method"]: r for r in cm.table2()}


@pytest.mark.parametrize(("method", "b1", "b32"), [("LAM, full", 11.4, 8.9), ("LAM, L0 only", 12.0, 9.5)])
def test_table2_lam_rows_within_1pct(t2, method, b1, b32):
    """Table 2's admit rows (SPEC §13: 11.4 s / 8.9 s per turn for LAM; 12.0 / 9.5 for L0)."""
    assert rel(t2[method]["batch1_s"], b1) < 0.01, f"{method} batch 1: {t2[method]['batch1_s']:.3f} s, paper {b1}"
    assert rel(t2[method]["batch32_s"], b32) < 0.01, f"{method} batch 32: {t2[method]['batch32_s']:.3f} s, paper {b32}"


@pytest.mark.parametrize(("method", "b1", "tol"), [
    ("observation masking (k=5)", 107.7, 0.02),
    ("SemDeDup (global k-means, 0.95)", 647.9, 0.02),
    ("LLMLingua-2 (rate 0.80)", 790.5, 0.02),
    ("LLM summarization (rho=10)", 498.0, 0.10),
])
def test_table2_wall_rows_close(t2, method, b1, tol):
    """Table 2's wall rows. The paper does not give its wall accounting in full; ours (every
    post-wall turn is an event that compresses the whole context with the method's cost class and
    rebuilds its cache) lands within 2% for masking, SemDeDup and LLMLingua-2, and within 10% for
    summarization (8% high: we also rebuild the summary's cache, which the paper may not charge)."""
    assert rel(t2[method]["batch1_s"], b1) < tol, f"{method}: {t2[method]['batch1_s']:.1f} s, paper {b1}"


def test_table2_ordering_does_not_track_removal(t2):
    """§3.2: the wall methods separate by 9.4×–69.1× from LAM, LLMLingua-2 (least removal) pays most."""
    ratios = {m: r["ratio1"] for m, r in t2.items()}
    assert max(ratios, key=ratios.get) == "LLMLingua-2 (rate 0.80)", "LLMLingua-2 pays most"
    assert 9.0 < ratios["observation masking (k=5)"] < 10.0, "masking about 9.4× LAM"
    assert rel(ratios["LLMLingua-2 (rate 0.80)"], 69.1) < 0.02, "LLMLingua-2 about 69.1× LAM"


# --- Table 27 and App. M ------------------------------------------------------------------------------------


def test_table27_snapshot_vs_per_arrival():
    """Table 27: snapshot steady state Δ/r ≈ 2.8K; per-arrival mean context under a 32K budget ≈ 28K."""
    assert round(cm.snapshot_steady_state(0.2237) / 1000, 1) == 2.8, "C* = Δ/r ≈ 2.8K"
    m = cm.mean_context_budget(0.2237)
    assert round(m / 1000) == 28, f"per-arrival mean context {m:.0f}, paper 28K"


def test_class1_decode_weight_term_67ms():
    """App. M.1: an 8B model in fp16 costs 67 ms per decoded token from the weight term alone."""
    per_tok = cm.LLAMA31_8B.params * 2 / cm.GB10.mem_bw
    assert int(per_tok * 1000) == 67, f"{per_tok * 1000:.2f} ms per token"


@pytest.mark.parametrize(("method", "ratio"), [
    ("LLM summarization (class 1, rho=10)", 4957.0),
    ("LLMLingua-2 (class 2, XLM-R-large)", 1.33),
    ("SemDeDup (same encoder)", 1.00),
])
def test_table_m_speedups_at_1e6(method, ratio):
    """App. M.2: at T = 1e6 LAM's modelled compaction is 4,957× faster than summarization, 1.33×
    than LLMLingua-2 and 1.00× SemDeDup."""
    row = {r["method"]: r for r in cm.table_m()}[method]
    assert rel(row["ratio_to_lam"], ratio) < 0.01, f"{method}: {row['ratio_to_lam']:.4f}, paper {ratio}"


def test_l0_alone_cost_at_1e6():
    """App. M.2: L0 alone costs 0.0963 ms at T = 1e6 (βT/R_hash)."""
    row = {r["method"]: r for r in cm.table_m()}["L0 alone (line hashing)"]
    assert rel(row["seconds"], 0.0963e-3) < 0.01, f"L0 alone {row['seconds'] * 1e3:.4f} ms, paper 0.0963 ms"


def test_encoding_dominates_class3():
    """App. M.2: encoding is 99.989% of LAM's cost at T = 1e6; with no candidate pairs charged the
    model gives at least that (the paper's 1.49 ms non-encoding figure needs ~14K verified pairs,
    which it does not print)."""
    enc = {r["method"]: r for r in cm.table_m()}["LAM, encoding only (ratio: its share of LAM)"]["ratio_to_lam"]
    assert enc >= 0.99989, f"encoding share {enc:.6f}"


# --- profiles, errors, CLI ------------------------------------------------------------------------------


def test_profiles_have_sources():
    """Every constant of the shipped profiles names its source."""
    for p in cm.PROFILES.values():
        missing = [f for f in cm._FIELDS if f not in p.sources]
        assert not missing, f"profile {p.name} lacks sources for {missing}"


def test_bad_inputs_raise_naming_argument():
    with pytest.raises(LamValueError, match="removal"):
        cm.exhaustion_turn(1.0)
    with pytest.raises(LamValueError, match="batch"):
        cm.phi(1000, 0)
    with pytest.raises(LamValueError, match="schedule"):
        cm.simulate("later", 0.2)
    with pytest.raises(LamValueError, match="context"):
        cm.prefill_time(10, float("nan"))
    with pytest.raises(LamValueError, match="device"):
        cm.profile("TPU9")


def test_load_profile_roundtrip_and_refusal(tmp_path):
    good = tmp_path / "p.json"
    good.write_text(json.dumps({"profile": cm.GB10.to_json()}))
    assert cm.load_profile(good).encoder_tok_s == cm.GB10.encoder_tok_s, "profile JSON must round-trip"
    bad = dict(cm.GB10.to_json(), beta=-1)
    (tmp_path / "b.json").write_text(json.dumps({"profile": bad}))
    with pytest.raises(LamValueError, match="beta"):
        cm.load_profile(tmp_path / "b.json")


def test_cli_model_json_and_plot(tmp_path, capsys):
    png = tmp_path / "fig.png"
    assert main(["model", "--table", "8", "--json", "--plot", str(png)]) == 0
    out = json.loads(capsys.readouterr().out)
    gains = [r["gain"] for r in out["tables"]["8"]]
    assert rel(gains[0], 71.4) < 0.01 and rel(gains[1], 91.6) < 0.01, "CLI reports Table 8's gains"
    assert png.stat().st_size > 0 and png.with_suffix(".svg").stat().st_size > 0, "PNG and SVG written"


def test_cli_model_bad_device_exit_2(capsys):
    assert main(["model", "--device", "nope"]) == 2, "unknown device is a usage error"
    assert "device" in capsys.readouterr().err, "the message names the device"


def test_encoder_matmul_flops_equal_torchs_counter_on_the_real_minilm():
    """App. M.1's encoder work ``2PT`` plus full attention, ``Σ 2P·n + 4·L·d·n²``, is what MiniLM's
    forward pass multiplies: torch's FlopCounterMode, run on the real weights (eager attention, so
    that ``QKᵀ`` and ``AV`` are counted bmm's), counts exactly that on padded batches of two lengths,
    plus BERT's pooler (one ``d×d`` product per row, ``2d²``, which sentence-transformers discards)."""
    pytest.importorskip("sentence_transformers")
    import torch
    from torch.utils.flop_counter import FlopCounterMode
    from transformers import AutoModel, AutoTokenizer

    from lam_ref.text.encoders import minilm_path

    path = minilm_path()
    model = AutoModel.from_pretrained(str(path), attn_implementation="eager").eval()
    tok = AutoTokenizer.from_pretrained(str(path))
    d = cm.MINILM_L6.d_model
    assert model.config.hidden_size == d and model.config.num_hidden_layers == cm.MINILM_L6.layers, \
        f"MINILM_L6 disagrees with the model's config: {model.config}"
    for texts in (["short", "a longer window of text " * 30], ["one", "two", "three"]):
        batch = tok(texts, padding=True, return_tensors="pt")
        b, n = batch["input_ids"].shape
        with torch.no_grad(), FlopCounterMode(display=False) as fc:
            model(**batch)
        counted = fc.get_total_flops() - b * 2 * d * d  # the pooler
        assert counted == cm.encoder_matmul_flops([n] * b), (
            f"batch {b}x{n}: torch counts {counted} matmul FLOPs, the cost model {cm.encoder_matmul_flops([n] * b)}")


@pytest.mark.parametrize("bad", [[-1], [[3, 4]], [float("nan")]])
def test_encoder_matmul_flops_rejects_bad_lengths(bad):
    with pytest.raises(LamValueError, match="lengths"):
        cm.encoder_matmul_flops(bad)
