"""The C codec (lam_ref._codec) against the numpy codec and the version-2 reference (SPEC §9.5, §9.6).

Both backends must write the same bytes and decode to the same float32 bits, on inputs chosen to
stress the quantizer (exact ties ``k + 1/2``, quotients one float64 ulp from a tie, codes near
``Q_MAX``, subnormals), every block size and column count, ``n`` not a multiple of the block and
``n = 0``; corrupt streams (with the CRC-32 forged so that the deeper checks run) are refused by
both with :class:`~lam_ref.geometry.LamValueError`. Strict mode (version 2) is held to
``|x - x'| <= eb`` exactly, in float64.
"""

from __future__ import annotations

import os
import shutil
import struct
import subprocess
import zlib
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from lam_ref import codec as codec_mod
from lam_ref.codec import HEADER_SIZE, Q_MAX, codec_decode, codec_encode, within_error_bound
from lam_ref.geometry import LamValueError

needs_c = pytest.mark.skipif(not codec_mod.C_BUILT, reason="lam_ref._codec is not built")
EBS = [2.0**-10, 2.0**-7, 1e-4, 1e-3, 1e-2, 0.1, 0.5, 0.7, 3.0]


def test_extension_is_built():
    """Without the extension every encode falls back to numpy and misses the throughput target
    (docs/performance.md). Set LAM_REF_PURE_PYTHON=1 to run the suite on the numpy codec alone."""
    if os.environ.get("LAM_REF_PURE_PYTHON") == "1":
        pytest.skip("LAM_REF_PURE_PYTHON=1: the numpy codec alone is tested")
    assert codec_mod.C_BUILT, "lam_ref._codec is not built: pip install -e . with a C compiler"


def test_build_declares_no_fp_contraction():
    """The float64 rule is bit-exact only without FMA contraction: the build says -ffp-contract=off
    and the built module holds no fused multiply-add instruction."""
    text = (Path(__file__).resolve().parents[1] / "pyproject.toml").read_text()
    block = text[text.index('name = "lam_ref._codec"') :].split("[[", 1)[0]
    assert "-ffp-contract=off" in block, "lam_ref._codec must be compiled with -ffp-contract=off"
    if codec_mod.C_BUILT and shutil.which("objdump"):
        dis = subprocess.run(["objdump", "-d", codec_mod._c.__file__], capture_output=True, text=True).stdout
        assert "fmadd" not in dis and "fmsub" not in dis, "the built lam_ref._codec contains FMA instructions"


def _ties(eb: float, ks: list[int]) -> list[float]:
    """Values whose float64 quotient x / (2 eb) is (or lies one ulp beside) the tie k + 1/2."""
    out = []
    for k in ks:
        t = (k + 0.5) * 2.0 * eb
        for v in (t, np.nextafter(t, np.inf), np.nextafter(t, -np.inf)):
            f = np.float32(v)
            out += [float(f), float(np.nextafter(f, np.float32(np.inf))), float(np.nextafter(f, np.float32(-np.inf)))]
    return out


def _reciprocal_traps(eb: float, limit: int = 8) -> list[float]:
    """float32 values beside a tie whose code differs when ``x / s`` is replaced by ``x * (1/s)``
    (the forbidden rewrite of SPEC §9.2); found by search, so the test does not rely on luck."""
    s = 2.0 * eb
    t = ((np.arange(-200_000, 200_000) + 0.5) * s).astype(np.float32)
    c = np.concatenate([t, np.nextafter(t, np.float32(np.inf)), np.nextafter(t, np.float32(-np.inf))]).astype(np.float64)

    def q(y: np.ndarray) -> np.ndarray:
        f = np.floor(y)
        return f + (y - f >= 0.5)

    hits = c[q(c / s) != q(c * (1.0 / s))]
    return hits[:limit].tolist()


@st.composite
def hard_vectors(draw):
    """(x float32, eb): ties, near-ties, codes near Q_MAX, subnormals, zeros, ordinary values."""
    eb = draw(st.sampled_from(EBS))
    ks = draw(st.lists(st.integers(-5000, 5000), max_size=8))
    parts = _ties(eb, ks) + (_reciprocal_traps(eb) if draw(st.booleans()) else [])
    big = Q_MAX * 2.0 * eb
    parts += draw(st.lists(st.sampled_from([0.0, -0.0, 1e-45, -1e-45, 1e-38, big * 0.999, -big * 0.999]), max_size=6))
    parts += draw(st.lists(st.floats(-100.0, 100.0, width=32), max_size=120))
    order = draw(st.permutations(list(range(len(parts)))))
    x = np.array([parts[i] for i in order], dtype=np.float32)
    x = x[np.abs(x.astype(np.float64)) < big * 0.999]  # every code within Q_MAX
    return x, eb


