"""Streams and inputs for judging the codec differentially, on inputs derived from the boundaries of SPEC §9 (issue 38 §1, §2).

* **Decoders** (profiles ``codec-v1``, ``codec-v2``): valid streams of the reference encoder, at the
  edges of :mod:`lam_ref.conformance.vectors.codec_boundaries`, are mutated byte-wise (bit flips,
  truncations, bytes set, and header and body fields edited to their edges with the CRC-32
  recomputed, so that the structural checks must refuse them). The implementation must refuse
  (``ValueError``) exactly the streams lam_ref's decoder refuses and decode the others bit for bit.
* **Encoder** (profiles ``codec-bound``, ``codec-v1``): values at the quantizer's edges (ties and their
  float32 neighbours, the largest double below the half, reciprocal traps, ``-0.0`` deltas, the range and
  overflow edges, codes and deltas at ``2^k ± 1``) at many ``eb``: ``codec-v1`` must write the reference's
  bytes and refuse exactly what it refuses; ``codec-bound`` must keep the bound of SPEC §9.3 on whatever it
  accepts.

The reference is lam_ref's codec (:mod:`lam_ref.codec`), whose refusals follow docs/codec.md's lists;
the ci profile runs a bounded number of streams, ``--thorough`` 25 times as many.

The checks that use them are in :mod:`lam_ref.conformance.checks.codec`
(``codec.v1_decode_differential``, ``codec.v2_decode_differential``, ``codec.encoder_boundaries``).
"""

from __future__ import annotations

import struct
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np

from ..codec import codec_decode as _ref_decode
from .harness import Context
from .vectors import codec_boundaries as cb

REFUSED = "refused"

__all__ = ["MAY_REFUSE", "REFUSED", "declares", "differential", "edge_inputs", "encoder_cases", "header_edits", "mutations", "outcome", "restamped", "same", "v2_field_edits", "v2_inputs"]


def declares(impl: Any, profile: str) -> bool:
    return profile in (getattr(impl, "profiles", None) or ())


def outcome(call: Callable[[], Any], what: str) -> Any:
    """``REFUSED`` for a ValueError, else the float32 result; any other exception is the violation."""
    try:
        out = call()
    except ValueError:
        return REFUSED
    except Exception as exc:  # noqa: BLE001 - any other exception type on bad input is the violation
        raise AssertionError(f"{what}: expected a decode or ValueError, got {type(exc).__name__}: {exc}") from exc
    return out


def same(got: Any, want: Any, what: str) -> None:
    if isinstance(want, str):
        assert isinstance(got, str), (
            f"{what}: lam_ref refuses this stream (docs/codec.md's refusal list), the implementation returned "
            f"{getattr(got, 'shape', type(got).__name__)}")
        return
    assert not isinstance(got, str), f"{what}: the implementation refused a stream lam_ref decodes ({want.size} values)"
    arr = np.asarray(got)
    assert arr.dtype == np.float32 and arr.shape == want.shape, (
        f"{what}: decoded {arr.dtype} of shape {arr.shape}, expected float32 of shape {want.shape}")
    bad = np.flatnonzero(arr.view(np.uint32) != want.view(np.uint32))
    assert not bad.size, f"{what}: value {bad[0]} is {float(arr[bad[0]])!r}, lam_ref decodes {float(want[bad[0]])!r} (bit for bit)"


# -------------------------------------------------------------------------------------------
# valid streams at the edges, and their mutations
# -------------------------------------------------------------------------------------------
def edge_inputs() -> list[tuple[str, np.ndarray, float]]:
    """(label, float32 values, eb) at the edges of SPEC §9's sentences (small: decoders run on each)."""
    out = [("-0.0 deltas", np.array([-0.0, 1.0, 0.0, -0.0, 1.0, -0.0], np.float32), 0.5),
           ("widths 2^k ± 1", np.array(cb.width_codes(), np.float32), 0.5),
           ("empty", np.zeros(0, np.float32), 1e-3)]
    eb = cb.below_half_eb(3.0)
    if eb is not None:
        out.append(("below the half", np.array([3.0, -3.0, 6.0], np.float32), eb))
    ok, _ = cb.range_edge_eb()
    out.append(("largest code", np.array([2.0**31, -(2.0**31), 0.0], np.float32), ok))
    fine, _ = cb.overflow_edge_eb()
    out.append(("FLT_MAX", np.array([cb.FLT_MAX, -cb.FLT_MAX], np.float32), fine))
    for e in (1e-3, 0.7):
        out.append((f"quantizer edges at eb = {e}", np.array(cb.quantizer_edges(e), np.float32), e))
    return out


