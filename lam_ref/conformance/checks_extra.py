"""Checks for the bug classes the mutants m46 onwards still got through (issue 21 §5, phase 3).

After the edge checks (:mod:`lam_ref.conformance.checks_edges`) and the test vectors were merged,
the mutants of :mod:`lam_ref.conformance.mutants` m46 onwards were run again; each check here
closes one class that was still missed, generally rather than for one mutant:

* ``substitute.signed_zeros`` — ``-0.0`` and ``+0.0`` are the same value (SPEC §2.1: ``sq`` is
  arithmetic, not a byte comparison; a ``memcmp`` fast path at ``t = 1`` fails);
* ``substitute.threshold_ends`` — the end points ``t = ±1`` decided by the rule, not by a
  shortcut: antipodal rows of norm ``1 + 7e-5`` (valid input) are farther apart than ``δ = 2``;
* ``substitute.retained_4096`` — a retained set past 4,096 rows followed by late copies of
  early and late rows (fixed index buffers of 4,096);
* ``substitute.byte_order`` — big-endian rows whose byte-swapped values are again valid unit rows
  (at other distances): refused, or the native π (SPEC §2.4);
* ``online.caller_buffer_reuse`` — a caller that writes every turn into one buffer: the session
  keeps its own rows (SPEC §6.1 "a session's state is its own"), not views of the caller's array;
* ``lines.exact_bytes`` — lines equal only after case folding, Unicode normalisation or
  stripping are different lines (SPEC §7.1, A6: no normalised comparison);
* ``codec.byte_order`` — a big-endian vector whose byte-swapped values are finite: refused, or
  the bytes of its native copy (SPEC §2.4, §9.4);
* ``validation.codec_header`` — a v1 header that announces 2⁴⁰ or 2⁶⁴ - 1 values over a short
  body is refused with ``ValueError`` (never a MemoryError from allocating ``n`` first).

Expected answers come from the construction or from lam_ref's oracle (:func:`lam_ref.substitution.oracle`)
and L0 model (:func:`lam_ref.text.lines.reference_tokens`), never from the implementation under test.
Every check here passes on lam_ref's adapters, on both independent implementations and on every
control of :mod:`lam_ref.conformance.mutants.controls` (``tests/test_conformance_mutants.py``).
"""

from __future__ import annotations

import struct
import zlib
from typing import Any

import numpy as np

from ..substitution import oracle
from .checks import (
    _as_pi,
    _assert_equal_pi,
    _assert_valid_map,
    _expect_value_error,
    _substitute,
    expected_dedup,
)
from .checks_edges import _accepts, _want
from .harness import Context, check

__all__ = [
    "check_codec_byte_order",
    "check_lines_exact_bytes",
    "check_online_caller_buffer_reuse",
    "check_substitute_byte_order",
    "check_substitute_retained_4096",
    "check_substitute_signed_zeros",
    "check_substitute_threshold_ends",
    "check_validation_codec_header",
]


# -------------------------------------------------------------------------------------------
# substitute (core)
# -------------------------------------------------------------------------------------------
@check("substitute.signed_zeros", claim="EQ1", spec="§2.1 sq is arithmetic: -0.0 and +0.0 coordinates are equal (t = 1 included)",
       parts=("substitute",), profiles=("core",), shown_to_fail_on=("m96_t1_memcmp",), complete_only=True)
def check_substitute_signed_zeros(impl: Any, ctx: Context) -> None:
    """Rows that differ only in the sign of zero coordinates are at sq = 0 and merge, at t = 1 and below."""
    a = np.array([[0.0, 1.0, 0.0, 0.0], [-0.0, 1.0, -0.0, 0.0], [0.0, 0.0, 1.0, 0.0], [-0.0, -0.0, 1.0, -0.0]], dtype=np.float32)
    for t in (1.0, 0.999, 0.5):
        ctx.note({"embeddings": a, "t": t, "expected_pi": [0, 0, 2, 2]})
        pi = _substitute(impl, a, t, f"substitute of rows differing only in signed zeros (t = {t})")
        assert pi.tolist() == [0, 0, 2, 2], (
            f"t = {t}: rows equal up to the sign of zero are at sq = 0 <= δ² and merge; expected π = [0, 0, 2, 2], "
            f"got {pi.tolist()} (SPEC §2.1: sq is computed, not a byte comparison)"
        )


def _scaled_axis(d: int, k: int, norm: float) -> np.ndarray:
    row = np.zeros(d, dtype=np.float32)
    row[k] = np.float32(norm)
    return row


@check("substitute.threshold_ends", claim="EQ1", spec="§1.3/§2.1 t = ±1 are decided by sq <= δ², never by a shortcut",
       parts=("substitute",), profiles=("core",), shown_to_fail_on=("m97_t_minus1_all_merge", "m95_t1_no_merges"))
