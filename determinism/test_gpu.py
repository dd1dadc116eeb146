"""The CUDA path (``--device cuda``): the greedy rule on the GPU equals the CPU reference outside
the tie band, the probe's digests and codec bytes on CUDA equal the CPU's for the same embeddings.
Skipped with the reason where CuPy or a CUDA device is missing (``gpu/run_checks.sh`` runs them)."""

from __future__ import annotations

import inspect

import numpy as np
import pytest

from lam_ref.determinism import device_kwargs, greedy_map, probe, require_cuda
from lam_ref.geometry import LamValueError
from lam_ref.strategies import avoid_tie_band
from lam_ref.substitution import substitute

from .conftest import INPUTS


def _cuda_or_skip():
    try:
        return require_cuda()
    except LamValueError as exc:
        pytest.skip(f"no GPU here: {exc}")


def test_cuda_is_refused_by_name_without_a_device():
    """Where CUDA is missing, asking for it is one clear error, not a crash (runs everywhere)."""
    try:
        require_cuda()
    except LamValueError as exc:
        assert "device 'cuda' needs CuPy and a CUDA device" in str(exc), str(exc)
        with pytest.raises(LamValueError, match="device 'cuda'"):
            device_kwargs("cuda")
    else:
        assert device_kwargs("cpu") == {}, "the CPU needs no extra argument"
    with pytest.raises(LamValueError, match="device must be one of cpu, cuda, got 'gpu0'"):
        device_kwargs("gpu0")


@pytest.mark.gpu
def test_greedy_on_cuda_equals_cpu_outside_the_tie_band():
    _cuda_or_skip()
    if "device" not in inspect.signature(substitute).parameters:
        pytest.skip("this lam_ref's substitute() has no device argument")
    rng = np.random.default_rng(11)
    centres = rng.normal(size=(40, 64))
    x = centres[rng.integers(0, 40, 3000)] + rng.normal(scale=0.12, size=(3000, 64))
    e = (x / np.linalg.norm(x, axis=1, keepdims=True)).astype(np.float32)
    for t0 in (0.99, 0.95, 0.9):
        t = avoid_tie_band(e, t0)
        cpu, _ = greedy_map(e, t)
        gpu, _ = greedy_map(e, t, device="cuda")
        assert np.array_equal(cpu, gpu), f"t={t}: CUDA decisions differ from the CPU reference"


@pytest.mark.gpu
def test_probe_on_cuda_matches_cpu_for_fixed_embeddings():
    """With the hashing encoder the embeddings are the same bytes on both devices: digests and codec
    bytes must be identical."""
    _cuda_or_skip()
    if "device" not in inspect.signature(substitute).parameters:
        pytest.skip("this lam_ref's substitute() has no device argument")
    path = str(INPUTS / "demo_agent.traj.json")
    cpu = probe([path], encoder="hash", batch_sizes=[64], device="cpu")
    with pytest.raises(LamValueError, match="hashing"):
        probe([path], encoder="hash", batch_sizes=[64], device="cuda")
    # the codec and the greedy rule on the device, for the CPU's embeddings
    from lam_ref.codec import codec_encode_rel

    cupy = require_cuda()
    embs: dict = {}
    probe([path], encoder="hash", batch_sizes=[64], embeddings_out=embs)
    e = embs[64]
    for c in cpu["encodings"][0]["codec"]:
        import hashlib

        got = hashlib.sha256(codec_encode_rel(cupy.asarray(e.reshape(-1)), c["rel_eb"], xp=cupy)).hexdigest()
        assert got == c["sha256"], f"codec bytes on CUDA differ at rel_eb {c['rel_eb']}"
    for r in cpu["runs"]:
        pi, _ = greedy_map(e, r["threshold"], [tuple(g) for g in cpu["input"]["groups"]], device="cuda")
        assert [[int(i), int(pi[i])] for i in np.flatnonzero(pi != np.arange(pi.size))] == r["deleted"], "same π"


def test_gpu_script_is_valid_bash_and_every_lam_ref_call_parses():
    """Issue 22 item 5: ``gpu/run_checks.sh`` stays runnable without a GPU to try it on: ``bash -n``
    accepts it, and every ``lam_ref.cli`` invocation in it (continuation lines joined, shell
    variables replaced by placeholders) parses with the current command line (options renamed by
    later work would fail here, not on the GPU host)."""
    import re
    import shlex
    import shutil
    import subprocess
    from pathlib import Path

    from lam_ref.cli import build_parser

    script = Path(__file__).resolve().parents[1] / "gpu" / "run_checks.sh"
    if shutil.which("bash"):
        res = subprocess.run(["bash", "-n", str(script)], capture_output=True, text=True, check=False)
        assert res.returncode == 0, f"bash -n {script.name}: {res.stderr}"
    text = script.read_text(encoding="utf-8").replace("\\\n", " ")
    calls = [ln.split("-m lam_ref.cli", 1)[1] for ln in text.splitlines() if "-m lam_ref.cli" in ln]
    assert len(calls) >= 2, f"expected the probe and compare calls in {script.name}, found {calls}"
    for call in calls:
        argv = shlex.split(re.sub(r"\$\{?[A-Za-z_]+\}?|\$\([^)]*\)", "X", call.split("2>&1")[0].split("|")[0]))
        try:
            build_parser().parse_args(argv)
        except SystemExit as exc:
            pytest.fail(f"{script.name}: `lam-ref {' '.join(argv)}` does not parse (exit {exc.code})")