def v2_inputs() -> list[tuple[str, np.ndarray, float, int, bool]]:
    """(label, values, eb, cols, strict): repeats at index widths 1..3, strict exceptions, escapes,
    zigzag codes past 2^31, Fibonacci counts past the length limit, the empty matrix."""
    rng = np.random.default_rng(38)
    rows = (0.05 * rng.normal(size=(5, 16))).astype(np.float32)
    out = [("R = 4, repeats", rows[[0, 1, 2, 3, 3, 0, 1]].reshape(-1), 1e-3, 16, False),
           ("R = 5, repeats, strict", rows[[0, 1, 2, 3, 4, 4, 2]].reshape(-1), 1e-4, 16, True),
           ("17 columns", (0.05 * rng.normal(size=(3, 17))).astype(np.float32)[[0, 1, 0, 2]].reshape(-1), 1e-3, 17, False),
           ("near 1000, strict", (np.float32(1000.0) + np.arange(24, dtype=np.float32) * np.float32(2.0**-13)), 1e-4, 1, True),
           ("x = 0.5 strict", np.array([0.5, 0.25, -0.5, 0.7], np.float32), 0.1, 2, True),
           ("escapes and zigzag >= 2^31", np.array(cb.width_codes()[-13:] + [2047, 2048, -2048, 4096], np.float32), 0.5, 1, False),
           ("largest codes", np.array([1.0, -1.0, 0.5, -0.5], np.float32), cb.extreme_code_eb(), 2, False),
           ("empty, 16 columns, strict", np.zeros(0, np.float32), 1e-3, 16, True)]
    counts = cb.skewed_counts(17)
    x = np.repeat(np.arange(17, dtype=np.float32), counts)
    out.append(("17 Fibonacci counts (halved lengths)", x[np.random.default_rng(17).permutation(x.size)], 0.5, 1, False))
    return out


def restamped(b: bytearray) -> bytes:
    return cb.restamp(bytes(b))


def header_edits(s: bytes, version: int) -> Iterator[tuple[str, bytes]]:
    """Each header field at its edges (CRC recomputed): n ± 1 and with bit 32 / 63 set, the block size or
    column count at 0, 1, 7, 8, 9, 4095, 4096, 4097, 65535, eb at 0, -eb, the smallest subnormal, the edge
    of 2eb finite and one beyond, NaN, inf; version 0 and 3; flags 1, 2, 128, 255."""
    n = struct.unpack_from("<Q", s, 8)[0]
    eb = struct.unpack_from("<d", s, 16)[0]
    top = float(np.finfo(np.float64).max / 2)
    for v in (n - 1, n + 1, n + 2**32, n + 2**63, 2**64 - 1, 0):
        if 0 <= v < 2**64 and v != n:
            yield f"n = {v}", s[:8] + struct.pack("<Q", v) + s[16:]
    for v in (0, 1, 7, 8, 9, 16, 64, 4095, 4096, 4097, 65535):
        yield f"uint16 at offset 6 = {v}", s[:6] + struct.pack("<H", v) + s[8:]
    for v in (0.0, -eb, 5e-324, top, float(np.nextafter(top, np.inf)), float("nan"), float("inf"),
              float(np.nextafter(eb, np.inf)), float(np.nextafter(eb, 0.0)), 2 * eb):
        yield f"eb = {v!r}", s[:16] + struct.pack("<d", v) + s[24:]
    for v in (0, 3, 255):
        yield f"version {v}", s[:4] + bytes([v]) + s[5:]
    for v in (1, 2, 128, 255):
        if v != s[5]:
            yield f"flags {v}", s[:5] + bytes([v]) + s[6:]


def v2_field_edits(s: bytes) -> Iterator[tuple[str, bytes]]:
    """Body fields of a version-2 stream at their edges (CRC recomputed by the caller): R, the row marks,
    each class, each table size, E, each exception index and value (their low bits)."""
    lay = cb.v2_layout(s)
    if lay.cols >= 16 and len(s) >= 36:
        for v in (0, 1, lay.distinct - 1, lay.distinct + 1, lay.distinct + 2**32):
            if v >= 0 and v != lay.distinct:
                yield f"R = {v}", s[:28] + struct.pack("<Q", v) + s[36:]
        for at in range(*lay.marks):
            for bit in range(8):
                yield f"row-mark byte {at} bit {bit}", s[:at] + bytes([s[at] ^ (1 << bit)]) + s[at + 1 :]
    for at in range(*lay.classes):
        for d in (1, -1):
            if 0 <= s[at] + d <= 255:
                yield f"class byte {at} {d:+d}", s[:at] + bytes([s[at] + d]) + s[at + 1 :]
    for _, at, a in lay.tables:
        for v in (a - 1, a + 1, a + 0x8000, 0):
            if 0 <= v < 2**16 and v != a:
                yield f"table size {v}", s[:at] + struct.pack("<H", v) + s[at + 2 :]
        nbytes = (a + 1) // 2
        for k in sorted({at + 2 + j for j in list(range(min(8, nbytes))) + list(range(max(0, nbytes - 8), nbytes))}):
            for d in (0x10, 0x01):
                yield f"table byte {k} ^ {d:#x}", s[:k] + bytes([s[k] ^ d]) + s[k + 1 :]
    if lay.strict:
        at, e = lay.exceptions
        for v in (e - 1, e + 1, e + 2**32):
            if v >= 0:
                yield f"E = {v}", s[:at] + struct.pack("<Q", v) + s[at + 8 :]
        for k in range(e):
            i_at, v_at = at + 8 + 8 * k, at + 8 + 8 * e + 4 * k
            for d in (1, 2, 0x80):
                yield f"exception {k} value ^ {d}", s[:v_at] + bytes([s[v_at] ^ d]) + s[v_at + 1 :]
            for d in (1, -1):
                idx = struct.unpack_from("<Q", s, i_at)[0] + d
                if idx >= 0:
                    yield f"exception {k} index {d:+d}", s[:i_at] + struct.pack("<Q", idx) + s[i_at + 8 :]


