"""The codec's array-module path (``lam_ref.codec`` with ``xp``, SPEC §9): byte-identical to the CPU reference.

The ``xp`` code path runs here with array modules that need no GPU (numpy, and a proxy of numpy
that forces the generic bit packing CuPy uses); the device tests (``xp = cupy``) skip with the
reason when cupy or a CUDA device is missing.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from lam_ref.codec import codec_decode, codec_encode, codec_encode_rel
from lam_ref.devices import array_module
from lam_ref.geometry import LamValueError

from .datagen import GenericNumpy

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "codec"


finite32 = st.floats(allow_nan=False, allow_infinity=False, width=32, min_value=-1e3, max_value=1e3)


@given(values=st.lists(finite32, max_size=150), eb=st.sampled_from([1e-3, 0.02, 0.5]), block=st.sampled_from([8, 32]))
def test_port_code_path_matches_cpu_reference(values, eb, block):
    """Claim (SPEC §9): the port writes the CPU reference's bytes and decodes to its values.

    Shown to fail on: a generic bit packer with weights in LSB-first order (``[1, 2, ..., 128]``),
    and a generic unpacker shifting by ``0..7`` instead of ``7..0``.
    """
    x = np.array(values, dtype=np.float32)
    ref = codec_encode(x, eb, block_size=block)
    for xp in (np, GenericNumpy()):
        got = codec_encode(x, eb, block_size=block, xp=xp)
        assert got == ref, f"port bytes differ from the CPU reference with xp={type(xp).__name__}"
        dec = codec_decode(ref, xp=xp)
        assert np.array_equal(np.asarray(dec), codec_decode(ref)), f"port decode differs with xp={type(xp).__name__}"


def test_port_relative_mode_and_errors():
    x = np.load(FIXTURES / "c07_minilm_rel.input.npy")
    assert codec_encode_rel(x, 0.001, xp=GenericNumpy()) == codec_encode_rel(x, 0.001), "relative mode bytes"
    with pytest.raises(LamValueError, match="float32"):
        codec_encode(np.zeros(3), 0.1, xp=np)
    with pytest.raises(LamValueError, match="finite"):
        codec_encode(np.float32([np.nan]), 0.1, xp=np)
    with pytest.raises(LamValueError, match="truncated"):
        codec_decode(codec_encode(np.ones(5, np.float32), 0.1)[:-1], xp=np)


def _cupy_or_skip():
    try:
        return array_module("cuda")
    except LamValueError as exc:
        pytest.skip(f"no GPU here: {exc}")


def test_array_module_names_the_device():
    """``array_module`` gives numpy for the CPU and refuses an unknown device by name."""
    assert array_module("cpu") is np, "cpu -> numpy"
    with pytest.raises(LamValueError, match="'tpu'"):
        array_module("tpu")


@pytest.mark.gpu
def test_gpu_bytes_identical_on_random_and_real_data():
    cupy = _cupy_or_skip()
    rng = np.random.default_rng(3)
    inputs = [rng.normal(scale=s, size=n).astype(np.float32) for s, n in ((1.0, 100_003), (0.05, 38_400), (1e3, 777))]
    inputs.append(np.load(FIXTURES / "c07_minilm_rel.input.npy"))
    for x in inputs:
        for eb in (1e-4, 1e-3, 0.05):
            ref = codec_encode(x, eb)
            got = codec_encode(cupy.asarray(x), eb, xp=cupy)
            assert got == ref, f"GPU bytes differ from CPU (n={x.size}, eb={eb})"
            dec = codec_decode(ref, xp=cupy)
            assert np.array_equal(cupy.asnumpy(dec), codec_decode(ref)), f"GPU decode differs (n={x.size}, eb={eb})"


@pytest.mark.gpu
def test_gpu_golden_fixtures():
    cupy = _cupy_or_skip()
    for path in sorted(FIXTURES.glob("*.bin")):
        expected = path.read_bytes()
        dec = codec_decode(expected, xp=cupy)
        assert np.array_equal(cupy.asnumpy(dec), codec_decode(expected)), f"GPU decode of {path.name} differs"
