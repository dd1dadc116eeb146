"""Checks of the area ``codec``: the L2 error-bounded codec (SPEC §9; the SPEC item ``L2``).

The error bound with its one tolerance (:func:`codec_slack`), deterministic bytes, input forms
(empty, strided, read-only, big-endian vectors; fresh decoded arrays), codes near 2³¹, and the
byte format version 1 (profile ``codec-v1``), written out here (:func:`v1_stream`, the worked
example ``HAND_*`` of docs/codec.md) and on docs/codec.md — never taken from the implementation
under test.
"""

from __future__ import annotations

import struct
import zlib
from typing import Any

import numpy as np

from ...codec import codec_encode as _ref_encode
from ..asserts import accepts
from ..differential import MAY_REFUSE, declares, differential, edge_inputs, encoder_cases, outcome, v2_inputs
from ..harness import Context, check
from ..strategies import codec_inputs
from ..vectors import codec_boundaries as cb


def codec_slack(x: np.ndarray, y: np.ndarray, eb: float) -> np.ndarray:
    """Allowed excess over ``eb`` per value: the one tolerance of SPEC §9.3.

    One float32 ulp of ``max(|x|, |y|)`` (the reconstruction's rounding, computed in float32 or
    float64) plus ``2**-50·(|x| + eb)`` for float64 roundings of the quotient and product. lam_ref's
    own codec guarantees the tighter ``ulp32(y)/2 + 2**-52·(|x| + eb)`` (:func:`lam_ref.codec.error_slack`);
    the suite accepts any implementation within one ulp.
    """
    mag = np.maximum(np.abs(x.astype(np.float32)), np.abs(y.astype(np.float32)))
    return np.spacing(mag).astype(np.float64) + 2.0**-50 * (np.abs(x.astype(np.float64)) + eb)


def _roundtrip(impl: Any, x: np.ndarray, eb: float) -> tuple[bytes, np.ndarray]:
    before = x.copy()
    blob = impl.codec_encode(x, eb)
    assert np.array_equal(x, before, equal_nan=True), "codec_encode modified its input"
    assert isinstance(blob, (bytes, bytearray)), f"codec_encode must return bytes, got {type(blob).__name__}"
    y = impl.codec_decode(bytes(blob))
    assert isinstance(y, np.ndarray) and y.dtype == np.float32, (
        f"codec_decode must return a float32 array, got {type(y).__name__} {getattr(y, 'dtype', '')}"
    )
    assert y.shape == x.shape, f"codec_decode returned shape {y.shape} for an input of shape {x.shape}"
    return bytes(blob), y


@check("codec.error_bound", claim="L2", spec="§9 |x - decode(encode(x))| <= eb (+ float32 rounding)", parts=("codec",), profiles=("codec-bound", "codec-v1"), shown_to_fail_on=("m16_codec_truncation",))
def check_codec_error_bound(impl: Any, ctx: Context) -> None:
    """Every decoded value keeps the SPEC §9.3 bound: eb plus one float32 ulp plus a float64 term."""

    def body(case: Any) -> None:
        x, eb = case.x, case.eb
        _, y = _roundtrip(impl, x, eb)
        err = np.abs(x.astype(np.float64) - y.astype(np.float64))
        allowed = eb + codec_slack(x, y, eb)
        bad = np.flatnonzero(~(err <= allowed))
        assert bad.size == 0, (
            f"{case.kind} input, n = {x.size}, eb = {eb!r}: |x - y| = {err[bad[0]]!r} at index {bad[0]} "
            f"(x = {float(x[bad[0]])!r}, y = {float(y[bad[0]])!r}) exceeds eb + one float32 ulp = "
            f"{allowed[bad[0]]!r} (SPEC §9); {bad.size} value(s) out of bound, worst excess "
            f"{float(np.max(err[bad] - eb)) / eb:.3g}·eb"
        )

    ctx.run(codec_inputs(), body, examples=120)


@check("codec.deterministic", claim="L2", spec="§9 deterministic bytes; decoding is a pure function", parts=("codec",), profiles=("codec-bound", "codec-v1"), shown_to_fail_on=("m20_codec_timestamp",))
def check_codec_deterministic(impl: Any, ctx: Context) -> None:
    """Encoding the same vector twice gives identical bytes; decoding them twice gives identical values."""

    def body(case: Any) -> None:
        blob1, y1 = _roundtrip(impl, case.x, case.eb)
        blob2, y2 = _roundtrip(impl, case.x.copy(), case.eb)
        assert blob1 == blob2, f"two encodings of the same {case.kind} vector differ ({len(blob1)} vs {len(blob2)} bytes)"
        assert np.array_equal(y1.view(np.uint32), y2.view(np.uint32)), "two decodings of the same bytes differ"

    ctx.run(codec_inputs(max_n=120), body, examples=30)