def mutations(s: bytes, version: int, rng: np.random.Generator, budget: int) -> list[tuple[str, bytes]]:
    """Every edge edit (cuts, a trailing byte, header fields, version-2 body fields; bounded by the stream's
    structure), then ``budget`` random ones: bit flips (CRC kept, and recomputed) and bytes set."""
    cases: list[tuple[str, bytes]] = [(f"cut to {k} bytes", s[:k]) for k in sorted({0, 1, 27, 28, len(s) // 2, len(s) - 1}) if k < len(s)]
    cases.append(("one trailing zero byte (CRC recomputed)", cb.restamp(s + b"\0")))
    cases += [(w, cb.restamp(d)) for w, d in header_edits(s, version)]
    if version == 2:
        cases += [(w, cb.restamp(d)) for w, d in v2_field_edits(s)]
    flips = []
    for pos in range(len(s)):
        for bit in (0, 7):
            b = bytearray(s)
            b[pos] ^= 1 << bit
            flips.append((f"byte {pos} bit {bit} flipped, CRC recomputed", restamped(b)))
            if pos >= 28 and bit == 0:
                flips.append((f"byte {pos} bit {bit} flipped, CRC kept", bytes(b)))
    for _ in range(len(s)):
        pos = int(rng.integers(0, len(s)))
        b = bytearray(s)
        b[pos] = int(rng.integers(0, 256))
        flips.append((f"byte {pos} set to {b[pos]}, CRC recomputed", restamped(b)))
    return cases + [flips[int(k)] for k in rng.permutation(len(flips))[:budget]]


def differential(impl: Any, ctx: Context, version: int, seeds: list[tuple[str, bytes]], budget: int) -> None:
    claims_v1, claims_v2 = declares(impl, "codec-v1"), declares(impl, "codec-v2")
    rng = np.random.default_rng(3800 + version)
    per = max(4, ctx.examples(budget) // max(1, len(seeds)))
    for label, s in seeds:
        ctx.note({"stream": label, "data": s})
        got = outcome(lambda s=s: impl.codec_decode(s), f"codec_decode of the stream '{label}'")
        same(got, outcome(lambda s=s: _ref_decode(s), "lam_ref's decoder"), f"the version-{version} stream '{label}'")
        for what, data in mutations(s, version, rng, per):
            if len(data) > 4 and ((data[4] == 2 and not claims_v2) or (data[4] == 1 and not claims_v1)):
                continue  # a stream of a version the implementation does not claim
            ctx.note({"stream": label, "mutation": what, "data": data})
            want = outcome(lambda data=data: _ref_decode(data), "lam_ref's decoder")
            got = outcome(lambda data=data: impl.codec_decode(data), f"codec_decode of '{label}' with {what}")
            same(got, want, f"'{label}' with {what}")


# -------------------------------------------------------------------------------------------
# the encoder at the quantizer's edges
# -------------------------------------------------------------------------------------------
#: Cases a format other than version 1 MAY refuse (SPEC §9.4: codes at 2^31 - 1, reconstructions near FLT_MAX).
MAY_REFUSE = {"largest code", "FLT_MAX"}


def encoder_cases(ctx: Context) -> list[tuple[str, np.ndarray, float]]:
    out = list(edge_inputs())
    ok, bad = cb.range_edge_eb()
    fine, over = cb.overflow_edge_eb()
    out += [("quotient 2^31 - 0.5 (q = 2^31)", np.array([2.0**31], np.float32), bad),
            ("q·2eb = 2^128 - 2^103", np.array([cb.FLT_MAX], np.float32), over)]
    rng = np.random.default_rng(None if ctx.thorough else 3801)  # derandomized in ci, fresh under --thorough
    drawn = [float(10.0 ** rng.uniform(-7, 3)) for _ in range(ctx.examples(4))]  # log-uniform eb in [1e-7, 1e3]
    for eb in [*(cb.EBS if ctx.thorough else cb.EBS[::2]), *drawn]:
        x = np.array(cb.quantizer_edges(eb, ks=(0, 1, -1, 2, -2, 3, 100, -101)), np.float32)
        out.append((f"quantizer edges at eb = {eb!r}", x, eb))
        traps = cb.reciprocal_traps(eb, limit=4, span=200_000 if ctx.thorough else 20_000)
        if traps:
            out.append((f"reciprocal traps at eb = {eb!r}", np.array(traps, np.float32), eb))
    return out


