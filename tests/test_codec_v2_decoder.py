"""Version-2 streams always decode; forged ones are refused with LamValueError; memory is bounded
(issue 39 §2, SPEC §9.6, docs/codec.md "Canonical and refused", docs/spec-decisions.md D-codec-*).

Expected values come from the quantizer's definition (``codec_quantize`` / ``codec_dequantize`` and
the strict rule applied value by value), never from the decoder under test.
"""

from __future__ import annotations

import json
import struct
import subprocess
import sys
import tracemalloc
import zlib
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from lam_ref import codec as codec_mod
from lam_ref.codec import (
    HEADER_SIZE,
    CuSZpPlain,
    codec_decode,
    codec_dequantize,
    codec_encode,
    codec_quantize,
)
from lam_ref.geometry import LamValueError

BACKENDS = ["numpy"] + (["c"] if codec_mod.C_BUILT else [])
needs_c = pytest.mark.skipif(not codec_mod.C_BUILT, reason="lam_ref._codec is not built")


def _restamp(b: bytes | bytearray) -> bytes:
    """Recompute the CRC-32 so that only the structural checks can refuse a forged stream."""
    b = bytearray(b)
    b[24:28] = struct.pack("<I", zlib.crc32(bytes(b[28:]), zlib.crc32(bytes(b[:24]))))
    return bytes(b)


def _expected(x: np.ndarray, eb: float, strict: bool) -> np.ndarray:
    """The decode SPEC §9.6 defines: the version-1 reconstruction, and in strict mode ``x`` itself
    wherever that reconstruction is more than ``eb`` (float64) away."""
    rec = codec_dequantize(codec_quantize(x, eb), eb)
    if strict:
        far = np.abs(x.astype(np.float64) - rec.astype(np.float64)) > eb
        rec = np.where(far, x, rec)
    return rec


@st.composite
def repeated_matrices(draw):
    """(x float32 (rows*cols), eb, cols): few distinct rows repeated many times, so that the stream
    has far fewer bits than values; codes from zero to large, ties and near-ties included."""
    cols = draw(st.sampled_from([1, 2, 3, 15, 16, 17, 31, 32, 33, 64]))
    eb = draw(st.sampled_from([2.0**-10, 1e-4, 1e-3, 0.1, 0.5, 3.0]))
    distinct = draw(st.integers(0, 5))
    scale = min(draw(st.sampled_from([0.0, 1e-3, 0.05, 1.0, 1e6])), eb * 2.0**26)  # codes well inside 2**31 - 1
    seed = draw(st.integers(0, 2**16))
    rows = np.random.default_rng(seed).normal(size=(distinct, cols)) * scale
    ties = draw(st.booleans())
    if ties and distinct:
        rows[0, :] = (np.arange(cols) + 0.5) * 2.0 * eb  # exact ties k + 1/2
    repeats = draw(st.sampled_from([0, 1, 7, 64, 300]))  # 64 and 300 rows: fewer stream bits than values
    pattern = np.random.default_rng(seed + 1).integers(0, distinct, size=repeats).tolist() if distinct else []
    order = list(range(distinct)) + pattern
    x = rows[order].astype(np.float32) if order else np.zeros((0, cols), dtype=np.float32)
    return x.reshape(-1), eb, cols


@given(case=repeated_matrices(), strict=st.booleans())
def test_every_stream_the_encoder_writes_decodes(case, strict):
    """Issue 39 §2 / SPEC §9.6: every stream either encoder writes decodes, on both decoders, to the
    values the quantizer defines, for every cols, strict setting and row-repeat pattern (many repeats
    make n larger than the stream's bits: the old "fewer than n bits" refusal rejected those)."""
    x, eb, cols = case
    want = _expected(x, eb, strict)
    for enc in BACKENDS:
        s = codec_encode(x, eb, version=2, cols=cols, strict=strict, backend=enc)
        for dec in BACKENDS:
            got = codec_decode(s, backend=dec)
            assert np.array_equal(got.view(np.uint32), want.view(np.uint32)), (
                f"encoder {enc}, decoder {dec}: the decode differs from the quantizer's values "
                f"(n={x.size}, cols={cols}, eb={eb}, strict={strict})")