def _decoded(impl: Any, x: np.ndarray, eb: float, what: str) -> np.ndarray:
    blob = accepts(lambda: impl.codec_encode(x, eb), f"codec_encode of {what}")
    assert isinstance(blob, (bytes, bytearray)), f"codec_encode must return bytes, got {type(blob).__name__}"
    y = accepts(lambda: impl.codec_decode(bytes(blob)), f"codec_decode of the encoding of {what}")
    assert isinstance(y, np.ndarray) and y.dtype == np.float32 and y.shape == (x.size,), (
        f"codec_decode of {what} must return float32[{x.size}], got {type(y).__name__} {getattr(y, 'dtype', '')} "
        f"{getattr(y, 'shape', '')}"
    )
    return y


def _bound_violation(x: np.ndarray, y: np.ndarray, eb: float) -> str | None:
    err = np.abs(x.astype(np.float64) - y.astype(np.float64))
    bad = np.flatnonzero(~(err <= eb + codec_slack(x, y, eb)))
    if not bad.size:
        return None
    i = int(bad[0])
    return f"|x - y| = {err[i]!r} at index {i} (x = {float(x[i])!r}, y = {float(y[i])!r}) exceeds eb = {eb!r} plus slack"


@check("codec.input_forms", claim="L2",
       spec="§9.4 the empty vector, one value, strided / read-only / big-endian vectors; decoded arrays are fresh",
       parts=("codec",), profiles=("codec-bound", "codec-v1"), shown_to_fail_on=("m42_codec_empty_crash",))
def check_codec_input_forms(impl: Any, ctx: Context) -> None:
    """codec_encode(float32[0], eb) decodes to float32[0]; a vector in any layout encodes to the bytes of
    its C-contiguous copy; a decoded array does not change when the next decode runs."""
    for x, eb in ((np.zeros(0, np.float32), 1e-3), (np.zeros(0, np.float32), 0.5), (np.array([0.25], np.float32), 1e-3)):
        ctx.note({"x": x, "eb": eb})
        y = _decoded(impl, x, eb, f"a vector of {x.size} value(s)")
        problem = _bound_violation(x, y, eb)
        assert problem is None, f"n = {x.size}: {problem} (SPEC §9.3)"
    x = np.linspace(-3.0, 5.0, 77).astype(np.float32)
    eb = 1e-3
    plain = bytes(impl.codec_encode(x.copy(), eb))
    big = np.full(2 * x.size, 9.0, dtype=np.float32)
    big[::2] = x
    ro = x.copy()
    ro.setflags(write=False)
    for name, arr in (("strided", big[::2]), ("read-only", ro), ("big-endian", x.astype(">f4")), ("reversed twice", x[::-1].copy()[::-1])):
        ctx.note({"case": name, "x": np.array(arr), "eb": eb})
        if name == "big-endian":  # SPEC §2.4: MAY be refused with ValueError; if accepted, the same bytes
            try:
                got = impl.codec_encode(arr, eb)
            except ValueError:
                continue
        else:
            got = accepts(lambda arr=arr: impl.codec_encode(arr, eb), f"codec_encode of a {name} vector (SPEC §9.4)")
        assert bytes(got) == plain, f"codec_encode of a {name} vector gave other bytes than its C-contiguous copy (SPEC §2.4, §9.4)"
    first = impl.codec_decode(plain)
    kept = np.array(first, copy=True)
    impl.codec_decode(bytes(impl.codec_encode(-x, eb)))
    assert np.array_equal(np.asarray(first).view(np.uint32), kept.view(np.uint32)), (
        "a decoded array changed when the next codec_decode ran: decode must return a fresh array (SPEC §2.4)"
    )


def _declares(impl: Any, profile: str) -> bool:
    return profile in (getattr(impl, "profiles", None) or ())


@check("codec.large_quotients", claim="L2",
       spec="§9.4 codes near 2³¹ keep the bound; codec-v1 refuses |q| > 2³¹ - 1 (just outside)",
       parts=("codec",), profiles=("codec-bound", "codec-v1"), shown_to_fail_on=("m41_codec_float32_quantizer",))