def check_substitute_threshold_ends(impl: Any, ctx: Context) -> None:
    """At t = -1 (δ² = 4) antipodes of norm 1 + 7e-5 stay apart and those of norm 1 - 7e-5 merge; at t = 1 only equal rows merge."""
    long_, short = 1.0 + 7e-5, 1.0 - 7e-5  # both inside the norm tolerance 1e-4 (SPEC §2.3)
    cases = []
    e = np.stack([_scaled_axis(3, 0, long_), -_scaled_axis(3, 0, long_), _scaled_axis(3, 1, short), -_scaled_axis(3, 1, short)])
    cases.append(("antipodes of norm 1 ± 7e-5 at t = -1", e, -1.0))
    e1 = np.stack([_scaled_axis(3, 0, 1.0), _scaled_axis(3, 0, 1.0), _scaled_axis(3, 0, short), _scaled_axis(3, 1, 1.0)])
    cases.append(("equal and nearly equal rows at t = 1", e1, 1.0))
    for label, e, t in cases:
        want = oracle(e, t).pi
        ctx.note({"case": label, "embeddings": e, "t": t, "expected_pi": want.tolist()})
        pi = _substitute(impl, e, t, f"substitute ({label})")
        _assert_valid_map(e, t, pi, f"substitute ({label})")
        if impl.complete:
            _assert_equal_pi(pi, want, f"substitute ({label}; the rule sq <= 2 - 2t holds at the ends too)", "the oracle")


def _retained_4096_case() -> tuple[np.ndarray, float, np.ndarray]:
    """4,300 far-apart rows in D = 16 (all retained), then exact copies of rows 0, 1, 4,095, 4,096
    and 4,299: each copy's representative is its original (a retained set past 4,096)."""
    rng = np.random.default_rng(4096)
    base = rng.standard_normal((4300, 16))
    base = (base / np.linalg.norm(base, axis=1, keepdims=True)).astype(np.float32)
    t = 0.99
    b64 = base.astype(np.float64)
    worst = max(float(np.max(np.triu(b64[i : i + 512] @ b64.T, k=i + 1))) for i in range(0, 4300, 512))
    assert worst < t - 0.005, f"construction failed: two originals at cos {worst} >= {t - 0.005}"
    copies = np.array([0, 1, 4095, 4096, 4299, 2048], dtype=np.int64)
    return np.vstack([base, base[copies]]), t, np.concatenate([np.arange(4300), copies])


@check("substitute.retained_4096", claim="DEF1", spec="§5.1 every retained chunk is a candidate, past 4,096 retained rows",
       parts=("substitute",), profiles=("core",), shown_to_fail_on=("m47_retained_cap_4096",), heavy=True)
def check_substitute_retained_4096(impl: Any, ctx: Context) -> None:
    """4,300 retained far-apart rows, then copies of early and late ones: each copy maps to its original."""
    e, t, want = _retained_4096_case()
    ctx.note({"case": "4,300 retained rows then copies", "t": t, "n": e.shape[0]})
    pi = _substitute(impl, e, t, "substitute (4,300 retained rows, then copies)")
    _assert_valid_map(e, t, pi, "substitute (4,300 retained rows, then copies)")
    if impl.complete:
        _assert_equal_pi(pi, want, "substitute (4,300 retained rows, then copies)", "the construction")


#: p and q = p with its four bytes reversed: both unit-norm partners (p² + q² = 1 within 7e-6), so a
#: byte-swapped read of a big-endian row is again valid input, with other distances.
_P, _Q = np.float32(0.5365028), np.float32(0.8438911)


@check("substitute.byte_order", claim="DEF1", spec="§2.4 a big-endian array is refused or gives the π of its native copy",
       parts=("substitute",), profiles=("core",), shown_to_fail_on=("m64_big_endian_rows_read_raw",))
def check_substitute_byte_order(impl: Any, ctx: Context) -> None:
    """Rows (p, q, 0) and (p, 0, q) whose byte-swapped values (q, p, 0), (q, 0, p) are valid unit rows
    at another distance: a big-endian copy is refused with ValueError or gives the native π."""
    assert _P.view(np.uint32).byteswap().view(np.float32) == _Q, "construction: q is p byte-swapped"
    e = np.array([[_P, _Q, 0.0], [_P, 0.0, _Q], [0.0, _P, _Q]], dtype=np.float32)
    t = 0.5  # native sq = 2q² ≈ 1.42 > δ² = 1; byte-swapped sq = 2p² ≈ 0.58 <= 1
    want, source = _want(impl, e, t)
    ctx.note({"embeddings": e, "t": t, "expected_pi": want.tolist()})
    try:
        out = impl.substitute(e.astype(">f4"), t)
    except ValueError:
        return  # SPEC §2.4: a non-native byte order MAY be refused
    pi = _as_pi(out, 3, "substitute of a big-endian array")
    _assert_equal_pi(pi, want, "substitute of a big-endian array (SPEC §2.4: if accepted, the π of the native copy)", source)


