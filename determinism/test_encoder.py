"""Determinism with the real encoder on the shared trajectories (paper App. D; claim ``STAB``):
one digest per threshold across batch sizes 8–256, torch threads 1 and 2, a fresh process with
another ``PYTHONHASHSEED``; codec bytes identical across runs and processes; and the first
decision that differs between float32 and bfloat16 encodings lies in the float32 run's at-risk
set for the measured float32-vs-bfloat16 jitter.

The encodings are made once per session (``minilm_probe`` in conftest.py)."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from lam_ref.codec import codec_encode_rel
from lam_ref.determinism import (
    REL_EBS,
    at_risk,
    compare,
    decision_margins,
    first_divergence,
    greedy_map,
    jitter,
    load_report,
    probe_corpus,
    risk_bound,
)

ROOT = Path(__file__).resolve().parents[1]


def _digests(report):
    out: dict[float, set] = {}
    for r in report["runs"]:
        out.setdefault(r["threshold"], set()).add((r["deletion_digest"], r["map_digest"]))
    return out


@pytest.mark.data
def test_one_digest_per_threshold_across_batch_sizes(minilm_probe):
    """App. D: encoding at batch sizes 8..256 gives one deletion digest and one map digest per threshold."""
    report, embs = minilm_probe
    assert 64 in embs and len(embs) >= 2, f"the reference batch size and at least one other: {sorted(embs)}"
    for t, ds in _digests(report).items():
        assert len(ds) == 1, f"t={t}: {len(ds)} different digests across batch sizes: {ds}"


@pytest.mark.data
@pytest.mark.claim("STAB")
def test_margins_explain_the_agreement(minilm_probe):
    """STAB on real data: the reported jitter is the measured one, |Δsq| <= 4γ, and every batch size
    whose jitter stays below the reference run's smallest margin is certified (and agrees)."""
    report, embs = minilm_probe
    ref = report["settings"]["reference_batch_size"]
    groups = [tuple(g) for g in report["input"]["groups"]]
    for row in report["encodings"]:
        j = jitter(embs[ref], embs[row["batch_size"]], groups)
        assert j == pytest.approx(row["jitter"], rel=1e-9, abs=1e-15), f"batch {row['batch_size']}: report jitter {row['jitter']} vs recomputed {j}"
        assert j["sq"] <= risk_bound(j["cos"]) + 1e-12, f"|Δsq| {j['sq']} above 4γ {risk_bound(j['cos'])}"
    for r in report["runs"]:
        if r["certified_vs_reference"]:
            assert _digests(report)[r["threshold"]] == {(r["deletion_digest"], r["map_digest"])}, "certified runs agree"
        m = np.array([np.inf if x is None else x for x in r["margins"]])
        pi = np.arange(m.size)
        for i, rep in r["deleted"]:
            pi[i] = rep
        exact = decision_margins(embs[r["batch_size"]], pi, r["threshold"], groups)
        fin = np.isfinite(exact)
        assert np.allclose(m[fin], exact[fin], rtol=1e-5, atol=0), "stored margins (6 digits) are the run's"


@pytest.mark.data
def test_codec_bytes_identical_across_runs_and_processes(minilm_probe, tmp_path):
    """The L2 codec on fixed embeddings: the same SHA-256 in this process (twice) and in a fresh
    process with one thread and another PYTHONHASHSEED (App. D: one digest per rel_eb)."""
    report, embs = minilm_probe
    e = embs[64]
    here = [hashlib.sha256(codec_encode_rel(e.reshape(-1), r)).hexdigest() for r in REL_EBS]
    again = [hashlib.sha256(codec_encode_rel(e.reshape(-1).copy(), r)).hexdigest() for r in REL_EBS]
    row = next(x for x in report["encodings"] if x["batch_size"] == 64)
    assert here == again == [c["sha256"] for c in row["codec"]], "repeated runs and the probe's own digests agree"
    path = tmp_path / "e64.npy"
    np.save(path, e)
    code = ("import hashlib, sys, numpy as np; from lam_ref.codec import codec_encode_rel; "
            "x = np.load(sys.argv[1]).reshape(-1); "
            "print(' '.join(hashlib.sha256(codec_encode_rel(x, r)).hexdigest() for r in (1e-3, 1e-2, 3e-2)))")
    env = dict(os.environ, PYTHONHASHSEED="4242", OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1", MKL_NUM_THREADS="1")
    res = subprocess.run([sys.executable, "-c", code, str(path)], capture_output=True, text=True, env=env, timeout=300,
                         check=False)
    assert res.returncode == 0, res.stderr
    assert res.stdout.split() == here, "a fresh process writes the same codec bytes"


@pytest.mark.data
def test_fresh_process_one_thread_other_hashseed(minilm_probe, shared_dir, tmp_path):
    """``lam-ref determinism probe --threads 1`` in a fresh process with PYTHONHASHSEED=12345 gives
    the digests of this process (2 threads) at the reference batch size; `compare` agrees. Both
    cut their default windows, compact's (fitted to the encoder, issue 35 §2), so both encode the
    same windows."""
    report, _ = minilm_probe
    out = tmp_path / "t1.json"
    env = dict(os.environ, PYTHONHASHSEED="12345")
    cmd = [sys.executable, "-m", "lam_ref.cli", "determinism", "probe", str(shared_dir), "--threads", "1",
           "--batch-sizes", "64", "--json", str(out), "--no-progress"]
    res = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=900, check=False, cwd=ROOT)
    assert res.returncode == 0, res.stderr[-2000:]
    fresh = json.loads(out.read_text())
    assert fresh["settings"]["threads"] == 1 and fresh["target"]["pythonhashseed"] == "12345", "settings recorded"
    assert fresh["input_sha256"] == report["input_sha256"] and fresh["input"]["window_fit"] == "encoder", \
        f"same windows: {fresh['input']} vs {report['input']}"
    mine = {(r["threshold"]): (r["deletion_digest"], r["map_digest"]) for r in report["runs"] if r["batch_size"] == 64}
    theirs = {(r["threshold"]): (r["deletion_digest"], r["map_digest"]) for r in fresh["runs"]}
    assert theirs == mine, f"1 thread / fresh process {theirs} vs 2 threads {mine}"
    here = tmp_path / "here.json"
    here.write_text(json.dumps(report))
    res = compare([load_report(here), load_report(out)])
    assert res.agree, f"compare must agree: {res.groups}"


