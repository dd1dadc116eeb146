"""Unit tests of the L2 codec (SPEC §9): the byte layout worked by hand, the rounding rule, the error
slack, and rejection of bad input and of corrupt or truncated streams."""

from __future__ import annotations

import struct
import zlib
from pathlib import Path

import numpy as np
import pytest

from lam_ref.codec import (
    HEADER_SIZE,
    Q_MAX,
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

# --------------------------------------------------------------------------------------------
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


# --------------------------------------------------------------------------------------------
# the rounding rule (docs/codec.md): q = floor(y) + (y - floor(y) >= 0.5), y = x / (2 eb) in float64


@pytest.mark.parametrize(
    "y, q",
    [(2.5, 3), (1.5, 2), (0.5, 1), (-0.5, 0), (-1.5, -1), (-2.5, -2), (0.49, 0), (-0.51, -1), (0.0, 0), (-0.0, 0)],
)
def test_round_half_up_ties(y, q):
    # eb = 0.5 makes y = x exactly; the expected q is round-half-up worked by hand
    got = int(codec_quantize(np.float32([y]), 0.5)[0])
    assert got == q, f"codec_quantize({y}) with eb=0.5 gave {got}, rule says {q}"


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


def test_within_error_bound_rejects_real_violations():
    x = np.float32([1.0, 2.0])
    bad = np.float32([1.0, 2.0 + 0.11])
    got = within_error_bound(x, bad, 0.1)
    assert got.tolist() == [True, False], f"an error of 0.11 at eb=0.1 must be flagged, got {got}"


# --------------------------------------------------------------------------------------------
# relative mode and ranges


def test_relative_eb_is_rel_times_max_abs():
    x = np.float32([0.5, -4.0, 2.0])
    assert relative_eb(x, 0.001) == 0.001 * 4.0, "eb = rel_eb * max|x| (float64)"
    assert relative_eb(np.zeros(3, np.float32), 0.01) == 0.01, "all-zero input uses rel_eb itself"
    assert codec_encode_rel(x, 0.001) == codec_encode(x, 0.004), "relative mode = absolute mode at rel*max|x|"


def test_rate_32_block_round_trips():
    # eb = 1 -> s = 2; x = +-2**31 -> q = +-2**30; deltas 2**31 alternate sign -> bit length 32
    x = np.array([2.0**31, -(2.0**31)] * 3, dtype=np.float32)
    b = codec_encode(x, 1.0)
    assert b[HEADER_SIZE] == 32, f"rate byte is {b[HEADER_SIZE]}, expected 32"
    assert np.array_equal(codec_decode(b), x), "rate-32 values must round-trip exactly (they are multiples of s)"


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


def test_block_size_validation():
    for bad in (0, 7, 12, 8192, 32.0):
        with pytest.raises(LamValueError, match="block_size"):
            codec_encode(np.float32([1.0]), 0.1, block_size=bad)


# --------------------------------------------------------------------------------------------
# corrupt and truncated streams: always an error, never a partial array


def test_every_truncation_is_rejected():
    for cut in range(len(HAND_STREAM)):
        with pytest.raises(LamValueError, match="truncated|corrupt"):
            codec_decode(HAND_STREAM[:cut])


def test_trailing_bytes_are_rejected():
    with pytest.raises(LamValueError, match="trailing"):
        codec_decode(HAND_STREAM + b"\x00")


def test_every_single_byte_corruption_is_rejected():
    for pos in range(len(HAND_STREAM)):
        for flip in (0x01, 0x80):
            bad = bytearray(HAND_STREAM)
            bad[pos] ^= flip
            with pytest.raises(LamValueError):
                codec_decode(bytes(bad))


def _restamp(head: bytes, body: bytes) -> bytes:
    return head + zlib.crc32(head + body).to_bytes(4, "little") + body


@pytest.mark.parametrize(
    "head, body, match",
    [
        (b"XXXX" + HAND_HEAD[4:], HAND_BODY, "magic"),
        (HAND_HEAD[:4] + b"\x02" + HAND_HEAD[5:], HAND_BODY, "version 2"),
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


def test_non_bytes_input_is_rejected():
    for bad in (None, 3.5, "LSZP", [1, 2, 3]):
        with pytest.raises(LamValueError, match="bytes-like"):
            codec_decode(bad)


def test_crafted_overflow_is_rejected():
    # a valid stream of q = 3 with eb raised to 1e38 (re-stamped): 6e38 overflows float32
    head = HAND_HEAD[:16] + struct.pack("<d", 1.0e38)
    with pytest.raises(LamValueError, match="overflow"):
        codec_decode(_restamp(head, HAND_BODY))


# --------------------------------------------------------------------------------------------
# storage report


def test_storage_report_counts_bytes():
    x = np.zeros((4, 8), dtype=np.float32)
    rep = storage_report(x, 0.001)
    # all-zero: 1 block of 32 values, rate 0 -> header + 1 rate byte, no payload
    assert rep.encoded_bytes == HEADER_SIZE + 1, f"encoded {rep.encoded_bytes} bytes"
    assert rep.raw_bytes == 128 and rep.ratio == 128 / (HEADER_SIZE + 1), f"report {rep}"
    assert rep.bound_holds and rep.max_abs_error == 0.0, f"zeros must be exact: {rep}"
    with pytest.raises(LamValueError, match="2-D"):
        storage_report(np.zeros(8, dtype=np.float32))