def test_repeated_rows_decode_although_the_stream_has_fewer_bits_than_values():
    """1,000 identical rows of 16 columns: 16,000 values in 154 body bytes (1,232 bits). Today's
    "fewer than n bits is refused" rule refused this stream its own encoder writes."""
    x = np.zeros((1000, 16), dtype=np.float32)
    s = codec_encode(x, 1e-3, version=2, cols=16)
    assert 8 * (len(s) - HEADER_SIZE) < x.size, "the case must have fewer body bits than values"
    for dec in BACKENDS:
        assert np.array_equal(codec_decode(s, backend=dec), x.reshape(-1)), f"{dec}: zeros decode to zeros"


def test_repeated_rows_round_trip_through_numcodecs():
    """The same through the numcodecs codec (zarr's path): version 2 with cols = shape[-1]."""
    rng = np.random.default_rng(3)
    base = (0.05 * rng.normal(size=(4, 384))).astype(np.float32)
    x = base[[0, 1, 2, 3] + [1] * 700]
    for strict in (False, True):
        codec = CuSZpPlain(eb=1e-3, version=2, strict=strict)
        buf = codec.encode(x)
        got = codec.decode(buf)
        assert np.array_equal(got.reshape(-1), _expected(x.reshape(-1), 1e-3, strict)), f"strict={strict}: numcodecs decode"


def _stream_of_distinct_rows(rows: int = 8, cols: int = 16) -> bytes:
    x = (np.arange(rows * cols, dtype=np.float32) * np.float32(0.01)).reshape(rows, cols)
    return codec_encode(x, 1e-3, version=2, cols=cols)


def test_row_marks_past_their_bits_are_refused_not_indexerror():
    """A forged stream whose row marks claim more repeats than rows - R: the pure-Python decoder read
    past its bits (IndexError); now both decoders refuse it with LamValueError."""
    s = bytearray(_stream_of_distinct_rows())
    s[HEADER_SIZE + 8] = 0x80  # rows: new, then repeats of row 0 (w = 3 bits each) past the 8 mark bits
    for dec in BACKENDS:
        with pytest.raises(LamValueError, match="version 2"):
            codec_decode(_restamp(s), backend=dec)


@given(edits=st.lists(st.tuples(st.integers(0, 10**6), st.integers(0, 255)), min_size=1, max_size=3),
       cols=st.sampled_from([1, 16, 17]), strict=st.booleans(), cut=st.integers(0, 3))
def test_forged_streams_raise_lamvalueerror_only(edits, cols, strict, cut):
    """Any byte edit (header included, CRC recomputed) or cut: a decode or a LamValueError with a message
    naming the codec stream, never IndexError, MemoryError, struct.error or a partial array."""
    rng = np.random.default_rng(len(edits) * 7 + cols)
    rows = (0.05 * rng.normal(size=(3, cols))).astype(np.float32)
    x = rows[[0, 1, 0, 2, 1]].reshape(-1)
    b = bytearray(codec_encode(x, 1e-3, version=2, cols=cols, strict=strict))
    for where, value in edits:
        b[where % len(b)] = value
    forged = _restamp(b[: len(b) - cut] if cut < len(b) else b)
    outcomes = []
    for dec in BACKENDS:
        try:
            got = codec_decode(forged, backend=dec)
            outcomes.append(got.view(np.uint32).tobytes())
        except LamValueError as exc:
            assert "codec stream" in str(exc) or "codec" in str(exc), f"{dec}: unclear message {exc}"
            outcomes.append(None)
    assert len(set(outcomes)) == 1, "the C and reference decoders disagree on a forged stream"


def _strict_stream_with_exception() -> tuple[bytes, int]:
    """x = 0.5, 0.25 at eb = 0.1, strict: value 0 is an exception; returns the stream and the offset of
    its exception value (body: 1 class byte, a table, E, one index, one float32)."""
    s = codec_encode(np.array([0.5, 0.25], dtype=np.float32), 0.1, version=2, cols=1, strict=True)
    body = s[HEADER_SIZE:]
    a = struct.unpack_from("<H", body, 1)[0]
    at = HEADER_SIZE + 1 + 2 + (a + 1) // 2
    assert struct.unpack_from("<Q", s, at)[0] == 1, "this input has exactly one exception"
    return s, at + 8 + 8