@needs_c
@given(data=hard_vectors(), block=st.sampled_from([8, 16, 32, 40, 64, 256]))
def test_v1_c_and_numpy_write_the_same_bytes(data, block):
    """SPEC §9.5: the C encoder writes the numpy encoder's bytes, and both decoders give the same bits.

    Shown to fail on a C quantizer rounding half to even (``nearbyint``) or multiplying by ``1/s``."""
    x, eb = data
    a = codec_encode(x, eb, block_size=block, backend="numpy")
    b = codec_encode(x, eb, block_size=block, backend="c")
    assert a == b, f"C and numpy streams differ (n={x.size}, eb={eb}, block={block})"
    da, dc = codec_decode(a, backend="numpy"), codec_decode(a, backend="c")
    assert da.dtype == dc.dtype == np.float32, f"dtypes {da.dtype}, {dc.dtype}"
    assert np.array_equal(da.view(np.uint32), dc.view(np.uint32)), "C and numpy decodes differ in bits"
    assert within_error_bound(x, dc, eb).all(), "the C decode breaks the version-1 bound (SPEC §9.3)"


def _with_repeats(x: np.ndarray, cols: int, picks: list[int]) -> np.ndarray:
    """``x`` cut to whole rows of ``cols``, then rows repeated in the order ``picks`` (indices mod rows)."""
    x = x[: x.size - x.size % cols]
    rows = x.reshape(-1, cols)
    if rows.shape[0] and picks:
        rows = np.concatenate([rows, rows[[p % rows.shape[0] for p in picks]]])
    return rows.reshape(-1)


@needs_c
@given(data=hard_vectors(), strict=st.booleans(), cols=st.sampled_from([1, 2, 3, 8, 16, 24]),
       picks=st.lists(st.integers(0, 50), max_size=6))
def test_v2_c_and_reference_write_the_same_bytes(data, strict, cols, picks):
    """SPEC §9.6: the C version-2 encoder writes the reference's bytes, the decoders agree bit for bit
    (rows of 16 or more columns repeated, so that the row-repeat section is exercised)."""
    x, eb = data
    x = _with_repeats(x, cols, picks)
    a = codec_encode(x, eb, version=2, strict=strict, cols=cols, backend="numpy")
    b = codec_encode(x, eb, version=2, strict=strict, cols=cols, backend="c")
    assert a == b, f"C and reference version-2 streams differ (n={x.size}, eb={eb}, cols={cols}, strict={strict})"
    da, dc = codec_decode(a, backend="numpy"), codec_decode(a, backend="c")
    assert np.array_equal(da.view(np.uint32), dc.view(np.uint32)), "C and reference version-2 decodes differ"
    assert within_error_bound(x, dc, eb).all(), "version 2 breaks the version-1 bound (same quantizer)"


@given(data=hard_vectors(), cols=st.sampled_from([1, 4, 16]), picks=st.lists(st.integers(0, 50), max_size=4))
def test_v2_strict_never_exceeds_eb(data, cols, picks):
    """SPEC §9.6 strict mode: ``|x - x'| <= eb`` for every value, compared in float64 (the reference
    backend, and C when built). Adversarial: near-ties at large codes, where float32 rounding of the
    reconstruction pushes a plain stream past ``eb``.

    Shown to fail on strict mode without the exception list (the plain version-2 decode)."""
    x, eb = data
    x = _with_repeats(x, cols, picks)
    for backend in ["numpy"] + (["c"] if codec_mod.C_BUILT else []):
        dec = codec_decode(codec_encode(x, eb, version=2, strict=True, cols=cols, backend=backend), backend=backend)
        err = np.abs(x.astype(np.float64) - dec.astype(np.float64))
        assert (err <= eb).all(), f"{backend}: strict error {err.max()!r} > eb = {eb!r}"


def test_strict_mode_is_needed_on_large_values():
    """Plain streams exceed ``eb`` by float32 rounding where ulp32(x) is near eb; strict ones never do."""
    eb = 1e-4
    x = np.float32(1000.0) + np.arange(2000, dtype=np.float32) * np.float32(2.0**-13)
    plain = codec_decode(codec_encode(x, eb, version=2, cols=1))
    strict = codec_decode(codec_encode(x, eb, version=2, strict=True, cols=1))
    over = np.abs(x.astype(np.float64) - plain.astype(np.float64)) > eb
    assert over.any(), "this input was chosen so that a plain stream exceeds eb somewhere"
    assert (np.abs(x.astype(np.float64) - strict.astype(np.float64)) <= eb).all(), "strict exceeds eb"


