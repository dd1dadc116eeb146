"""Checks of the area ``validation``: bad input raises ``ValueError`` naming the argument and the
value (SPEC §2; the SPEC item ``VALID``), for every part.

``substitute`` (NaN/inf/zero/non-unit rows, wrong rank, D = 0, t outside [-1, 1], the norm
tolerance on both sides of its edge), ``OnlineSession``/``admit`` (rejected turns change
nothing), the codec (bad bounds and vectors, cut streams) and the codec's byte format version 1
(every item of its refusal list, SPEC §9.4-§9.5; headers announcing more values than the stream
holds).
"""

from __future__ import annotations

import struct
import zlib
from typing import Any

import numpy as np
from hypothesis import strategies as st

from ...geometry import NORM_TOLERANCE
from ...strategies import unit_rows
from ..asserts import (
    accepts,
    as_pi,
    assert_equal_pi,
    assert_valid_map,
    bad_rows,
    expect_value_error,
    oracle_pi,
)
from ..harness import Context, check
from .codec import HAND_STREAM, HAND_X, V1_HEAD, v1_stream


@st.composite
def _validation_case(draw: Any) -> tuple[np.ndarray, float, int]:
    e = draw(unit_rows(min_n=3, max_n=8, min_dim=2, max_dim=8))
    row = draw(st.integers(1, e.shape[0] - 1))
    t = draw(st.sampled_from([0.5, 0.9, 0.95]))
    return e, t, row


@check("validation.substitute", claim="VALID", spec="§2 input validation: ValueError naming the argument/row", parts=("substitute",), profiles=("core",), shown_to_fail_on=("m09_accepts_unnormalized",))
def check_validation_substitute(impl: Any, ctx: Context) -> None:
    """NaN/inf/zero/non-unit rows, wrong rank, D = 0 and t outside [-1, 1] raise ValueError; |norm-1| <= 5e-5 passes."""

    def body(case: tuple[np.ndarray, float, int]) -> None:
        e, t, row = case
        for what, bad, mention in bad_rows(e, row):
            expect_value_error(lambda bad=bad: impl.substitute(bad, t), f"substitute with {what}", mention)
        shapes = {
            "a 1-D array (one vector)": e[0].copy(),
            "a 3-D array": e.reshape(1, *e.shape).copy(),
            "D = 0 (shape (N, 0))": np.zeros((e.shape[0], 0), dtype=np.float32),
        }
        for what, bad in shapes.items():
            expect_value_error(lambda bad=bad: impl.substitute(bad, t), f"substitute with {what}")
        for bad_t, mention in ((1.5, "1.5"), (-1.5, "-1.5"), (1.0000001, None), (float("nan"), "nan"), (float("inf"), "inf")):
            expect_value_error(lambda bad_t=bad_t: impl.substitute(e, bad_t), f"substitute with t = {bad_t!r}", mention)
        # rows within the SPEC §2 tolerance (|norm - 1| <= 1e-4) are valid input
        near = e.copy()
        near[row] = (e[row].astype(np.float64) * (1.0 + 5e-5)).astype(np.float32)
        try:
            out = impl.substitute(near, t)
        except ValueError as exc:
            raise AssertionError(
                f"row {row} with norm 1 + 5e-5 is within the SPEC §2 tolerance 1e-4 but was rejected: {exc}"
            ) from exc
        as_pi(out, e.shape[0], "substitute with a row of norm 1 + 5e-5")

    ctx.run(_validation_case(), body, examples=20)


