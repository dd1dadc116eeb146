"""Unit tests of the L2 codec (SPEC §9): the byte layout worked by hand, the rounding rule, the error
slack, and rejection of bad input and of corrupt or truncated streams."""

from __future__ import annotations

import array
import re
import struct
import warnings
import zlib
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest

from lam_ref.codec import (
    HEADER_SIZE,
    Q_MAX,
    CuSZpPlain,
    codec_decode,
    codec_dequantize,
    codec_encode,
    codec_encode_rel,
    codec_quantize,
    error_slack,
    read_header,
    relative_eb,
    storage_report,
    within_error_bound,
)
from lam_ref.geometry import LamValueError

from .datagen import GenericNumpy

# ------------------------------------------------------------------------------------------------
# The hand-worked stream (docs/codec.md) and the header's fields and limits
# ------------------------------------------------------------------------------------------------


# The hand-worked stream: n = 40 values, eb = 0.5 (so s = 2*eb = 1 and y = x exactly), B = 32.
#
#   block 0 = x[0:32] = [2.5, -0.5, 1.0 x 30]
#     q (round half up):  2.5 -> 3,  -0.5 -> 0 (floor -1, frac 0.5 -> up),  1.0 -> 1
#     deltas (first against 0): 3, 0-3 = -3, 1-0 = 1, then 0 x 29
#     max |d| = 3 -> rate = bit_length(3) = 2
#     sign bitmap: only value 1 negative -> bit 6 of byte 0 -> 0x40 00 00 00
#     plane 0 (bit 0 of |d|): |d| = 3, 3, 1, 0... -> bits 1,1,1,0... -> 0xE0 00 00 00
#     plane 1 (bit 1 of |d|): bits 1,1,0,0...                        -> 0xC0 00 00 00
#   block 1 = x[32:40] = [-1.5, -1.0, 0.25 x 6], then 24 padding slots
#     q: -1.5 -> -1 (floor -2, frac 0.5 -> up), -1.0 -> -1, 0.25 -> 0
#     deltas: -1, 0, +1, 0 x 5, padding 0 x 24 -> rate 1
#     sign bitmap: value 0 negative -> 0x80 00 00 00
#     plane 0: |d| = 1, 0, 1, 0... -> bits 1,0,1,0... -> 0xA0 00 00 00
#   header: "LSZP", version 1, flags 0, block 32 (0x20 0x00), n = 40 (0x28, 7 zero bytes),
#           eb = 0.5 = 0x3FE0000000000000 little-endian -> 00 00 00 00 00 00 E0 3F,
#           then CRC-32 of (header[0:24] + body), little-endian
#   body: rates 02 01, block 0 payload (12 bytes), block 1 payload (8 bytes)
#   decoded: 3, 0, 1 x 30, -1, -1, 0 x 6 (every |x - x'| = 0.5 or less)
HAND_X = np.array([2.5, -0.5] + [1.0] * 30 + [-1.5, -1.0] + [0.25] * 6, dtype=np.float32)


HAND_HEAD = bytes.fromhex("4c535a50 01 00 2000 2800000000000000 000000000000e03f".replace(" ", ""))


HAND_BODY = bytes.fromhex("0201" + "40000000" + "e0000000" + "c0000000" + "80000000" + "a0000000")


HAND_STREAM = HAND_HEAD + zlib.crc32(HAND_HEAD + HAND_BODY).to_bytes(4, "little") + HAND_BODY


HAND_DECODED = np.array([3.0, 0.0] + [1.0] * 30 + [-1.0, -1.0] + [0.0] * 6, dtype=np.float32)


def test_hand_worked_stream_bytes():
    out = codec_encode(HAND_X, 0.5)
    assert out == HAND_STREAM, f"encoder bytes differ from the hand derivation:\n{out.hex()}\n{HAND_STREAM.hex()}"
    assert len(out) == HEADER_SIZE + 2 + 12 + 8, f"stream length {len(out)} is not header + 2 rates + 20 payload"


def test_hand_worked_stream_decodes():
    dec = codec_decode(HAND_STREAM)
    assert dec.dtype == np.float32 and dec.shape == (40,), f"decoded {dec.dtype} {dec.shape}"
    assert np.array_equal(dec, HAND_DECODED), f"decoded values differ from the hand derivation: {dec}"


def test_hand_worked_stream_is_the_committed_fixture():
    path = Path(__file__).resolve().parent / "fixtures" / "codec" / "c00_hand_two_blocks.bin"
    assert path.read_bytes() == HAND_STREAM, "fixture c00 differs from the hand-worked stream"


def test_header_fields():
    h = read_header(HAND_STREAM)
    assert (h.version, h.block_size, h.n, h.eb, h.blocks) == (1, 32, 40, 0.5, 2), f"header parsed as {h}"