def _forge(stream: bytes, pos: int, value: int) -> bytes:
    """Set one body byte and recompute the CRC-32, so that only the structural checks can refuse it."""
    b = bytearray(stream)
    b[pos] = value
    crc = zlib.crc32(bytes(b[HEADER_SIZE:]), zlib.crc32(bytes(b[: HEADER_SIZE - 4])))
    b[HEADER_SIZE - 4 : HEADER_SIZE] = struct.pack("<I", crc)
    return bytes(b)


def _same_outcome(stream: bytes) -> None:
    outs = []
    for backend in ("numpy", "c"):
        try:
            outs.append(codec_decode(stream, backend=backend).view(np.uint32))
        except LamValueError:
            outs.append(None)
    if outs[0] is None or outs[1] is None:
        assert outs[0] is None and outs[1] is None, "one backend refused a stream the other accepted"
    else:
        assert np.array_equal(outs[0], outs[1]), "the backends decode an altered stream differently"


@needs_c
@given(
    x=st.lists(st.floats(-10.0, 10.0, width=32), min_size=1, max_size=90),
    version=st.sampled_from([1, 2, 16]),
    where=st.integers(0, 10**6),
    value=st.integers(0, 255),
    cut=st.integers(1, 40),
)
def test_corrupt_streams_get_the_same_refusal(x, version, where, value, cut):
    """Truncated, padded, and forged streams (CRC recomputed): both backends refuse (LamValueError)
    or both decode to the same bits; an unforged flipped byte is always refused. ``version=16`` is
    version 2 with 16 columns and a repeated row (the row-repeat section)."""
    arr = np.array(x, dtype=np.float32)
    cols = 16 if version == 16 else 1
    if cols == 16:
        arr = np.concatenate([np.resize(arr, 32), np.resize(arr, 16)])
    s = codec_encode(arr, 0.01, version=min(version, 2), strict=version != 1, cols=cols)
    for bad in (s[:-cut] if cut < len(s) else s[:1], s + b"\x00"):
        for backend in ("numpy", "c"):
            with pytest.raises(LamValueError):
                codec_decode(bad, backend=backend)
    if len(s) > HEADER_SIZE:
        pos = HEADER_SIZE + where % (len(s) - HEADER_SIZE)
        flipped = bytearray(s)
        flipped[pos] ^= 1 + value % 255
        for backend in ("numpy", "c"):
            with pytest.raises(LamValueError):  # by the CRC-32, or earlier by a length check
                codec_decode(bytes(flipped), backend=backend)
        _same_outcome(_forge(s, pos, value))


def test_backend_argument_is_checked():
    x = np.ones(8, dtype=np.float32)
    with pytest.raises(LamValueError, match="backend"):
        codec_encode(x, 0.1, backend="fortran")
    with pytest.raises(LamValueError, match="backend"):
        codec_decode(codec_encode(x, 0.1), backend="gpu")
    with pytest.raises(LamValueError, match="strict=True needs version=2"):
        codec_encode(x, 0.1, strict=True)
    with pytest.raises(LamValueError, match="cols"):
        codec_encode(x, 0.1, version=2, cols=3)
    with pytest.raises(LamValueError, match="version"):
        codec_encode(x, 0.1, version=3)


@needs_c
@pytest.mark.parametrize("backend", ["numpy", "c"])
@pytest.mark.parametrize("version", [1, 2])
def test_range_errors_are_the_same(backend, version):
    """An eb too small (|q| > Q_MAX) or too large (float32 overflow) is refused alike by both backends."""
    with pytest.raises(LamValueError, match="too small"):
        codec_encode(np.array([1.0, 1e6], dtype=np.float32), 1e-7, backend=backend, version=version)
    with pytest.raises(LamValueError, match="too large"):
        codec_encode(np.array([3e38], dtype=np.float32), 1e38, backend=backend, version=version)


@needs_c
@pytest.mark.parametrize("n", [0, 1, 31, 33, 4097])
def test_edge_lengths(n):
    """n = 0, below, beside and well above a block: same bytes, same decode, both versions."""
    x = np.random.default_rng(n).normal(scale=0.05, size=n).astype(np.float32)
    for kw in ({}, {"version": 2}, {"version": 2, "strict": True}):
        a, b = codec_encode(x, 1e-3, backend="numpy", **kw), codec_encode(x, 1e-3, backend="c", **kw)
        assert a == b, f"n={n} {kw}: streams differ"
        assert codec_decode(a, backend="c").shape == (n,), f"n={n} {kw}: decoded shape"