# -------------------------------------------------------------------------------------------
# online
# -------------------------------------------------------------------------------------------
@check("online.caller_buffer_reuse", claim="ONLINE", spec="§6.1 a session's state is its own: the caller may reuse its input buffer",
       parts=("substitute", "online"), profiles=("online",), shown_to_fail_on=("m72_keeps_caller_rows",))
def check_online_caller_buffer_reuse(impl: Any, ctx: Context) -> None:
    """Every turn is written into one buffer the caller reuses; π over the turns equals the batch π."""
    rng = np.random.default_rng(72)
    centres = rng.standard_normal((5, 8))
    rows = np.repeat(centres, 4, axis=0) + 0.02 * rng.standard_normal((20, 8))
    e = (rows / np.linalg.norm(rows, axis=1, keepdims=True)).astype(np.float32)[rng.permutation(20)]
    t = 0.95
    want, source = _want(impl, e, t)
    session = impl.online_session(t)
    buf = np.zeros((4, 8), dtype=np.float32)
    outs = []
    for k in range(0, 20, 4):
        buf[:] = e[k : k + 4]
        ctx.note({"turn": k // 4, "embeddings": e, "t": t})
        outs.append(_as_pi(_accepts(lambda: session.admit(buf), f"admit of turn {k // 4}"), 4, f"admit of turn {k // 4}"))
    _assert_equal_pi(np.concatenate(outs), want, "online, every turn written into one reused buffer (the session must keep its own rows)", source)


# -------------------------------------------------------------------------------------------
# L0
# -------------------------------------------------------------------------------------------
#: Pairs of different lines that case folding, Unicode normalisation or stripping would equate.
EXACT_PAIRS = [
    ("Error: file not found", "error: file not found"),
    ("STRASSE", "stra\u00dfe"),
    ("\u0130stanbul", "i\u0307stanbul"),  # dotted capital I, then i + U+0307 (its lower case)
    ("caf\u00e9", "cafe\u0301"),  # precomposed, then decomposed (NFC equal)
    ("\ufb01le.txt", "file.txt"),  # U+FB01 ligature (NFKC)
    ("\uff21\uff22\uff23 123", "ABC 123"),  # fullwidth (NFKC)
    ("x = 1", "x = 1 "),
    ("\tindented", "indented"),
]


@check("lines.exact_bytes", claim="L0", spec="§7.1 (A6) a line is its UTF-8 bytes: no case folding, normalisation or stripping",
       parts=("lines",), profiles=("l0", "l0-stubs"), shown_to_fail_on=("m81_casefold_key",))
def check_lines_exact_bytes(impl: Any, ctx: Context) -> None:
    """Lines equal only after casefold, NFC/NFKC or strip are different lines: none is dropped."""
    prefix = impl.stub_prefix
    first = "\n".join(a for a, _ in EXACT_PAIRS)
    second = "\n".join(b for _, b in EXACT_PAIRS)
    records = [first, second, first]
    want = expected_dedup(records, prefix)
    ctx.note({"records": records})
    out = impl.dedup_lines(list(records))
    assert isinstance(out, list) and len(out) == 3, f"dedup_lines must return 3 records, got {out!r}"
    lines = out[1].split("\n")
    kept = [line for kind, line in want[1] if kind == "keep"]
    assert lines == kept, (
        f"record 1 holds lines that differ from record 0 only in case, Unicode form or whitespace; all must stay "
        f"(SPEC §7.1, A6): expected {kept!r}, got {lines!r}"
    )
    third = out[2].split("\n")
    assert len(third) == 1 and third[0].startswith(prefix), (
        f"record 2 repeats record 0 exactly: expected one stub line starting with {prefix!r}, got {third!r}"
    )


# -------------------------------------------------------------------------------------------
# codec
# -------------------------------------------------------------------------------------------
@check("lines.input_untouched", claim="L0", spec="§2.4 dedup_lines leaves the caller's list as it was and returns a new one",
       parts=("lines",), profiles=("l0", "l0-stubs"), shown_to_fail_on=("m74_dedup_mutates_input",))
def check_lines_input_untouched(impl: Any, ctx: Context) -> None:
    """The caller's list of records is not an output buffer: after ``dedup_lines`` it holds the same
    strings, and the result is another list object."""
    records = ["a\nb\nc", "a\nb\nd", "c\nc\ne"]
    given = list(records)
    ctx.note({"records": records})
    out = impl.dedup_lines(given)
    assert given == records, f"dedup_lines modified the list it was given (SPEC §2.4): {given!r}, was {records!r}"
    assert out is not given, "dedup_lines returned the caller's own list object (SPEC §2.4: a new list)"


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
        _expect_value_error(lambda blob=blob: impl.codec_decode(blob), f"codec_decode of a v1 header announcing n = {n} over 8 body bytes")