@pytest.mark.parametrize("value,why", [
    (np.float32(0.6000000238418579), "equal to its plain reconstruction"),
    (np.float32(0.55), "within eb of its plain reconstruction"),
    (np.float32(0.3), "of another code (q = 2, not 3)"),
    (np.float32(np.nan), "not finite"),
])
def test_exceptions_the_encoder_never_writes_are_refused(value, why):
    """SPEC §9.6 / decision D-codec-exceptions: an exception is refused unless it is finite, quantizes to
    the stream's code and lies more than eb from its plain reconstruction. The old decoders refused only
    a value equal to the reconstruction (and not 0.55 or 0.3)."""
    s, at = _strict_stream_with_exception()
    for dec in BACKENDS:
        assert np.array_equal(codec_decode(s, backend=dec), np.array([0.5, 0.2], dtype=np.float32)), "the valid stream"
        forged = bytearray(s)
        forged[at : at + 4] = struct.pack("<f", value)
        with pytest.raises(LamValueError, match="exception"):
            codec_decode(_restamp(forged), backend=dec)
            pytest.fail(f"{dec}: an exception {why} was accepted")


def test_reference_decoder_memory_is_bounded_by_its_output():
    """The pure-Python decoder's peak (tracemalloc) is at most 16 bytes per value plus 2 MiB (its
    float64 chunk); it used to hold the bit stream as a list of Python ints (about 107 bytes a value)."""
    n = 60_000
    x = (0.01 * np.random.default_rng(5).normal(size=n)).astype(np.float32)
    s = codec_encode(x, 1e-3, version=2, cols=1)
    tracemalloc.start()
    try:
        codec_decode(s, backend="numpy")
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak <= 16 * n + 2 * 2**20, f"reference decoder peak {peak} bytes for {n} values ({peak / n:.1f} a value)"


_RSS_CHILD = """
import json, sys
from lam_ref.codec import codec_decode
def hwm():  # the peak resident set of this process image (VmHWM, reset by exec, unlike ru_maxrss)
    return 1024 * int(next(l for l in open("/proc/self/status") if l.startswith("VmHWM")).split()[1])
s = open(sys.argv[1], "rb").read()
base = hwm()
y = codec_decode(s, backend="c")
print(json.dumps({"n": int(y.size), "grown": hwm() - base}))
"""