def check_codec_large_quotients(impl: Any, ctx: Context) -> None:
    """|x|/(2eb) up to 2³¹ - 2 with neighbours of opposite sign (deltas near 2³²): within the bound;
    one code past 2³¹ - 1 is refused by codec-v1 and, by codec-bound, refused or kept within the bound."""
    q_max = 2**31 - 1
    rng = np.random.default_rng(31)
    x = rng.uniform(-1.0, 1.0, 200).astype(np.float32)
    x[:4] = [1.0, -1.0, 1.0, -0.99999994]
    s = 1.0 / (q_max - 1)  # so that |q| = round(|x|/s) <= 2**31 - 2
    eb = s / 2.0
    ctx.note({"x": x, "eb": eb})
    y = _decoded(impl, x, eb, f"{x.size} values with |x|/(2eb) up to 2**31 - 2")
    problem = _bound_violation(x, y, eb)
    assert problem is None, f"codes near 2**31: {problem} (SPEC §9.3; compute the quotient in float64)"
    for scale, what in ((1e30, "magnitudes near 1e30"), (1e-30, "magnitudes near 1e-30")):
        xs = (x * np.float32(scale)).astype(np.float32)
        ebs = float(np.max(np.abs(xs.astype(np.float64)))) / 2**30
        ys = _decoded(impl, xs, ebs, what)
        problem = _bound_violation(xs, ys, ebs)
        assert problem is None, f"{what}, |x|/(2eb) near 2**29: {problem} (SPEC §9.3)"
    over = np.array([0.0, 1.0], dtype=np.float32)
    eb_over = 1.0 / (2.0 * (q_max + 1))  # 1.0/(2eb) = 2**31 exactly: one past the v1 range
    try:
        blob = impl.codec_encode(over, eb_over)
    except ValueError:
        return
    assert not _declares(impl, "codec-v1"), (
        f"codec_encode([0, 1], eb = {eb_over!r}) needs the code 2**31 > 2**31 - 1 and must be refused with ValueError "
        "(profile codec-v1, SPEC §9.4)"
    )
    y = impl.codec_decode(bytes(blob))
    problem = _bound_violation(over, np.asarray(y), eb_over)
    assert problem is None, f"a code past 2**31 was accepted but {problem} (SPEC §9.4: refuse or keep the bound)"


# the normative v1 format (docs/codec.md "Byte format (version 1)"), written out here --------------
V1_HEAD = struct.Struct("<4sBBHQd")


def v1_stream(block: int, n: int, eb: float, rates: bytes, payload: bytes, *, magic: bytes = b"LSZP",
              version: int = 1, flags: int = 0, crc: int | None = None) -> bytes:
    """A version-1 stream from its fields, CRC-32 computed unless given (docs/codec.md)."""
    head = V1_HEAD.pack(magic, version, flags, block, n, eb)
    body = rates + payload
    value = zlib.crc32(head + body) if crc is None else crc
    return head + struct.pack("<I", value) + body


#: docs/codec.md's worked example: n = 40, eb = 0.5, x = [2.5, -0.5, 1.0 x30, -1.5, -1.0, 0.25 x6].
HAND_X = np.array([2.5, -0.5] + [1.0] * 30 + [-1.5, -1.0] + [0.25] * 6, dtype=np.float32)


HAND_STREAM = v1_stream(32, 40, 0.5, bytes([2, 1]), bytes.fromhex("40000000E0000000C0000000" "80000000A0000000"))


HAND_DECODED = np.array([3, 0] + [1] * 30 + [-1, -1] + [0] * 6, dtype=np.float32)


@check("codec.v1_format", claim="L2",
       spec="§9.4 codec-v1: the bytes of docs/codec.md exactly; streams of any valid block size decode",
       parts=("codec",), profiles=("codec-v1",), shown_to_fail_on=("m43_codec_v1_fixed_block",))