@check("validation.online", claim="VALID", spec="§2/§6 bad thresholds and turns rejected whole", parts=("online",), profiles=("online",), shown_to_fail_on=("m18_partial_turn",))
def check_validation_online(impl: Any, ctx: Context) -> None:
    """OnlineSession rejects bad t; admit rejects bad rows and dimension changes, leaving the session as it was."""

    def body(case: tuple[np.ndarray, float, int]) -> None:
        e, t, row = case
        for bad_t in (1.5, -2.0, float("nan")):

            def open_and_admit(bad_t: float = bad_t) -> Any:
                return impl.online_session(bad_t).admit(e)

            expect_value_error(open_and_admit, f"OnlineSession({bad_t!r}) then admit")
        n = e.shape[0]
        half = max(1, n // 2)
        session = impl.online_session(t)
        first = as_pi(session.admit(e[:half]), half, "admit of the first turn")
        for what, bad, mention in bad_rows(e[half:], row % (n - half)) if n - half > 0 else []:
            expect_value_error(lambda bad=bad: session.admit(bad), f"admit with {what} of the turn", mention)
        wrong_dim = np.zeros((2, e.shape[1] + 1), dtype=np.float32)
        wrong_dim[:, 0] = 1.0
        expect_value_error(lambda: session.admit(wrong_dim), f"admit of D = {e.shape[1] + 1} rows after D = {e.shape[1]}")
        rest = session.admit(e[half:]) if n - half > 0 else np.zeros(0, np.int64)
        rest = as_pi(rest, n - half, "admit after rejected turns")
        pi = np.concatenate([first, rest])
        assert_valid_map(e, t, pi, "online after rejected turns")
        want = oracle_pi(e, t) if impl.complete else impl.substitute(e, t)
        assert_equal_pi(
            pi, np.asarray(want), "online after rejected turns (a rejected turn must leave no partial result)",
            "the batch π of the accepted rows",
        )

    ctx.run(_validation_case(), body, examples=20)


@check("validation.codec", claim="VALID", spec="§2/§9 codec: bad vectors, bounds and bytes raise ValueError", parts=("codec",), profiles=("codec-bound", "codec-v1"), shown_to_fail_on=("m21_codec_partial_decode",))
def check_validation_codec(impl: Any, ctx: Context) -> None:
    """codec_encode rejects eb <= 0 or non-finite and non-finite x; codec_decode rejects truncated bytes."""
    x = np.linspace(-1.0, 1.0, 70, dtype=np.float32)
    ctx.note({"x": x})
    for eb in (0.0, -1e-3, float("nan"), float("inf"), 1e308):  # 1e308: 2·eb overflows (SPEC §9.4)
        expect_value_error(lambda eb=eb: impl.codec_encode(x, eb), f"codec_encode with eb = {eb!r}")
    for label, value in (("NaN", np.nan), ("inf", np.inf)):
        bad = x.copy()
        bad[37] = value
        expect_value_error(lambda bad=bad: impl.codec_encode(bad, 1e-3), f"codec_encode of x with a {label} at index 37", "37")
    blob = impl.codec_encode(x, 1e-3)
    assert isinstance(blob, (bytes, bytearray)), f"codec_encode must return bytes, got {type(blob).__name__}"
    blob = bytes(blob)
    for cut in (1, len(blob) // 2):
        if cut < len(blob):
            expect_value_error(
                lambda cut=cut: impl.codec_decode(blob[: len(blob) - cut]),
                f"codec_decode of the encoding of 70 values with its last {cut} byte(s) cut off",
            )
    expect_value_error(lambda: impl.codec_decode(b""), "codec_decode of empty bytes")


def _row_with_norm(d: int, norm: float, seed: int) -> np.ndarray:
    """A float32 row whose float64 norm is ``norm`` to within 2e-7 (checked)."""
    rng = np.random.default_rng(seed)
    u = rng.standard_normal(d)
    row = (u / np.linalg.norm(u) * norm).astype(np.float32)
    got = float(np.sqrt(np.sum(row.astype(np.float64) ** 2)))
    assert abs(got - norm) < 2e-7, f"construction failed: norm {got} for {norm}"
    return row


@check("validation.norm_tolerance", claim="VALID",
       spec="§2.3 |‖e‖ - 1| <= 1e-4, ‖e‖ in float64: 1 ± 0.98e-4 and 1 ± 0.7e-4 accepted, 1 ± 1.02e-4 refused",
       parts=("substitute",), profiles=("core",), shown_to_fail_on=("m29_norm_squared", "m30_norm_tolerance_loose"))
def check_validation_norm_tolerance(impl: Any, ctx: Context) -> None:
    """The norm rule on both sides of its edge: just inside is valid input, just outside is a
    ValueError naming the row; t = ±1 are valid, t = ±(1 + 1e-7) are not."""
    assert NORM_TOLERANCE == 1e-4, "SPEC §2.3 fixes the norm tolerance at 1e-4"
    d, row = 12, 3
    base = np.stack([_row_with_norm(d, 1.0, s) for s in range(6)])
    for offset, ok in ((0.98e-4, True), (-0.98e-4, True), (0.7e-4, True), (-0.7e-4, True),
                       (1.02e-4, False), (-1.02e-4, False), (2e-4, False)):
        e = base.copy()
        e[row] = _row_with_norm(d, 1.0 + offset, 100 + row)
        what = f"substitute with row {row} of norm 1 {'+' if offset > 0 else '-'} {abs(offset):.3g}"
        ctx.note({"case": what, "embeddings": e})
        if ok:
            out = accepts(lambda e=e: impl.substitute(e, 0.9), f"{what} (inside the SPEC §2.3 tolerance 1e-4 on ‖e‖)")
            as_pi(out, e.shape[0], what)
        else:
            expect_value_error(lambda e=e: impl.substitute(e, 0.9), f"{what} (outside the SPEC §2.3 tolerance 1e-4)", str(row))
    for t in (1.0, -1.0):
        as_pi(accepts(lambda t=t: impl.substitute(base, t), f"substitute with t = {t} (SPEC §1.3: [-1, 1] is inclusive)"),
               base.shape[0], f"substitute with t = {t}")
    for t in (1.0 + 1e-7, -1.0 - 1e-7):
        expect_value_error(lambda t=t: impl.substitute(base, t), f"substitute with t = {t!r} (outside [-1, 1])")


def _split_v1(blob: bytes) -> tuple[tuple[Any, ...], bytes]:
    return V1_HEAD.unpack(blob[:24]), blob[28:]


def _refusal_cases() -> list[tuple[str, bytes]]:
    """Streams a v1 decoder must refuse (docs/codec.md's list), CRC fixed unless the CRC is the point."""
    x = np.concatenate([HAND_X, np.zeros(5, np.float32)])
    good = v1_stream(32, 45, 0.5, bytes([2, 1]), HAND_STREAM[30:])
    (magic, version, flags, block, n, eb), body = _split_v1(good)
    rates, payload = body[:2], body[2:]
    assert len(x) == 45
    cases = [
        ("a short header", good[:20]),
        ("a wrong magic", v1_stream(block, n, eb, rates, payload, magic=b"LSZQ")),
        ("version 2", v1_stream(block, n, eb, rates, payload, version=2)),
        ("flags = 1", v1_stream(block, n, eb, rates, payload, flags=1)),
        ("block size 0", v1_stream(0, n, eb, rates, payload)),
        ("block size 12 (not a multiple of 8)", v1_stream(12, n, eb, rates, payload)),
        ("block size 4,104 (over 4,096)", v1_stream(4104, n, eb, rates, payload)),
        ("eb = 0 in the header", v1_stream(block, n, 0.0, rates, payload)),
        ("eb = -0.5 in the header", v1_stream(block, n, -0.5, rates, payload)),
        ("eb = NaN in the header", v1_stream(block, n, float("nan"), rates, payload)),
        ("eb = inf in the header", v1_stream(block, n, float("inf"), rates, payload)),
        ("a rate byte of 33", v1_stream(block, n, eb, bytes([33, 1]), payload + bytes(4 * 33))),
        ("a truncated payload", v1_stream(block, n, eb, rates, payload[:-1])),
        ("one trailing byte", good + b"\x00"),
        ("n larger than the blocks hold", v1_stream(block, n + 32, eb, rates, payload)),
        ("a CRC mismatch (payload bit flipped)", good[:-1] + bytes([good[-1] ^ 0x01])),
        ("a CRC mismatch (CRC bit flipped)", good[:24] + bytes([good[24] ^ 0x80]) + good[25:]),
        ("a non-canonical rate (3 where 2 suffices)", v1_stream(block, n, eb, bytes([3, 1]), payload[:12] + bytes(4) + payload[12:])),
        ("a sign bit on a zero delta", v1_stream(block, n, eb, rates, bytes([0x40, 0, 0, 1]) + payload[4:])),
        ("a non-zero padding slot", v1_stream(block, n, eb, rates, payload[:16] + bytes([0xA0, 0, 0, 1]))),
    ]
    return cases


@check("validation.codec_v1", claim="VALID",
       spec="§9.4 codec-v1 decoders refuse every item of the refusal list with ValueError, never a partial array",
       parts=("codec",), profiles=("codec-v1",), shown_to_fail_on=("m44_codec_v1_lenient",))
def check_validation_codec_v1(impl: Any, ctx: Context) -> None:
    """Bad magic, version, flags, block size, eb, rate, truncation, trailing bytes, n, CRC and
    payloads the encoder could not have written: each is a ValueError."""
    base = v1_stream(32, 45, 0.5, bytes([2, 1]), HAND_STREAM[30:])
    y = accepts(lambda: impl.codec_decode(base), "codec_decode of a valid v1 stream of 45 values")
    assert np.asarray(y).shape == (45,), f"the valid stream decodes to shape {np.asarray(y).shape}"
    for what, blob in _refusal_cases():
        ctx.note({"case": what, "bytes": blob})
        expect_value_error(lambda blob=blob: impl.codec_decode(blob), f"codec_decode of a v1 stream with {what}")
    for eb in (1e308, float(np.finfo(np.float64).max)):
        expect_value_error(lambda eb=eb: impl.codec_encode(HAND_X, eb), f"codec_encode with eb = {eb!r} (2·eb overflows, SPEC §9.4)")


def _v1_header(n: int, body: bytes) -> bytes:
    head = struct.pack("<4sBBHQd", b"LSZP", 1, 0, 32, n, 0.5)
    return head + struct.pack("<I", zlib.crc32(head + body) & 0xFFFFFFFF) + body


@check("validation.codec_header", claim="VALID", spec="§9.5 a v1 header announcing more values than the stream holds is refused",
       parts=("codec",), profiles=("codec-v1",), shown_to_fail_on=("m130_codec_trusts_n_allocation",))
def check_validation_codec_header(impl: Any, ctx: Context) -> None:
    """Headers with n = 2⁴⁰ or 2⁶⁴ - 1 and a few body bytes raise ValueError (truncated), not MemoryError."""
    for n in (2**40, 2**64 - 1, 2**33 + 5):
        blob = _v1_header(n, b"\x00" * 8)
        ctx.note({"n": n, "data": blob})
        expect_value_error(lambda blob=blob: impl.codec_decode(blob), f"codec_decode of a v1 header announcing n = {n} over 8 body bytes")
