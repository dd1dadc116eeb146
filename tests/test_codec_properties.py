"""Properties of the L2 codec (SPEC §9): the error bound, determinism, and numcodecs round trips on
every buffer kind numcodecs hands a codec."""

from __future__ import annotations

import array
import json

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from lam_ref.codec import (
    CODEC_ID,
    CuSZpPlain,
    codec_decode,
    codec_encode,
    codec_encode_rel,
    relative_eb,
    within_error_bound,
)
from lam_ref.geometry import LamValueError

numcodecs = pytest.importorskip("numcodecs", reason="numcodecs is not installed (lam_ref[encoder])")

finite32 = st.floats(allow_nan=False, allow_infinity=False, width=32, min_value=-3e4, max_value=3e4)
ebs = st.floats(min_value=1e-3, max_value=1e3, allow_nan=False, allow_infinity=False)


@given(values=st.lists(finite32, max_size=200), eb=ebs)
def test_error_bound_absolute(values, eb):
    """Claim (SPEC §9): ``|x - x'| <= eb + ulp32(x')/2 + 2**-52·(|x| + eb)`` for every value.

    Shown to fail on: a check without the float32 slack (``|x - x'| <= eb``; fails e.g. at
    x = 0.5, eb = 0.1), and a decoder reconstructing with ``q * eb`` instead of ``q * 2*eb``.
    """
    x = np.array(values, dtype=np.float32)
    dec = codec_decode(codec_encode(x, eb))
    assert dec.shape == x.shape, f"decoded shape {dec.shape} != {x.shape}"
    ok = within_error_bound(x, dec, eb)
    assert ok.all(), f"bound violated at {np.flatnonzero(~ok)[:5]}: x={x[~ok][:5]}, x'={dec[~ok][:5]}, eb={eb}"


@given(values=st.lists(finite32, min_size=1, max_size=200), rel=st.sampled_from([1e-4, 1e-3, 1e-2, 0.1]))
def test_error_bound_relative(values, rel):
    """Claim (SPEC §9, Table 20): relative mode uses ``eb = rel_eb · max|x|`` and bounds the error by it.

    Shown to fail on: a relative bound computed from ``mean|x|`` instead of ``max|x|``.
    """
    x = np.array(values, dtype=np.float32)
    b = codec_encode_rel(x, rel)
    eb = relative_eb(x, rel)
    m = float(np.abs(x).max())
    assert eb == (rel * m if m > 0 else rel), f"relative eb {eb!r} != rel*max|x| = {rel * m!r}"
    dec = codec_decode(b)
    assert within_error_bound(x, dec, eb).all(), f"relative bound violated (rel={rel}, eb={eb})"