def check_codec_v1_format(impl: Any, ctx: Context) -> None:
    """The worked example byte for byte, streams written with block sizes 8, 64 and 4,096 decode
    exactly, and encodings equal the v1 reference encoder's bytes."""
    from ... import codec as ref

    ctx.note({"x": HAND_X, "eb": 0.5, "expected_hex": HAND_STREAM.hex()})
    got = bytes(impl.codec_encode(HAND_X, 0.5))
    assert got == HAND_STREAM, f"the worked example of docs/codec.md: expected {HAND_STREAM.hex()}, got {got.hex()}"
    y = impl.codec_decode(HAND_STREAM)
    assert np.array_equal(np.asarray(y), HAND_DECODED), f"the worked example decodes to {np.asarray(y).tolist()}"
    rng = np.random.default_rng(9)
    for n in (0, 1, 7, 8, 33, 100, 4097):
        x = rng.standard_normal(n).astype(np.float32)
        eb = 1e-3
        want = ref.codec_encode(x, eb)
        ctx.note({"x": x, "eb": eb})
        got = bytes(impl.codec_encode(x, eb))
        assert got == want, f"n = {n}, eb = {eb}: the bytes differ from the v1 format at offset " \
            f"{next((i for i, (a, b) in enumerate(zip(got, want)) if a != b), min(len(got), len(want)))} " \
            f"(lengths {len(got)} / {len(want)}; SPEC §9.4)"
        for block in (8, 64, 4096):
            stream = ref.codec_encode(x, eb, block_size=block)
            y = accepts(lambda stream=stream: impl.codec_decode(stream), f"codec_decode of a v1 stream with block size {block}")
            want_y = ref.codec_decode(stream)
            assert np.array_equal(np.asarray(y).view(np.uint32), want_y.view(np.uint32)), (
                f"n = {n}, block size {block}: decoded values differ from the stream's (SPEC §9.4: B comes from the header)"
            )


@check("codec.byte_order", claim="L2", spec="§2.4/§9.4 a big-endian vector is refused or encodes to its native copy's bytes",
       parts=("codec",), profiles=("codec-bound", "codec-v1"), shown_to_fail_on=("m65_codec_big_endian_read_raw",))
def check_codec_byte_order(impl: Any, ctx: Context) -> None:
    """Dyadic values whose byte-swapped bit patterns are finite: a big-endian copy is refused or gives the same bytes."""
    x = np.array([1.0, -2.0, 0.5, 3.0, -0.25, 6.0, 0.0, -1.5] * 5, dtype=np.float32)
    swapped = x.view(np.uint32).byteswap().view(np.float32)
    assert np.isfinite(swapped).all(), "construction: the byte-swapped patterns must be finite"
    eb = 1e-3
    native = bytes(impl.codec_encode(x.copy(), eb))
    ctx.note({"x": x, "eb": eb})
    try:
        got = impl.codec_encode(x.astype(">f4"), eb)
    except ValueError:
        return  # SPEC §2.4: a non-native byte order MAY be refused
    assert bytes(got) == native, (
        "codec_encode of a big-endian copy gave other bytes than the native vector: its values were read "
        "byte-swapped (SPEC §2.4, §9.4: if accepted, the result is that of the native copy)"
    )


# -------------------------------------------------------------------------------------------
# judged differentially, on inputs at the boundaries of SPEC §9 (issue 38 §1, §2; lam_ref.conformance.differential)
# -------------------------------------------------------------------------------------------
@check("codec.v1_decode_differential", claim="L2",
       spec="§9.5 a codec-v1 decoder refuses exactly the mutated streams lam_ref refuses and decodes the rest bit for bit",
       parts=("codec",), profiles=("codec-v1",),
       shown_to_fail_on=("m137_codec_v1_n_uint32", "m138_codec_rate_int8", "m139_codec_empty_early_return"))
def check_codec_v1_decode_differential(impl: Any, ctx: Context) -> None:
    """Version-1 streams of edge inputs, each mutated (flips, cuts, bytes set, every header field at its
    edges with the CRC recomputed): refused exactly when lam_ref refuses, else the same float32 bits."""
    seeds = [(label, _ref_encode(x, eb)) for label, x, eb in edge_inputs()]
    seeds.append(("block size 8", _ref_encode(np.array(cb.width_codes()[:12], np.float32), 0.5, block_size=8)))
    seeds.append(("rate 255 forged, no payload", cb.restamp(_ref_encode(np.zeros(8, np.float32), 0.5, block_size=8)[:28] + b"\xff")))
    differential(impl, ctx, 1, seeds, budget=400)


@check("codec.v2_decode_differential", claim="L2",
       spec="§9.6 a codec-v2 decoder refuses exactly the mutated streams lam_ref refuses and decodes the rest bit for bit",
       parts=("codec",), profiles=("codec-v2",),
       shown_to_fail_on=("m140_codec_v2_length_limit_16", "m141_codec_v2_repeat_width", "m142_codec_v2_zigzag_int32",
                         "m143_codec_v2_exception_equal_accepted"))