def test_header_limits():
    """Block sizes 8 and 4096 are valid and 0 is not; ``eb`` must be positive with ``2·eb``
    finite (``eb = 6e307`` is valid, ``1e308`` and 0 are not)."""
    x = _f32(0.5, -0.25)
    for block in (8, 4096):
        assert np.array_equal(codec_decode(codec_encode(x, 0.125, block_size=block)), x), f"block {block}"
    assert codec_decode(codec_encode(_f32(0.0), 6e307)).tolist() == [0.0], "eb = 6e307: 2·eb is finite"
    blob = bytearray(codec_encode(x, 0.125))
    bad = bytearray(blob)
    struct.pack_into("<H", bad, 6, 0)
    with pytest.raises(LamValueError, match=r"^corrupt codec stream: block size 0 is not a multiple of 8"):
        codec_decode(_restamp_crc(bad))
    for eb in (0.0, 1e308):
        bad = bytearray(blob)
        struct.pack_into("<d", bad, 16, eb)
        with pytest.raises(LamValueError, match="^" + re.escape(f"corrupt codec stream: error bound eb = {eb!r} is not a positive")):
            codec_decode(_restamp_crc(bad))


# ------------------------------------------------------------------------------------------------
# The rounding rule (docs/codec.md): q = floor(y) + (y - floor(y) >= 0.5), y = x / (2 eb) in float64;
# dequantization in float32 of the float64 product; the error bound and its slack
# ------------------------------------------------------------------------------------------------


def _f32(*values: float) -> np.ndarray:
    return np.array(values, dtype=np.float32)


@pytest.mark.parametrize(
    "y, q",
    [(2.5, 3), (1.5, 2), (0.5, 1), (-0.5, 0), (-1.5, -1), (-2.5, -2), (0.49, 0), (-0.51, -1), (0.0, 0), (-0.0, 0)],
)
def test_round_half_up_ties(y, q):
    # eb = 0.5 makes y = x exactly; the expected q is round-half-up worked by hand
    got = int(codec_quantize(np.float32([y]), 0.5)[0])
    assert got == q, f"codec_quantize({y}) with eb=0.5 gave {got}, rule says {q}"


def test_quantize_rounds_half_up_by_hand():
    """``q = floor(y) + (y - floor(y) >= 0.5)`` with ``y = x / (2·eb)``: with ``eb = 0.25``
    (``s = 0.5``) the quotients are 2x, so 1.25 -> 2.5 -> 3, -1.25 -> -2.5 -> -2, 0.2 -> 0.4 -> 0."""
    q = codec_quantize(_f32(1.25, -1.25, 0.2, -0.3), 0.25)
    assert q.tolist() == [3, -2, 0, -1], f"round half up on 2x gave {q.tolist()}"
    assert q.dtype == np.int64, f"codes must be int64, got {q.dtype}"


def test_rounding_uses_float64_quotient_not_float32():
    # x = 0.30000001192092896 (float32 of 0.3), eb = 0.1: y = x/0.2 in float64 = 1.5000000596046448,
    # floor 1, frac 0.50000006 >= 0.5 -> q = 2. (A float32 quotient rounds y to exactly 1.5: same q;
    # the case that separates them is the largest float32 below a tie.)
    x = np.float32(0.3)
    assert int(codec_quantize(np.float32([x]), 0.1)[0]) == 2, "q of float32(0.3) at eb=0.1 must be 2"
    below = np.nextafter(np.float32(0.5), np.float32(0))  # 0.49999997 as float32
    # y = 0.49999997 / 1.0 exactly in float64 -> frac < 0.5 -> q = 0 (float32 cuSZp gives 1 here)
    assert int(codec_quantize(np.float32([below]), 0.5)[0]) == 0, "the largest float32 below 0.5 must round to 0"


def test_dequantize_is_float32_of_float64_product():
    # q = 3, eb = 0.1: float64 3 * 0.2 = 0.6000000000000001 -> float32 0.6000000238418579
    got = codec_dequantize(np.array([3]), 0.1)
    assert got.dtype == np.float32 and float(got[0]) == 0.6000000238418579, f"dequantize gave {got!r}"