@given(values=st.lists(finite32, max_size=120), eb=ebs, block=st.sampled_from([8, 32, 128]))
def test_deterministic_and_stable_under_copies(values, eb, block):
    """Claim (SPEC §9, App. D): equal inputs give byte-identical streams, whatever the memory layout
    (values are taken in logical C order).

    Shown to fail on: an encoder flattening in memory order (``ravel(order="K")``), which encodes
    a transposed (Fortran-ordered) view in the order of its memory.
    """
    x = np.array(values, dtype=np.float32)
    first = codec_encode(x, eb, block_size=block)
    assert codec_encode(x.copy(), eb, block_size=block) == first, "two encodings of equal arrays differ"
    strided = np.repeat(x, 2)[::2]  # a non-contiguous view with the same values
    assert codec_encode(strided, eb, block_size=block) == first, "a strided view encodes differently"
    tr = x[: 2 * (x.size // 2)].reshape(-1, 2).T  # a transposed view: memory order != logical order
    assert codec_encode(tr, eb, block_size=block) == codec_encode(tr.copy(), eb, block_size=block), (
        "a transposed view encodes differently from its C-ordered copy"
    )


@given(values=st.lists(finite32, max_size=100), eb=ebs)
def test_decode_of_encode_is_a_fixed_point(values, eb):
    """Claim: re-encoding a decoded array with the same eb reproduces it exactly (a reconstruction
    lies within float32 rounding of its grid point, so it re-quantizes to the same code).

    Shown to fail on: a quantizer that truncates (``q = floor(y)``), under which a grid value
    rounded down by float32 falls into the cell below.
    """
    x = np.array(values, dtype=np.float32)
    once = codec_decode(codec_encode(x, eb))
    twice = codec_decode(codec_encode(once, eb))
    assert np.array_equal(once, twice), f"decode(encode(.)) is not idempotent at eb={eb}"


# --------------------------------------------------------------------------------------------
# numcodecs


def _arrays():
    rng = np.random.default_rng(7)
    base = rng.normal(scale=0.05, size=(6, 40)).astype(np.float32)
    return {
        "1d": base[0].copy(),
        "2d": base.copy(),
        "fortran": np.asfortranarray(base),
        "non_contiguous": base[:, ::3],
        "empty": np.zeros(0, dtype=np.float32),
        "empty_2d": np.zeros((0, 4), dtype=np.float32),
    }


@pytest.mark.parametrize("kind", list(_arrays()))
@pytest.mark.parametrize("codec", [CuSZpPlain(eb=1e-3), CuSZpPlain(rel_eb=1e-3), CuSZpPlain(eb=0.01, block_size=8)])
def test_numcodecs_round_trip_every_buffer_kind(kind, codec):
    arr = _arrays()[kind]
    values = np.ascontiguousarray(arr).reshape(-1) if not arr.flags.f_contiguous or arr.ndim < 2 else arr.reshape(
        -1, order="F"
    )
    eb = codec.eb if codec.eb is not None else relative_eb(values, codec.rel_eb)
    for buf in (arr, memoryview(np.ascontiguousarray(arr)) if arr.flags.c_contiguous else arr):
        dec = codec.decode(codec.encode(buf))
        assert dec.dtype == np.float32 and dec.size == arr.size, f"{kind}: decoded {dec.dtype} {dec.shape}"
        assert within_error_bound(values, dec, eb).all(), f"{kind}: error bound violated"
    if arr.size and arr.dtype == np.float32 and (arr.flags.c_contiguous or arr.flags.f_contiguous):
        raw = arr.tobytes(order="A")
        for buf in (raw, bytearray(raw), memoryview(raw), array.array("b", raw)):
            dec = codec.decode(codec.encode(buf))
            assert within_error_bound(values, dec, eb).all(), f"{kind}: {type(buf).__name__} input broke the bound"
        enc = codec.encode(arr)
        for ebuf in (enc, bytearray(enc), array.array("b", enc), np.frombuffer(enc, dtype="u1")):
            assert np.array_equal(codec.decode(ebuf), codec.decode(enc)), f"{kind}: decode of {type(ebuf).__name__}"
        out = np.empty_like(arr)
        codec.decode(enc, out=out)
        got = out.reshape(-1, order="F" if arr.flags.f_contiguous and arr.ndim > 1 else "C")
        assert within_error_bound(values, got, eb).all(), f"{kind}: decode into out= broke the bound"


def test_numcodecs_registry_and_config():
    codec = numcodecs.get_codec({"id": CODEC_ID, "rel_eb": 0.001})
    assert isinstance(codec, CuSZpPlain), f"registry returned {type(codec).__name__}"
    assert codec.get_config() == {"id": "lam_ref.cuszp_plain", "rel_eb": 0.001, "block_size": 32}, "config"
    cfg = json.loads(json.dumps(CuSZpPlain(eb=0.25).get_config()))
    assert numcodecs.get_codec(cfg) == CuSZpPlain(eb=0.25), "config must round-trip through JSON"
    assert repr(CuSZpPlain()) == "CuSZpPlain(rel_eb=0.001)", f"repr {CuSZpPlain()!r}"
    assert repr(CuSZpPlain(eb=0.5, block_size=8)) == "CuSZpPlain(eb=0.5, block_size=8)", "repr with block"


def test_numcodecs_stream_is_the_plain_stream():
    x = np.linspace(-2, 2, 77, dtype=np.float32)
    assert CuSZpPlain(eb=0.01).encode(x) == codec_encode(x, 0.01), "codec and function must write the same bytes"


def test_numcodecs_rejects_bad_buffers():
    codec = CuSZpPlain(eb=0.1)
    with pytest.raises(LamValueError, match="dtype float64"):
        codec.encode(np.zeros(4, dtype=np.float64))
    with pytest.raises(LamValueError, match="whole number of float32"):
        codec.encode(b"\x00" * 6)
    with pytest.raises(TypeError):
        codec.encode(np.array(["a", "b"], dtype=object))
    with pytest.raises(LamValueError, match="not both"):
        CuSZpPlain(eb=0.1, rel_eb=0.1)
    with pytest.raises(LamValueError, match="truncated"):
        codec.decode(codec.encode(np.ones(40, np.float32))[:-1])