def check_codec_v2_decode_differential(impl: Any, ctx: Context) -> None:
    """Version-2 streams (repeats at several index widths, strict exceptions, escapes, zigzag codes past
    2³¹, halved code lengths, the empty matrix), each mutated (flips, cuts, header fields, R, row marks,
    classes, table sizes and nibbles, E, exception indices and values, CRC recomputed): refused exactly
    when lam_ref refuses, else the same float32 bits."""
    seeds = [(label, _ref_encode(x, eb, version=2, cols=cols, strict=strict)) for label, x, eb, cols, strict in v2_inputs()]
    differential(impl, ctx, 2, seeds, budget=400)


@check("codec.encoder_boundaries", claim="L2",
       spec="§9.2/§9.4 at the quantizer's edges and many eb: codec-v1 writes lam_ref's bytes and refuses what it refuses; any format keeps §9.3",
       parts=("codec",), profiles=("codec-bound", "codec-v1"),
       shown_to_fail_on=("m133_codec_signbit_negative_zero", "m134_codec_floor_half", "m135_codec_reciprocal",
                         "m136_codec_range_on_quotient"))
def check_codec_encoder_boundaries(impl: Any, ctx: Context) -> None:
    """Ties and their float32 neighbours, the largest double below the half, reciprocal traps, -0.0 deltas,
    the code's range edge (quotient 2³¹ - 0.75 encodes, 2³¹ - 0.5 does not), the float32 overflow edge and
    codes at 2^k ± 1, at 8 fixed and 4 drawn values of eb (16 and 100 under --thorough): exact bytes under
    codec-v1, the bound under codec-bound."""
    exact = declares(impl, "codec-v1")
    for label, x, eb in encoder_cases(ctx):
        ctx.note({"case": label, "x": x, "eb": eb})
        want = outcome(lambda x=x, eb=eb: _ref_encode(x, eb), "lam_ref's encoder")
        got = outcome(lambda x=x, eb=eb: impl.codec_encode(x.copy(), eb), f"codec_encode of {label}")
        if exact:
            if isinstance(want, str) or isinstance(got, str):
                assert isinstance(want, str) == isinstance(got, str), (
                    f"codec_encode of {label} (eb = {eb!r}): lam_ref {'refuses' if isinstance(want, str) else 'encodes'} it, "
                    f"the implementation {'refuses' if isinstance(got, str) else 'encodes'} it (SPEC §9.4: a v1 encoder refuses "
                    "iff a code exceeds 2^31 - 1 or a reconstruction overflows float32)")
                continue
            got_b, want_b = bytes(got), bytes(want)
            if got_b != want_b:
                k = next((i for i, (a, b) in enumerate(zip(got_b, want_b)) if a != b), min(len(got_b), len(want_b)))
                raise AssertionError(f"codec_encode of {label} (eb = {eb!r}): {len(got_b)} bytes, lam_ref writes {len(want_b)}; "
                                     f"first difference at byte {k} (format version 1, docs/codec.md's rounding rule)")
            continue
        if isinstance(got, str):
            assert isinstance(want, str) or label in MAY_REFUSE, (
                f"codec_encode refused {label} (eb = {eb!r}), which every format can encode within the bound "
                "(SPEC §9.4: another format MAY refuse only an eb too small for the data or a reconstruction near float32's end)")
            continue
        y = outcome(lambda got=got: impl.codec_decode(bytes(got)), f"codec_decode of its own stream of {label}")
        assert not isinstance(y, str), f"codec_decode refused its own stream of {label} (eb = {eb!r})"
        y = np.asarray(y)
        assert y.shape == x.shape, f"codec_decode of {label}: shape {y.shape}, expected {x.shape}"
        err = np.abs(x.astype(np.float64) - y.astype(np.float64))
        with np.errstate(over="ignore"):  # ulp32 of FLT_MAX is infinite: such values are held only to be finite
            bad = np.flatnonzero(~(err <= eb + codec_slack(x, y, eb)))
        assert not bad.size, (f"{label} (eb = {eb!r}): value {bad[0]} = {float(x[bad[0]])!r} decodes to {float(y[bad[0]])!r}, "
                              "outside the bound of SPEC §9.3")