#: Trajectories encoded in bfloat16 (emulated, hence slow, on CPUs without AVX512-BF16): the first two.
BF16_GROUPS = 2


def straddling_thresholds(e32, e16, groups, limit: int = 24) -> list[float]:
    """0.99, 0.95, and thresholds whose δ² lies halfway between the float32 and bfloat16 squared
    distance of a pair (the pairs that moved most): there the pair's merge bit differs between
    the encodings, so decisions do flip (for the second chunk of a group, whose only retained
    predecessor is the first, always)."""
    cands = []
    for a, b in groups:
        x, y = e32[a:b].astype(np.float64), e16[a:b].astype(np.float64)
        for i in range(1, b - a):
            s32 = ((x[:i] - x[i]) ** 2).sum(axis=1)
            s16 = ((y[:i] - y[i]) ** 2).sum(axis=1)
            for p, q in zip(s32, s16):
                if abs(p - q) > 1e-9 and 0.0 < (p + q) / 2 < 4.0:
                    cands.append((abs(p - q), 1.0 - (p + q) / 4.0))
    cands.sort(reverse=True)
    return [0.99, 0.95] + sorted({round(float(t), 15) for _, t in cands[:limit]})


@pytest.mark.data
@pytest.mark.claim("STAB")
def test_bfloat16_first_divergence_is_at_risk(minilm_probe, shared_dir):
    """float32 vs bfloat16 encodings of the same windows: at every threshold tried, the first
    decision that differs lies in the float32 run's at-risk set for the measured
    float32-vs-bfloat16 jitter (``margin <= 4γ``); later differences may cascade and are only
    counted. Thresholds: 0.99, 0.95 and ones placed between a pair's float32 and bfloat16
    distance, so that divergences do occur."""
    from lam_ref.determinism.encoder import _ProbeEncoder

    report, embs = minilm_probe
    corpus = probe_corpus([str(shared_dir)])  # the session probe's windows (its defaults: compact's)
    assert corpus.input_sha256 == report["input_sha256"], "the windows the session probe encoded"
    groups = corpus.groups[:BF16_GROUPS]
    stop = groups[-1][1]
    e32 = embs[64][:stop]
    e16 = _ProbeEncoder("all-MiniLM-L6-v2", "bfloat16", "cpu").encode(corpus.texts[:stop], 64)
    j = jitter(e32, e16, groups)
    assert j["cos"] > 1e-5, f"bfloat16 must move cosines far more than batch sizes do: {j}"
    bound = risk_bound(j["cos"])
    diverged = []
    for t in straddling_thresholds(e32, e16, groups):
        pi32, _ = greedy_map(e32, t, groups)
        pi16, _ = greedy_map(e16, t, groups)
        m = decision_margins(e32, pi32, t, groups)
        first, cascade = first_divergence(pi32, pi16)
        if first is None:
            continue
        diverged.append((t, first, cascade))
        assert first in set(at_risk(m, bound).tolist()), \
            f"t={t}: first divergence {first} has margin {m[first]:.3g} > 4γ = {bound:.3g}: not flagged at risk"
    assert diverged, "thresholds between a pair's float32 and bfloat16 distances must make some decision differ"