@needs_c
@pytest.mark.skipif(sys.platform != "linux", reason="reads VmHWM from /proc/self/status (Linux)")
@pytest.mark.parametrize("cols,rows_from", [(1, None), (16, 50)])
def test_c_decoder_memory_is_bounded_by_its_output(tmp_path: Path, cols, rows_from):
    """The C decoder's peak resident growth is at most 8 bytes per value plus 8 MiB (the float32
    output is 4): it allocated 32 bytes a value (per-row tables even without row repeats), so a 24 MB
    stream peaked at 6.2 GB (issue 39 §2). Measured in a fresh process (VmHWM)."""
    n = 4_000_000
    rng = np.random.default_rng(9)
    if rows_from is None:
        x = (0.002 * rng.normal(size=n)).astype(np.float32)
    else:
        base = (0.05 * rng.normal(size=(rows_from, cols))).astype(np.float32)
        x = base[rng.integers(0, rows_from, size=n // cols)].reshape(-1)
    path = tmp_path / "s.bin"
    path.write_bytes(codec_encode(x, 1e-3, version=2, cols=cols, backend="c"))
    del x
    out = subprocess.run([sys.executable, "-c", _RSS_CHILD, str(path)], capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, f"the child failed: {out.stderr[-2000:]}"
    got = json.loads(out.stdout)
    assert got["n"] == n, f"decoded {got['n']} values, expected {n}"
    assert got["grown"] <= 8 * n + 8 * 2**20, f"C decoder grew {got['grown']} bytes for {n} values ({got['grown'] / n:.1f} a value)"


@pytest.mark.parametrize("version", [1, 2])
def test_overflow_edge_is_the_float32_rounding(version):
    """Decision D-codec-overflow (SPEC §9.4): a reconstruction overflows iff float32(fl64(q·2eb)) is
    infinite, i.e. |q·2eb| >= 2^128 - 2^103. Just below, FLT_MAX encodes and decodes to FLT_MAX."""
    flt_max = float(np.finfo(np.float32).max)
    edge = 2.0**128 - 2.0**103
    fine, over = float(np.nextafter(edge, 0.0)) / 2, edge / 2
    x = np.array([flt_max, -flt_max, 0.0], dtype=np.float32)
    for backend in BACKENDS:
        y = codec_decode(codec_encode(x, fine, version=version, backend=backend), backend=backend)
        assert np.array_equal(y, x), f"{backend}: q·2eb = {2 * fine!r} rounds to FLT_MAX and must round-trip, got {y}"
        with pytest.raises(LamValueError, match="too large|overflow"):
            codec_encode(x, over, version=version, backend=backend)
            pytest.fail(f"{backend}: q·2eb = 2^128 - 2^103 rounds to infinity and must be refused")


@pytest.mark.parametrize("cols", [1, 15, 16, 17, 300])
@pytest.mark.parametrize("strict", [False, True])
def test_empty_matrix_has_the_documented_body(cols, strict):
    """Decision D-codec-empty: n = 0 gives R = 0 (cols >= 16), cols classes all 0, one table with
    A = 0, E = 0 in strict mode, no bit stream; both decoders read it back as float32[0]."""
    want = (struct.pack("<Q", 0) if cols >= 16 else b"") + bytes(cols) + b"\x00\x00" + (bytes(8) if strict else b"")
    for backend in BACKENDS:
        s = codec_encode(np.zeros(0, dtype=np.float32), 1e-3, version=2, cols=cols, strict=strict, backend=backend)
        assert s[HEADER_SIZE:] == want, f"{backend}: the empty body is {s[HEADER_SIZE:].hex()}, docs/codec.md says {want.hex()}"
        got = codec_decode(s, backend=backend)
        assert got.dtype == np.float32 and got.shape == (0,), f"{backend}: decoded {got.dtype} {got.shape}"


def test_every_refusal_item_has_a_vector():
    """Decision D-codec-refusals / D-codec-vectors: every row of docs/codec.md's refusal table
    ("Canonical and refused") names a flag that at least one refused codec-v2 vector carries."""
    import re

    from lam_ref.conformance.vectors import load_vectors

    page = (Path(__file__).resolve().parents[1] / "docs" / "codec.md").read_text(encoding="utf-8")
    section = page.split("### Canonical and refused", 1)[1].split("\n\n*", 1)[0]
    rows = [line for line in section.splitlines() if line.startswith("| ") and not line.startswith("| the decoder")]
    flags = [re.findall(r"`([A-Z][A-Za-z0-9]+)`", row.rsplit("|", 2)[-2]) for row in rows]
    assert len(rows) >= 10 and all(flags), f"the refusal table lost its flag column: {rows}"
    refused = {f for v in load_vectors("codec-v2")["vectors"] if v["result"] == "invalid" for f in v["flags"]}
    missing = [(row[:60], fl) for row, fl in zip(rows, flags) if not set(fl) & refused]
    assert not missing, f"refusal items with no refused codec-v2 vector: {missing}"


@pytest.mark.parametrize("backend", BACKENDS)
def test_bit_order_of_repeat_indices_and_escape_bits(backend):
    """Decision D-codec-bit-order: every field most significant bit first, bytes filled from bit 7.
    Row marks of rows A, B, C, C (R = 3, index width 2): 1, 1, 1, 0 + index 2 as '10', then two zero
    padding bits: 0b11101000 (LSB-first indices would give 0b11100100). One value q = -2049 (zigzag
    4097, escape of bit length 13, the lone symbol's code '0'): '0' then the 12 raw bits
    000000000001, padded: 00 08 (LSB-first raw bits would give 40 00)."""
    rows = np.array([[1.0] * 16, [2.0] * 16, [3.0] * 16], dtype=np.float32)
    s = codec_encode(rows[[0, 1, 2, 2]].reshape(-1), 0.5, version=2, cols=16, backend=backend)
    assert struct.unpack_from("<Q", s, HEADER_SIZE)[0] == 3, "three distinct rows"
    assert s[HEADER_SIZE + 8] == 0b11101000, f"row marks {s[HEADER_SIZE + 8]:08b}, docs/codec.md says 11101000"
    e = codec_encode(np.array([-2049.0], dtype=np.float32), 0.5, version=2, cols=1, backend=backend)
    assert e[-2:] == b"\x00\x08", f"escape bits {e[-2:].hex()}, docs/codec.md says 0008"
    for dec in BACKENDS:
        assert codec_decode(e, backend=dec).tolist() == [-2049.0], f"{dec}: the escape decodes back"