def test_dequantize_overflow_is_silent_inf_and_decode_refuses_it():
    """``codec_dequantize`` returns ``inf`` for a code whose reconstruction leaves float32, without
    a RuntimeWarning (the caller reports it); ``codec_decode`` refuses such a stream by name."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        out = codec_dequantize(np.array([Q_MAX], dtype=np.int64), 1e30)
        assert np.isinf(out[0]) and out.dtype == np.float32, f"2**31 * 2e30 overflows float32: {out}"
        blob = codec_encode(_f32(1.0), 0.5)  # q = round_half_up(1.0) = 1
        head = bytearray(blob[:HEADER_SIZE])
        struct.pack_into("<d", head, 16, 1e300)  # eb = 1e300: 1 * 2e300 overflows float32
        body = blob[HEADER_SIZE:]
        import zlib

        struct.pack_into("<I", head, 24, zlib.crc32(body, zlib.crc32(bytes(head[:24]))))
        with pytest.raises(LamValueError, match=r"^corrupt codec stream: a reconstructed value overflows float32$"):
            codec_decode(bytes(head) + body)


def test_slack_is_needed_and_sufficient():
    # x = 0.5, eb = 0.1: y = 2.5 -> q = 3 -> x' = float32(0.6000000000000001) = 0.6000000238418579
    # |x - x'| = 0.1000000238418579 > eb = 0.1 (float32 rounding of the reconstruction), but within
    # eb + ulp32(0.6)/2 = 0.1 + 2**-24/2... ulp32(0.6) = 2**-24 = 5.96e-8, half = 2.98e-8.
    x = np.float32([0.5])
    dec = codec_decode(codec_encode(x, 0.1))
    err = abs(float(dec[0]) - 0.5)
    assert err > 0.1, f"the float32 reconstruction was expected to exceed eb here, error {err!r}"
    assert err - 0.1 <= 2.0**-25 + 2.0**-52 * 0.6, f"excess {err - 0.1!r} exceeds half an ulp of 0.6"
    assert bool(within_error_bound(x, dec, 0.1)[0]), "within_error_bound must accept the documented slack"
    assert float(error_slack(x, dec, 0.1)[0]) == pytest.approx(2.0**-25, rel=1e-6), "slack at 0.6 is ulp32/2"


def test_error_slack_by_the_formula():
    """``error_slack = ulp32(x')/2 + 2**-52·(|x| + eb)`` with ``ulp32`` the float32 spacing of
    the reconstruction even when it is passed as float64, and ``|x|`` the float32 input's value."""
    eb = 1e-3
    x = _f32(3.0, 1e-3)
    slack = error_slack(x, np.array([1.0, 0.0], dtype=np.float64), eb)
    expected = [
        float(Fraction(2**-23) / 2 + Fraction(1, 2**52) * (Fraction(3) + Fraction(eb))),
        float(Fraction(2**-149) / 2 + Fraction(1, 2**52) * (Fraction(float(np.float32(1e-3))) + Fraction(eb))),
    ]
    assert slack.dtype == np.float64, f"slack is float64, got {slack.dtype}"
    assert slack.tolist() == expected, f"slack {slack.tolist()} != {expected}"


def test_within_error_bound_rejects_real_violations():
    x = np.float32([1.0, 2.0])
    bad = np.float32([1.0, 2.0 + 0.11])
    got = within_error_bound(x, bad, 0.1)
    assert got.tolist() == [True, False], f"an error of 0.11 at eb=0.1 must be flagged, got {got}"


def test_within_error_bound_decides_exactly_near_the_bound():
    """Near the bound the float64 test is replaced by exact rational arithmetic: with ``x = 1``,
    ``x' = 0`` and ``eb = 1 - 2**-51`` the exact bound ``eb + 2**-150 + 2**-52·(1 + eb)`` is
    ``1 - 2**-103 + 2**-150 < 1`` (outside), although float64 rounds it to exactly 1. The same
    scaled by 2**30 (powers of two scale exactly) and the large-``x`` term of the bound: with
    ``x' = 2**25 - 4``, ``x = 2**25 - 2`` (float32 spacing 2, so ``ulp32/2 = 1``) the error 2
    is inside iff ``eb >= 1 - 2**-52·(2**25 - 2 + eb)``."""
    assert within_error_bound(_f32(1.0), _f32(0.0), 1.0 - 2.0**-51).tolist() == [False], "exact bound is below 1"
    assert within_error_bound(_f32(1.0), _f32(0.0), 1.0).tolist() == [True], "err = eb is inside"
    # eb = 1 - 2**-52: exact bound 1 + 2**-52 - 2**-104 + 2**-150 >= 1 (inside), while the sign of
    # eb in the 2**-52 term decides it: with |x| - eb it would be 1 - 2**-52 + 2**-104 + 2**-150 < 1
    assert within_error_bound(_f32(1.0), _f32(0.0), 1.0 - 2.0**-52).tolist() == [True], "inside by 2**-52 - 2**-104"
    big = 2.0**30
    assert within_error_bound(_f32(big), _f32(0.0), big * (1.0 - 2.0**-51)).tolist() == [False], "scaled: outside"
    x, xr = _f32(2.0**25 - 2), _f32(2.0**25 - 4)
    t = 2.0**-52 * (2.0**25 - 2 + 1)  # the 2**-52 term at eb ~ 1 (about 7.45e-9)
    assert within_error_bound(x, xr, 1.0 - 0.85 * t).tolist() == [True], "inside by 0.15 of the 2**-52 term"
    assert within_error_bound(x, xr, 1.0 - 1.15 * t).tolist() == [False], "outside by 0.15 of the 2**-52 term"
    assert within_error_bound(x, xr, 1.0 - 0.4 * t).tolist() == [True], "inside by 0.6 of the term"
    tiny = 2.0**-32
    assert within_error_bound(_f32(3 * tiny), _f32(0.0), tiny).tolist() == [False], "3·2**-32 is 2 bounds away"
    assert within_error_bound(_f32(2.0 + 2.0**-22), _f32(1.0), 1.0).tolist() == [False], "err 1 + 2**-22 > 1 + ulp/2"


def test_within_error_bound_flattens_and_takes_float32_values():
    """Both arrays are flattened (a 2x2 input gives 4 verdicts in C order) and read as float32:
    ``x = 0.5 + 2**-30`` given in float64 is the float32 value 0.5, inside ``eb = 0.5`` of 0, and
    so is a reconstruction given as ``0.5 + 2**-26``."""
    x = np.array([[0.0, 1.0], [2.0, 3.0]], dtype=np.float32)
    ok = within_error_bound(x, x + np.float32(0.25), 0.2)
    assert ok.shape == (4,) and not ok.any(), f"flattened verdicts, all outside: {ok}"
    ok = within_error_bound(x, x, 0.1)
    assert ok.shape == (4,) and ok.all(), f"flattened verdicts, all inside: {ok}"
    assert within_error_bound(np.array([0.5 + 2.0**-30]), np.zeros(1), 0.5).tolist() == [True], "x read as float32"
    # x' = 0.5 + 2**-26 in float64 is the float32 0.5 (spacing 2**-24): err 0.5 = eb + ulp32(0.5)/2 is
    # inside, err 0.5 + 2**-26 would not be
    assert within_error_bound(np.zeros(1), np.array([0.5 + 2.0**-26]), 0.5 - 2.0**-25).tolist() == [True], "x' as float32"
    with pytest.raises(LamValueError, match=r"^x and x_rec differ in size: 2 vs 3$"):
        within_error_bound(np.zeros(2), np.zeros(3), 0.1)


# ------------------------------------------------------------------------------------------------
# Relative mode, code ranges and inputs: what encode accepts, and each refusal naming the argument
# ------------------------------------------------------------------------------------------------


def test_relative_eb_is_rel_times_max_abs():
    x = np.float32([0.5, -4.0, 2.0])
    assert relative_eb(x, 0.001) == 0.001 * 4.0, "eb = rel_eb * max|x| (float64)"
    assert relative_eb(np.zeros(3, np.float32), 0.01) == 0.01, "all-zero input uses rel_eb itself"
    assert codec_encode_rel(x, 0.001) == codec_encode(x, 0.004), "relative mode = absolute mode at rel*max|x|"


def test_relative_mode_names_rel_eb_and_uses_the_block_size():
    """Relative mode: ``eb = rel_eb · max|x|`` (float64), ``rel_eb`` itself for an empty or
    all-zero input; a bad ``rel_eb`` is named; the block size reaches the stream, in both the
    CPU path and the array-module path (which must write the same bytes)."""
    x = _f32(0.5, -2.0, 1.0)
    assert relative_eb(x, 0.01) == 0.01 * 2.0, "rel_eb · max|x|"
    assert relative_eb(_f32(), 0.01) == 0.01 and relative_eb(_f32(0.0, 0.0), 0.01) == 0.01, "empty / zero: rel_eb"
    for call in (lambda: relative_eb(x, -1.0), lambda: codec_encode_rel(x, 0.0, xp=GenericNumpy())):
        with pytest.raises(LamValueError, match=r"^rel_eb must be"):
            call()
    for xp in (None, GenericNumpy()):
        blob = codec_encode_rel(x, 0.01, block_size=8, xp=xp)
        h = read_header(blob)
        assert (h.block_size, h.eb, h.n) == (8, 0.02, 3), f"xp={xp}: header {h}"
        zero = codec_encode_rel(_f32(0.0, 0.0), 0.01, xp=xp)
        assert read_header(zero).eb == 0.01, f"xp={xp}: all-zero input uses rel_eb itself"
        empty = codec_encode_rel(_f32(), 0.01, xp=xp)
        assert read_header(empty).n == 0 and read_header(empty).eb == 0.01, f"xp={xp}: empty input"


def test_rate_32_block_round_trips():
    # eb = 1 -> s = 2; x = +-2**31 -> q = +-2**30; deltas 2**31 alternate sign -> bit length 32
    x = np.array([2.0**31, -(2.0**31)] * 3, dtype=np.float32)
    b = codec_encode(x, 1.0)
    assert b[HEADER_SIZE] == 32, f"rate byte is {b[HEADER_SIZE]}, expected 32"
    assert np.array_equal(codec_decode(b), x), "rate-32 values must round-trip exactly (they are multiples of s)"


def test_largest_code_round_trips():
    """A code of exactly ``Q_MAX = 2**31 - 1`` is valid: it is encoded and decoded back."""
    eb = 1.0 / (2.0 * Q_MAX)  # x = 1 quantizes to 1 / (2eb) = 2**31 - 1
    assert codec_quantize(_f32(1.0), eb).tolist() == [Q_MAX], "1 / (2eb) rounds to Q_MAX"
    out = codec_decode(codec_encode(_f32(1.0, -1.0), eb))
    assert out.tolist() == [1.0, -1.0], f"Q_MAX codes reconstruct to ±1: {out}"


def test_code_range_is_enforced():
    with pytest.raises(LamValueError, match="too small"):
        codec_encode(np.float32([1.0]), 1e-12)  # |q| = 5e11 > Q_MAX
    ok = np.float32([Q_MAX * 2.0 * 0.5 - 1e3])  # float32 just under 2**31 - 1 with s = 1
    assert within_error_bound(ok, codec_decode(codec_encode(ok, 0.5)), 0.5).all(), "near Q_MAX must still work"
    with pytest.raises(LamValueError, match="overflow float32"):
        codec_encode(np.float32([3.0e38]), 1.0e38)  # y = 1.5 -> q = 2 -> 4e38 is not a float32


@pytest.mark.parametrize(
    "x, eb, match",
    [
        (np.float32([1.0, np.nan]), 0.1, r"x\[1\] is nan"),
        (np.float32([np.inf]), 0.1, r"x\[0\] is inf"),
        (np.float32([1.0]), 0.0, "eb must be a positive"),
        (np.float32([1.0]), -1.0, "eb must be a positive"),
        (np.float32([1.0]), float("nan"), "eb must be a positive"),
        (np.float32([1.0]), float("inf"), "eb must be a positive"),
        (np.float32([1.0]), True, "eb must be a positive"),
        (np.float32([1.0]), "0.1", "eb must be a positive"),
        (np.array([0.1], dtype=np.float64), 0.1, "not exactly representable in float32"),
        (np.array([2**25 + 1], dtype=np.int64), 0.1, "exceeds 2\\*\\*24 in magnitude"),
        (np.array(["a"]), 0.1, "must be a float32 array"),
        (b"\x00\x00\x80\x3f", 0.1, "must be a float32 array"),
    ],
)
def test_bad_input_is_rejected(x, eb, match):
    with pytest.raises(LamValueError, match=match):
        codec_encode(x, eb)


def test_exactly_representable_other_dtypes_are_accepted():
    a = np.array([0.5, -2.0, 3.0], dtype=np.float64)
    assert codec_encode(a, 0.1) == codec_encode(a.astype(np.float32), 0.1), "float64 holding float32 values"
    assert codec_encode([1, 2, 3], 0.1) == codec_encode(np.float32([1, 2, 3]), 0.1), "small ints are exact"


def test_input_dtypes_by_the_rules():
    """float32 is taken as is; other floats only if every value is a float32 (``0.1`` in float64
    is not), an overflow to float32 is refused without a RuntimeWarning; integers (also 32-bit)
    only within ``±2**24`` (``2**24`` itself is exact, ``2**24 + 1`` and ``2**25`` are refused);
    the first bad index is named; an empty integer array is valid; a non-array is named by type."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for bad, idx in ((np.array([0.5, 0.1]), 1), (np.array([1e300]), 0)):
            with pytest.raises(LamValueError, match=rf"^x must be float32; got dtype float64 whose value (0\.1|1e\+300) at index {idx} is not exactly"):
                codec_encode(bad, 0.1)
    for dtype in (np.int32, np.uint32, np.int64):
        ok = np.array([2**24, 100, 0], dtype=dtype)
        assert codec_encode(ok, 0.5) == codec_encode(ok.astype(np.float32), 0.5), f"{dtype.__name__} within 2**24"
        for big in (2**24 + 1, 2**25):
            with pytest.raises(LamValueError, match=rf"^x must be float32; got dtype {np.dtype(dtype).name} whose value {big} at index 1 exceeds 2\*\*24"):
                codec_encode(np.array([1, big], dtype=dtype), 0.5)
    assert read_header(codec_encode(np.zeros(0, dtype=np.int64), 0.1)).n == 0, "an empty integer array"
    with pytest.raises(LamValueError, match=r"^x must be a float32 array, got bytes \(use codec_decode for bytes\)$"):
        codec_encode(b"\x00\x00\x80\x3f", 0.1)


def test_block_size_validation():
    for bad in (0, 7, 12, 8192, 32.0):
        with pytest.raises(LamValueError, match="block_size"):
            codec_encode(np.float32([1.0]), 0.1, block_size=bad)


def test_block_size_messages():
    """``block_size`` is named: a negative one is out of ``[8, 4096]``, a string is not an integer."""
    with pytest.raises(LamValueError, match=r"^block_size must be a multiple of 8 in \[8, 4096\], got -8$"):
        codec_encode(_f32(1.0), 0.1, block_size=-8)
    with pytest.raises(LamValueError, match=r"^block_size must be an integer"):
        codec_encode(_f32(1.0), 0.1, block_size="8")
    with pytest.raises(LamValueError, match=r"^block_size must be a multiple of 8 in \[8, 4096\], got 4104$"):
        codec_encode(_f32(1.0), 0.1, block_size=4104)


def test_error_bound_limits_at_encode():
    """``eb`` must leave ``2·eb`` finite (``1e308`` is refused at encode, naming ``eb``), and a
    reconstruction that would reach float32's overflow threshold ``2**128 - 2**103`` exactly is
    refused: with ``eb = 2**127 - 2**102`` the largest float32 quantizes to ``q = 1`` and
    ``q·2eb = 2**128 - 2**103`` rounds to ``inf`` in float32."""
    with pytest.raises(LamValueError, match=r"^eb must be a positive finite number \(and 2\*eb finite\), got 1e\+308$"):
        codec_encode(_f32(1.0), 1e308)
    big = float(np.finfo(np.float32).max)
    eb = 2.0**127 - 2.0**102
    with pytest.raises(LamValueError, match=r"^eb = .* is too large: a reconstruction q\*2\*eb would overflow float32$"):
        codec_encode(_f32(big), eb)


def test_array_module_path_flattens_2d_input():
    """With an array module, a 2-D float32 input is flattened in C order like the CPU path."""
    x = np.arange(12, dtype=np.float32).reshape(3, 4) / 7
    assert codec_encode(x, 0.01, xp=GenericNumpy()) == codec_encode(x, 0.01), "2-D input through xp"


# ------------------------------------------------------------------------------------------------
# Corrupt and truncated streams: always an error, never a partial array
# ------------------------------------------------------------------------------------------------


def test_every_truncation_is_rejected():
    for cut in range(len(HAND_STREAM)):
        with pytest.raises(LamValueError, match="truncated|corrupt"):
            codec_decode(HAND_STREAM[:cut])


def test_trailing_bytes_are_rejected():
    with pytest.raises(LamValueError, match="trailing"):
        codec_decode(HAND_STREAM + b"\x00")


def test_stream_length_messages():
    """Truncation and trailing bytes are reported with the byte counts of the format: header 28
    bytes plus one rate byte per block, ``(r + 1)·B/8`` payload bytes per block of rate ``r > 0``."""
    x = _f32(1.0, 2.0, 3.0)  # eb = 0.25: q = 2x = 2, 4, 6, deltas 2, 2, 2: one block of rate 2
    blob = codec_encode(x, 0.25)
    assert len(blob) == HEADER_SIZE + 1 + 3 * 4, f"by hand: 28 + 1 rate byte + (2 + 1)·32/8 payload, got {len(blob)}"
    with pytest.raises(LamValueError, match=r"^truncated codec stream: 28 bytes, header and 1 rate bytes need 29$"):
        codec_decode(blob[:HEADER_SIZE])
    with pytest.raises(LamValueError, match=r"^truncated codec stream: payload has 11 bytes, the rate bytes announce 12$"):
        codec_decode(blob[:-1])
    with pytest.raises(LamValueError, match=r"^corrupt codec stream: 2 trailing bytes after the payload \(12 expected\)$"):
        codec_decode(blob + b"\0\0")
    flipped = bytearray(blob)
    flipped[-1] ^= 1
    with pytest.raises(LamValueError, match=r"^corrupt codec stream: CRC-32 is 0x[0-9a-f]{8}, the header says 0x"):
        codec_decode(bytes(flipped))
    rates = bytearray(codec_encode(np.zeros(64, np.float32), 0.25))  # two blocks of rate 0
    rates[HEADER_SIZE : HEADER_SIZE + 2] = bytes([32, 33])
    with pytest.raises(LamValueError, match=r"^corrupt codec stream: block 1 has rate 33 > 32$"):
        codec_decode(bytes(rates))


def test_every_single_byte_corruption_is_rejected():
    for pos in range(len(HAND_STREAM)):
        for flip in (0x01, 0x80):
            bad = bytearray(HAND_STREAM)
            bad[pos] ^= flip
            with pytest.raises(LamValueError):
                codec_decode(bytes(bad))


def _restamp(head: bytes, body: bytes) -> bytes:
    return head + zlib.crc32(head + body).to_bytes(4, "little") + body


def _restamp_crc(blob: bytearray) -> bytes:
    """Recompute the CRC-32 of a hand-edited stream (bytes [0, 24) then the body)."""
    import zlib

    struct.pack_into("<I", blob, 24, zlib.crc32(bytes(blob[HEADER_SIZE:]), zlib.crc32(bytes(blob[:24]))))
    return bytes(blob)


@pytest.mark.parametrize(
    "head, body, match",
    [
        (b"XXXX" + HAND_HEAD[4:], HAND_BODY, "magic"),
        (HAND_HEAD[:4] + b"\x03" + HAND_HEAD[5:], HAND_BODY, "version 3"),
        (HAND_HEAD[:5] + b"\x01" + HAND_HEAD[6:], HAND_BODY, "flags"),
        (HAND_HEAD[:6] + b"\x0c\x00" + HAND_HEAD[8:], HAND_BODY, "block size 12"),
        (HAND_HEAD[:16] + struct.pack("<d", -0.5), HAND_BODY, "eb = -0.5"),
        (HAND_HEAD[:16] + struct.pack("<d", float("nan")), HAND_BODY, "eb = nan"),
        (HAND_HEAD, bytes([33]) + HAND_BODY[1:], "rate 33"),
        # rate byte 3 for block 0 (plane 2 all zero) with a re-stamped CRC: non-canonical
        (HAND_HEAD, b"\x03\x01" + HAND_BODY[2:14] + b"\x00" * 4 + HAND_BODY[14:], "non-canonical"),
        # a sign bit on a zero delta (value 3 of block 0) with a re-stamped CRC
        (HAND_HEAD, HAND_BODY[:2] + b"\x50" + HAND_BODY[3:], "sign bit on a zero delta"),
        # padding slot 8 of block 1 carries a magnitude bit
        (HAND_HEAD, HAND_BODY[:18] + b"\xa0\x80\x00\x00", "padding"),
    ],
)
def test_structurally_corrupt_streams_are_rejected(head, body, match):
    with pytest.raises(LamValueError, match=match):
        codec_decode(_restamp(head, body))


def test_decode_names_the_corrupt_block_and_the_padding():
    """A sign bit on a zero delta is reported for the block where it is (block 1 here; block 0
    has a zero delta without a sign and no negative delta); non-zero padding is reported as such."""
    x = np.array([1, 1, 2, 3, 4, 5, 6, 7] + [1] * 8, dtype=np.float32)  # two blocks of 8
    blob = bytearray(codec_encode(x, 0.25, block_size=8))  # q = 2x; deltas 2,0,2,2,... and 2,0,0,...
    rates = blob[HEADER_SIZE : HEADER_SIZE + 2]
    assert list(rates) == [2, 2], f"rates by hand: largest delta 2 in both blocks (bit length 2): {list(rates)}"
    sign1 = HEADER_SIZE + 2 + 3  # block 0's payload: sign byte + 2 planes (1 byte each at B = 8)
    assert blob[sign1] == 0 and blob[sign1 + 2] == 0b1000_0000, f"block 1 by hand: {bytes(blob[sign1:])!r}"
    blob[sign1] |= 0b0100_0000  # sign of value 1 of block 1, whose delta is 0
    import zlib

    struct.pack_into("<I", blob, 24, zlib.crc32(bytes(blob[HEADER_SIZE:]), zlib.crc32(bytes(blob[:24]))))
    with pytest.raises(LamValueError, match=r"^corrupt codec stream: block 1 has a sign bit on a zero delta"):
        codec_decode(bytes(blob))
    pad = bytearray(codec_encode(_f32(1.0), 0.25, block_size=8))  # one value, q = 2: rate 2
    pad[HEADER_SIZE + 1 + 1] |= 0b0100_0000  # plane 0 of value 1 (padding): |d| becomes odd there
    struct.pack_into("<I", pad, 24, zlib.crc32(bytes(pad[HEADER_SIZE:]), zlib.crc32(bytes(pad[:24]))))
    with pytest.raises(LamValueError, match=r"^corrupt codec stream: the padding of the last block is not zero$"):
        codec_decode(bytes(pad))


def test_non_bytes_input_is_rejected():
    for bad in (None, 3.5, "LSZP", [1, 2, 3]):
        with pytest.raises(LamValueError, match="bytes-like"):
            codec_decode(bad)


def test_decode_accepts_every_bytes_like_layout():
    """The stream may come as signed or string byte arrays, a non-contiguous memoryview, a 2-D
    memoryview or one of another item format (it is read as its raw bytes); a float array or a
    non-buffer is refused, naming its dtype or type."""
    x = _f32(0.25, -1.5, 3.0, 0.0, 7.0)
    blob = codec_encode(x, 0.01)
    ref = codec_decode(blob)
    while len(blob) % 4:  # a stream whose length is a multiple of 4 (for the 'I' view)
        x = np.append(x, np.float32(1.0))
        blob, ref = codec_encode(x, 0.01), codec_decode(codec_encode(x, 0.01))
    rows = 2 if len(blob) % 2 == 0 else 1
    strided = np.zeros(2 * len(blob), dtype=np.uint8)
    strided[::2] = np.frombuffer(blob, dtype=np.uint8)
    layouts = {
        "int8 array": np.frombuffer(blob, dtype=np.int8),
        "S1 array": np.frombuffer(blob, dtype="S1"),
        "strided memoryview": memoryview(strided)[::2],
        "2-D memoryview": memoryview(blob).cast("B", shape=[rows, len(blob) // rows]),
        "uint32 memoryview": memoryview(blob).cast("I"),
    }
    for name, buf in layouts.items():
        assert np.array_equal(codec_decode(buf), ref), f"{name}: decoded values differ"
    with pytest.raises(LamValueError, match=r"^b must be bytes-like, got an array of dtype float64$"):
        codec_decode(np.zeros(8))
    with pytest.raises(LamValueError, match=r"^b must be bytes-like \(bytes, bytearray, memoryview\), got int$"):
        codec_decode(12345)


def test_crafted_overflow_is_rejected():
    # a valid stream of q = 3 with eb raised to 1e38 (re-stamped): 6e38 overflows float32
    head = HAND_HEAD[:16] + struct.pack("<d", 1.0e38)
    with pytest.raises(LamValueError, match="overflow"):
        codec_decode(_restamp(head, HAND_BODY))


# ------------------------------------------------------------------------------------------------
# The storage report
# ------------------------------------------------------------------------------------------------


def test_storage_report_counts_bytes():
    x = np.zeros((4, 8), dtype=np.float32)
    rep = storage_report(x, 0.001)
    # all-zero: 1 block of 32 values, rate 0 -> header + 1 rate byte, no payload
    assert rep.encoded_bytes == HEADER_SIZE + 1, f"encoded {rep.encoded_bytes} bytes"
    assert rep.raw_bytes == 128 and rep.ratio == 128 / (HEADER_SIZE + 1), f"report {rep}"
    assert rep.bound_holds and rep.max_abs_error == 0.0, f"zeros must be exact: {rep}"
    with pytest.raises(LamValueError, match="2-D"):
        storage_report(np.zeros(8, dtype=np.float32))


def test_storage_report_fields_by_hand():
    """The report of a 2x3 matrix in relative mode: counts, ``eb = rel_eb · max|x|``, raw bytes
    ``4·N·D``, the encoded length, the largest error (recomputed here) and the verdict; an
    empty matrix reports zero error; a non-finite value is named in ``embeddings``."""
    e = np.array([[0.1, -0.7, 0.3], [0.25, 0.5, -0.05]], dtype=np.float32)
    rep = storage_report(e, rel_eb=0.01)
    blob = codec_encode(e.reshape(-1), 0.01 * float(np.float32(0.7)))
    dec = codec_decode(blob)
    err = float(np.max(np.abs(dec.astype(np.float64) - e.reshape(-1).astype(np.float64))))
    assert (rep.vectors, rep.dim, rep.rel_eb) == (2, 3, 0.01), f"shape and rel_eb: {rep}"
    assert rep.eb == 0.01 * float(np.float32(0.7)), f"eb = rel_eb · max|x|: {rep.eb}"
    assert (rep.raw_bytes, rep.encoded_bytes) == (24, len(blob)), f"bytes: {rep}"
    assert rep.max_abs_error == err and 0.0 < err <= rep.eb * (1 + 1e-6), f"max error {rep.max_abs_error} vs {err}"
    assert rep.bound_holds is True and rep.to_json()["ratio"] == 24 / len(blob), f"verdict and ratio: {rep}"
    empty = storage_report(np.zeros((0, 4), dtype=np.float32))
    assert (empty.vectors, empty.dim, empty.max_abs_error, empty.raw_bytes) == (0, 4, 0.0, 0), f"empty: {empty}"
    with pytest.raises(LamValueError, match=r"^embeddings\[4\] is nan"):
        storage_report(np.array([[0.0, 1.0, 2.0], [3.0, np.nan, 5.0]], dtype=np.float32))


# ------------------------------------------------------------------------------------------------
# The numcodecs codec class (CuSZpPlain): its modes, names and buffers
# ------------------------------------------------------------------------------------------------


def test_numcodecs_codec_modes_and_names():
    """``CuSZpPlain``: absolute mode keeps ``rel_eb`` unset; relative mode keeps the given
    ``rel_eb`` and uses it (and the block size) when encoding; bad bounds are named."""
    a = CuSZpPlain(eb=0.1)
    assert (a.eb, a.rel_eb) == (0.1, None), f"absolute mode: {a.eb}, {a.rel_eb}"
    r = CuSZpPlain(rel_eb=0.01, block_size=8)
    assert (r.eb, r.rel_eb) == (None, 0.01), f"relative mode: {r.eb}, {r.rel_eb}"
    h = read_header(r.encode(_f32(0.5, -2.0, 1.0)))
    assert (h.eb, h.block_size) == (0.02, 8), f"rel_eb · max|x| and the block size reach the stream: {h}"
    h = read_header(CuSZpPlain(eb=0.1, block_size=16).encode(_f32(0.5, -2.0, 1.0)))
    assert (h.eb, h.block_size) == (0.1, 16), f"absolute mode: {h}"
    assert CuSZpPlain().rel_eb == 0.001, "default: rel_eb = 0.001"
    with pytest.raises(LamValueError, match=r"^rel_eb must be"):
        CuSZpPlain(rel_eb=-1.0)
    with pytest.raises(LamValueError, match=r"^eb must be"):
        CuSZpPlain(eb=0.0)


def test_numcodecs_buffers():
    """``encode`` names a bad value ``buf[i]`` (float32 array or raw bytes), reads bytes-like
    objects of 1-byte items as raw bytes, refuses a numpy array of any other dtype (1-byte
    ``u1``/``i1``/``S1``/``V1`` arrays included: issue 23 §4, never reinterpreted) and an object
    array (TypeError); ``decode`` reads a Fortran-ordered byte buffer in memory order."""
    c = CuSZpPlain(eb=0.01)
    with pytest.raises(LamValueError, match=r"^buf\[1\] is nan"):
        c.encode(_f32(0.0, np.nan))
    raw = _f32(1.0, np.inf).tobytes()
    with pytest.raises(LamValueError, match=r"^buf\[1\] is inf"):
        c.encode(raw)
    x = _f32(0.25, -1.5, 3.0, 0.0)
    ref = codec_encode(x, 0.01)
    for buf in (x.tobytes(), bytearray(x.tobytes()), memoryview(x.tobytes()), array.array("b", x.tobytes())):
        assert c.encode(buf) == ref, f"a {type(buf).__name__} is read as raw little-endian float32"
    for dtype in ("S1", "V1", "u1", "i1", "int32"):
        buf = np.frombuffer(x.tobytes(), dtype=dtype)
        with pytest.raises(LamValueError, match=rf"^buf must be a float32 numpy array, got dtype {buf.dtype}; "):
            c.encode(buf)
    with pytest.raises(TypeError, match=r"^CuSZpPlain cannot encode an object array$"):
        c.encode(np.array([1.0, None], dtype=object))
    blob = ref
    rows = next(d for d in range(2, len(blob)) if len(blob) % d == 0)
    fortran = np.frombuffer(blob, dtype=np.uint8).reshape(rows, -1, order="F")
    assert fortran.flags.f_contiguous and not fortran.flags.c_contiguous, "a Fortran-ordered 2-D buffer"
    assert np.array_equal(c.decode(fortran), codec_decode(blob)), "decode reads the buffer in memory order"
