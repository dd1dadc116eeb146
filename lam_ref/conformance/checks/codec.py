"""Checks that reach where real bugs live (issue 21 §3): edges, sizes, layouts, aliasing, formats.

The first checks (:mod:`lam_ref.conformance.checks`) test the rules on moderate generated data.
An outside implementation that passed them still failed on what they never tried; each check here
closes one such class generally:

* tolerances just **outside** as well as inside (the norm rule, SPEC §2.3; codes near 2³¹);
* sizes by cheap construction: ids past 65,536, retained sets past 1,024, D = 768 and 1,024,
  L0 seen-sets past 1,024 lines, lines of thousands of characters sharing long prefixes;
* empty inputs (N = 0, empty turns, the empty vector);
* memory layouts and dtypes (C/Fortran order, strided, read-only, float64, big-endian, SPEC §2.4);
* aliasing: a returned array never changes when the next call runs on different input;
* a rejected turn leaves the session exactly as it was, including its dimension (SPEC §6.1);
* L0 text: CRLF, lone CR, trailing and Unicode whitespace, non-Latin text, the stub prefix
  inside a line (SPEC §7.1); the byte-exact stub fields (profile ``l0-stubs``, SPEC §8.1);
* the codec's byte format and every item on its refusal list (profile ``codec-v1``, SPEC §9.4).

Expected answers come from how the data is built (copies, duplicates, far-apart rows), from the
oracle (:func:`lam_ref.substitution.oracle`), from the L0 model
(:func:`lam_ref.text.lines.reference_tokens`) or from the normative v1 byte format written out
here and on docs/codec.md — never from the implementation under test. Each check names the
mutants (``lam_ref/conformance/witnesses/mutants/m22``–``m45``) it is shown to reject.
"""

from __future__ import annotations

import os
import struct
import tempfile
import zlib
from typing import Any

import numpy as np

from ..geometry import NORM_TOLERANCE
from ..strategies import embeddings_and_threshold
from ..substitution import oracle
from ..text.lines import reference_dedup
from .checks import _as_pi, _assert_equal_pi, _assert_valid_map, _expect_value_error, _short, _substitute
from .checks import check_lines_semantics as _lines_semantics
from .harness import Context, check

# -------------------------------------------------------------------------------------------
# helpers
# -------------------------------------------------------------------------------------------
_UNIT = np.eye(8, dtype=np.float32)


def _want(impl: Any, e: np.ndarray, t: float) -> tuple[np.ndarray, str]:
    """The π an implementation must return on valid input: the oracle's (COMPLETE) or its own
    on the plain C-ordered float32 array (soundness only)."""
    if impl.complete:
        return oracle(e, t).pi, "the oracle"
    base = _substitute(impl, np.ascontiguousarray(e, dtype=np.float32), t)
    _assert_valid_map(e, t, base, "substitute")
    return base, "this implementation on the same values as a C-ordered float32 array"


def _accepts(call: Any, what: str) -> Any:
    """Run ``call``; valid input must not be refused (any exception is the violation)."""
    try:
        return call()
    except Exception as exc:  # noqa: BLE001 - every exception on valid input is the violation
        raise AssertionError(f"{what}: valid input was refused with {type(exc).__name__}: {exc}") from exc


def _layouts(e: np.ndarray) -> list[tuple[str, np.ndarray]]:
    """The same values in every layout SPEC §2.4 requires an implementation to accept."""
    n, d = e.shape
    fortran = np.asfortranarray(e)
    big = np.full((2 * n + 1, 2 * d + 1), 7.0, dtype=np.float32)  # garbage between the strided values
    big[1::2, 1::2] = e
    strided = big[1::2, 1::2]
    ro = e.copy()
    ro.setflags(write=False)
    reversed_view = e[::-1].copy()[::-1]
    out = [
        ("Fortran-ordered", fortran),
        ("strided (a view of every other row and column)", strided),
        ("read-only", ro),
        ("negative row stride", reversed_view),
        ("float64 (values exact in float32)", e.astype(np.float64)),
        ("big-endian float32", e.astype(">f4")),
    ]
    for name, arr in out:
        assert np.array_equal(np.asarray(arr, dtype=np.float64), e.astype(np.float64)), f"layout {name} changed values"
    return out


# -------------------------------------------------------------------------------------------
# substitute (core)
# -------------------------------------------------------------------------------------------
@check("substitute.empty", claim="DEF1", spec="§2.3 N = 0 is valid input: substitute returns int64[0]; N = 1 gives [0]",
       parts=("substitute",), profiles=("core",), shown_to_fail_on=("m22_empty_crash",))
def check_substitute_empty(impl: Any, ctx: Context) -> None:
    """An empty (0, D) array is valid (π = int64[0]) for D = 1, 3, 768; a single row is retained."""
    for d in (1, 3, 768):
        e = np.zeros((0, d), dtype=np.float32)
        ctx.note({"embeddings": e, "t": 0.9})
        out = _accepts(lambda e=e: impl.substitute(e, 0.9), f"substitute of an empty (0, {d}) array (SPEC §2.3: N = 0 is valid)")
        _as_pi(out, 0, f"substitute of an empty (0, {d}) array")
    one = _UNIT[:1, :3].copy()
    pi = _as_pi(_accepts(lambda: impl.substitute(one, 0.5), "substitute of one row"), 1, "substitute of one row")
    assert pi.tolist() == [0], f"a single row is retained: expected π = [0], got {pi.tolist()} (SPEC §1.4)"


@check("substitute.layouts", claim="DEF1",
       spec="§2.4 C/Fortran order, strided, read-only, float64 and big-endian input give the same π",
       parts=("substitute",), profiles=("core",),
       shown_to_fail_on=("m23_ignores_strides", "m24_float64_as_float32", "m25_readonly_refused"))
def check_substitute_layouts(impl: Any, ctx: Context) -> None:
    """The same values in any memory layout or dtype SPEC §2.4 lists give the same π, input untouched."""

    def body(case: tuple[np.ndarray, float]) -> None:
        e, t = case
        want, source = _want(impl, e, t)
        for name, arr in _layouts(e):
            before = np.array(arr, copy=True)
            if name.startswith("big-endian"):  # SPEC §2.4: MAY be refused with ValueError; if accepted, same π
                try:
                    out = impl.substitute(arr, t)
                except ValueError:
                    continue
            else:
                out = _accepts(lambda arr=arr: impl.substitute(arr, t), f"substitute of a {name} array")
            assert np.array_equal(np.asarray(arr), before), f"substitute modified its {name} input (it must not)"
            pi = _as_pi(out, e.shape[0], f"substitute of a {name} array")
            _assert_equal_pi(pi, want, f"substitute of a {name} array (SPEC §2.4: layout never changes π)", source)

    ctx.run(embeddings_and_threshold(min_n=3, max_n=16, min_dim=2, max_dim=10, min_t=0.8, max_t=0.99), body, examples=12)


def _id_width_case() -> tuple[np.ndarray, float, np.ndarray]:
    """65,600 rows in D = 8: three far-apart anchors at ids 0, 65,541 and 65,590, every other
    row an exact copy of the last anchor: π is known from the construction."""
    n, anchors = 65_600, (0, 65_541, 65_590)
    idx = np.zeros(n, dtype=np.int64)
    for k, a in enumerate(anchors):
        idx[a:] = k
    e = _UNIT[idx]
    pi = np.asarray(anchors, dtype=np.int64)[idx]
    return e, 0.9, pi


def _many_retained_case() -> tuple[np.ndarray, float, np.ndarray]:
    """1,100 far-apart rows in D = 16 (all retained), then exact copies of rows 0, 1,023, 1,024,
    1,050 and 1,099: each copy's representative is its original (retained set past 1,024)."""
    rng = np.random.default_rng(20_260_101)
    base = rng.standard_normal((1100, 16))
    base = (base / np.linalg.norm(base, axis=1, keepdims=True)).astype(np.float32)
    t = 0.99
    b64 = base.astype(np.float64)
    gram = b64 @ b64.T
    np.fill_diagonal(gram, -2.0)
    # the construction's promise: no two originals within δ (cos > t), far from the tie band
    assert float(gram.max()) < t - 0.01, f"construction failed: max cos {gram.max()}"
    copies = np.array([0, 1023, 1024, 1050, 1099, 5, 1090], dtype=np.int64)
    e = np.vstack([base, base[copies]])
    pi = np.concatenate([np.arange(1100), copies])
    return e, t, pi


def _wide_case(d: int) -> tuple[np.ndarray, float]:
    """Rows in D = ``d`` (768 or 1,024): pairs equal on their first 600 coordinates and far apart
    beyond them, exact copies, and near copies (SPEC §2.1 sums every coordinate)."""
    rng = np.random.default_rng(d)
    rows = []
    for _ in range(6):
        head = rng.standard_normal(600) * 0.05
        tail = rng.standard_normal(d - 600)
        x = np.concatenate([head, tail])
        y = np.concatenate([head, -tail])  # same head, opposite tail: far apart
        x, y = x / np.linalg.norm(x), y / np.linalg.norm(y)
        near = x + rng.standard_normal(d) * 1e-4
        rows += [x, y, x.copy(), near / np.linalg.norm(near)]
    return np.asarray(rows, dtype=np.float32), 0.95


@check("substitute.large_ids", claim="DEF1",
       spec="§1.2/§2.1 ids past 65,536, retained sets past 1,024, D = 768 and 1,024",
       parts=("substitute",), profiles=("core",),
       shown_to_fail_on=("m26_uint16_ids", "m27_retained_cap_1024", "m28_dim_buffer_512"), heavy=True)
def check_substitute_large_ids(impl: Any, ctx: Context) -> None:
    """Cheap large cases with π known by construction: ids past 2¹⁶, > 1,024 retained rows, D = 768/1,024."""
    for label, (e, t, want) in (
        ("65,600 rows, representatives past id 65,536", _id_width_case()),
        ("1,100 retained rows, then copies", _many_retained_case()),
    ):
        ctx.note({"case": label, "t": t, "n": e.shape[0]})
        pi = _substitute(impl, e, t, f"substitute ({label})")
        _assert_valid_map(e, t, pi, f"substitute ({label})")
        if impl.complete:
            _assert_equal_pi(pi, want, f"substitute ({label})", "the construction (exact copies, far-apart originals)")
    for d in (768, 1024):
        e, t = _wide_case(d)
        ctx.note({"case": f"D = {d}", "embeddings": e, "t": t})
        pi = _substitute(impl, e, t, f"substitute (D = {d})")
        _assert_valid_map(e, t, pi, f"substitute (D = {d}; every coordinate counts, SPEC §2.1)")
        if impl.complete:
            _assert_equal_pi(pi, oracle(e, t).pi, f"substitute (D = {d})", "the oracle")


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
            out = _accepts(lambda e=e: impl.substitute(e, 0.9), f"{what} (inside the SPEC §2.3 tolerance 1e-4 on ‖e‖)")
            _as_pi(out, e.shape[0], what)
        else:
            _expect_value_error(lambda e=e: impl.substitute(e, 0.9), f"{what} (outside the SPEC §2.3 tolerance 1e-4)", str(row))
    for t in (1.0, -1.0):
        _as_pi(_accepts(lambda t=t: impl.substitute(base, t), f"substitute with t = {t} (SPEC §1.3: [-1, 1] is inclusive)"),
               base.shape[0], f"substitute with t = {t}")
    for t in (1.0 + 1e-7, -1.0 - 1e-7):
        _expect_value_error(lambda t=t: impl.substitute(base, t), f"substitute with t = {t!r} (outside [-1, 1])")


def _two_inputs() -> list[tuple[np.ndarray, float]]:
    a = np.array([[1, 0, 0], [1, 0, 0], [0, 1, 0], [0, 1, 0], [0, 0, 1]], dtype=np.float32)
    b = np.array([[0, 0, 1], [0, 1, 0], [1, 0, 0]], dtype=np.float32)
    return [(a, 0.9), (b, 0.9)]


@check("substitute.fresh_results", claim="DEF1",
       spec="§2.4 a returned π is a fresh array the caller owns: later calls never change it",
       parts=("substitute",), profiles=("core",), shown_to_fail_on=("m33_substitute_static_buffer",))
def check_substitute_fresh_results(impl: Any, ctx: Context) -> None:
    """π from one call is unchanged after a call on different input; writing into it changes nothing later."""
    (a, ta), (b, tb) = _two_inputs()
    first = _substitute(impl, a, ta)
    kept = first.copy()
    _substitute(impl, b, tb)
    assert np.array_equal(first, kept), (
        f"substitute's earlier result changed from {kept.tolist()} to {first.tolist()} when the next call ran on "
        "different input: it must return a fresh array, not a view of a reused buffer (SPEC §2.4)"
    )
    if first.flags.writeable:
        first[:] = -7
        again = _substitute(impl, a, ta)
        assert np.array_equal(again, kept), (
            f"after the caller wrote into a returned π, substitute returned {again.tolist()} for the same input "
            f"(expected {kept.tolist()}): the caller owns the returned array (SPEC §2.4)"
        )


# -------------------------------------------------------------------------------------------
# online (profile online)
# -------------------------------------------------------------------------------------------
@check("online.fresh_results", claim="ONLINE",
       spec="§2.4/§6.1 admit returns a fresh array (the next admit never changes it) and takes turns in any layout",
       parts=("substitute", "online"), profiles=("online",), shown_to_fail_on=("m32_admit_reuses_buffer", "m23_ignores_strides"))
def check_online_fresh_results(impl: Any, ctx: Context) -> None:
    """Results of earlier turns stay as returned while later turns (different rows, sizes, layouts:
    Fortran-ordered, strided, read-only) run; together they equal the batch π."""
    (a, t), (b, _) = _two_inputs()
    session = impl.online_session(t)
    outs, kept = [], []
    strided = np.full((5, 5), 3.0, dtype=np.float32)
    strided[1::2, ::2] = a[:2]
    readonly = b[1:].copy()
    readonly.setflags(write=False)
    turns = (a, np.asfortranarray(b), strided[1::2, ::2], readonly)
    layouts = ("C-ordered", "Fortran-ordered", "strided", "read-only")
    for k, turn in enumerate(turns):
        out = _accepts(lambda turn=turn: session.admit(turn), f"admit of turn {k} ({layouts[k]}, SPEC §2.4)")
        out = _as_pi(out, turn.shape[0], f"admit of turn {k}")
        outs.append(out)
        kept.append(out.copy())
    for k, (out, copy) in enumerate(zip(outs, kept)):
        assert np.array_equal(out, copy), (
            f"the result of turn {k} changed from {copy.tolist()} to {out.tolist()} after later turns: admit must return "
            "a fresh array the caller owns, not a view of session state or a reused buffer (SPEC §2.4, §6.1)"
        )
    e = np.vstack([a, b, a[:2], b[1:]])
    _assert_equal_pi(np.concatenate(kept), _want(impl, e, t)[0], "online over four turns", "the batch π")


@check("online.empty_turns", claim="ONLINE",
       spec="§6.1 an empty turn is valid, returns int64[0], takes no id, and (as the first turn) fixes D",
       parts=("substitute", "online"), profiles=("online",), shown_to_fail_on=("m31_dim_from_nonempty_only",))
def check_online_empty_turns(impl: Any, ctx: Context) -> None:
    """Empty (0, D) turns anywhere in a session; the first accepted turn, even empty, fixes the dimension."""
    (a, t), _ = _two_inputs()
    d = a.shape[1]
    session = impl.online_session(t)
    outs = []
    for k, turn in enumerate((np.zeros((0, d), np.float32), a[:2], np.zeros((0, d), np.float32), a[2:])):
        out = _accepts(lambda turn=turn: session.admit(turn), f"admit of turn {k} with {turn.shape[0]} rows (SPEC §6.1)")
        outs.append(_as_pi(out, turn.shape[0], f"admit of turn {k} ({turn.shape[0]} rows)"))
    _assert_equal_pi(np.concatenate(outs), _want(impl, a, t)[0], "online with empty turns (they take no ids)", "the batch π")
    fresh = impl.online_session(t)
    _as_pi(_accepts(lambda: fresh.admit(np.zeros((0, d), np.float32)), "admit of an empty first turn"), 0, "admit of an empty first turn")
    other = np.eye(d + 1, dtype=np.float32)[:2]
    _expect_value_error(
        lambda: fresh.admit(other),
        f"admit of D = {d + 1} rows after an empty first turn of D = {d} (SPEC §6.1: the first accepted turn fixes D)",
    )


@check("online.rejected_turn", claim="VALID",
       spec="§6.1 a rejected turn leaves the session exactly as it was, including its dimension and next id",
       parts=("substitute", "online"), profiles=("online",), shown_to_fail_on=("m34_dim_fixed_before_validation",))
def check_online_rejected_turn(impl: Any, ctx: Context) -> None:
    """A fresh session whose first turn is rejected has no dimension yet and starts at id 0; rejected
    turns later (bad row, wrong D, wrong rank) change nothing."""
    (a, t), _ = _two_inputs()
    d = a.shape[1]
    bad_wide = np.eye(d + 2, dtype=np.float32)[:3]
    bad_wide[1, 0] = np.nan
    session = impl.online_session(t)
    _expect_value_error(lambda: session.admit(bad_wide), f"admit of a first turn of D = {d + 2} with a NaN in row 1", "1")
    first = _as_pi(_accepts(lambda: session.admit(a[:3]), f"admit of D = {d} rows after a rejected first turn of D = {d + 2} "
                             "(a rejected turn fixes no dimension, SPEC §6.1)"), 3, "admit after a rejected first turn")
    for what, bad in (
        ("a NaN row", np.vstack([a[3:], np.full((1, d), np.nan, np.float32)])),
        (f"D = {d + 1}", np.eye(d + 1, dtype=np.float32)[:2]),
        ("a 1-D array", a[3].copy()),
        ("a zero row", np.vstack([a[3:4], np.zeros((1, d), np.float32)])),
    ):
        _expect_value_error(lambda bad=bad: session.admit(bad), f"admit of a turn with {what}")
    rest = _as_pi(session.admit(a[3:]), a.shape[0] - 3, "admit after rejected turns")
    _assert_equal_pi(np.concatenate([first, rest]), _want(impl, a, t)[0],
                     "online after rejected turns (ids must continue from the accepted rows only)", "the batch π")


# -------------------------------------------------------------------------------------------
# L0 (profiles l0, l0-stubs)
# -------------------------------------------------------------------------------------------
#: Every character Python's ``str.isspace`` calls whitespace: SPEC §7.1's set, listed there.
UNICODE_WHITESPACE = "\t\n\x0b\x0c\r\x1c\x1d\x1e\x1f \x85\xa0\u1680" + "".join(map(chr, range(0x2000, 0x200B))) + \
    "\u2028\u2029\u202f\u205f\u3000"
#: Characters that look blank but are not whitespace (SPEC §7.1): lines of them are ordinary.
NOT_WHITESPACE = "\u200b\u200c\u200d\u2060\ufeff\u180e"


def _text_cases(prefix: str) -> list[tuple[str, list[str]]]:
    ws_lines = [c * 2 for c in UNICODE_WHITESPACE if c != "\n"]
    return [
        ("CRLF line ends: 'a\\r' and 'a' differ", ["a\r\nb\r\nc\n", "a\nb\r\nc\r\n", "a\r\nb\nc"]),
        ("lone CR inside a line (not a line break)", ["x\ry\nx\nx\ry", "y\nx\ry\r"]),
        ("trailing and leading whitespace matter", ["foo \nfoo\n foo\nfoo\t", "foo\nfoo \n foo"]),
        ("Unicode whitespace lines are blank (never dropped)", ["\n".join(ws_lines), "\n".join(ws_lines + ws_lines)]),
        ("invisible non-whitespace lines are ordinary lines", ["\n".join(NOT_WHITESPACE), "\n".join(NOT_WHITESPACE[::-1])]),
        ("U+2028, U+0085, \\x0b, \\x0c inside a line do not split it",
         ["a\u2028b\nc\x85d\ne\x0bf\ng\x0ch", "a\nb\na\u2028b\nc\x85d\ne\x0bf\ng\x0ch"]),
        ("non-Latin text, NFC vs NFD", ["日本語の行\nΕλληνικά\n\u00e9t\u00e9\n😀 emoji", "Ελληνικά\ne\u0301te\u0301\n日本語の行\n😀 emoji"]),
        ("the stub prefix inside a line is not a stub", [f"x {prefix}y\n {prefix}z\nq{prefix}", f"x {prefix}y\n {prefix}z\nq{prefix}"]),
        ("the stub prefix at the start is a stub", [f"{prefix}a]\n{prefix}a]", f"{prefix}a]"]),
        ("empty records and empty lines", ["", "\n", "x\n\nx", ""]),
        ("no records at all", []),
    ]


def _run_lines(impl: Any, records: list[str], label: str, ctx: Context) -> None:
    ctx.note({"case": label, "records": records})
    _lines_semantics.check.func(impl, _Fixed(records, label))


class _Fixed(Context):
    """A context whose ``run`` calls the body once on a fixed case (reuses ``lines.semantics``'s body)."""

    def __init__(self, case: Any, label: str) -> None:
        super().__init__()
        self._case, self._label = case, label

    def run(self, strategy: Any, body: Any, examples: int) -> None:  # noqa: ARG002 - fixed case
        try:
            body(self._case)
        except AssertionError as exc:
            raise AssertionError(f"{self._label}: {exc}") from None


@check("lines.text_edges", claim="L0",
       spec="§7.1 lines split on \\n only; bytes compared exactly; Unicode whitespace lines blank; prefix only at the start",
       parts=("lines",), profiles=("l0", "l0-stubs"), shown_to_fail_on=("m35_lines_crlf_normalised", "m36_lines_prefix_anywhere"))
def check_lines_text_edges(impl: Any, ctx: Context) -> None:
    """CRLF, lone CR, trailing whitespace, every Unicode whitespace character, non-Latin text and the
    stub prefix inside a line, against the SPEC §7 model."""
    for label, records in _text_cases(impl.stub_prefix):
        _run_lines(impl, records, label, ctx)


@check("lines.large", claim="L0",
       spec="§7.2 seen-sets past 1,024 lines; long lines sharing long prefixes are compared whole",
       parts=("lines",), profiles=("l0", "l0-stubs"), shown_to_fail_on=("m37_lines_hash_prefix_256", "m38_lines_seen_cap_1024"))
def check_lines_large(impl: Any, ctx: Context) -> None:
    """1,500 distinct lines then repeats of the earliest; 4,000-character lines differing only at their end."""
    many = [f"line {k:05d} of a long tool output" for k in range(1500)]
    repeats = many[:12] + many[1000:1030] + many[-5:]
    _run_lines(impl, ["\n".join(many), "\n".join(repeats)], "a seen-set past 1,024 lines", ctx)
    stem = "".join(chr(0x41 + (k * 7) % 26) for k in range(4000))
    long_lines = [stem + tail for tail in ("a", "b", "é", "日", "")] + [stem[:300] + "x", stem[:1024] + "y"]
    _run_lines(impl, ["\n".join(long_lines), "\n".join(long_lines[::-1] + [stem + "c"])], "long lines sharing a 4,000-character prefix", ctx)


#: Hand-worked stub lines (SPEC §8.1): ``rR:L`` is the 0-based input record and the 0-based line
#: index *in that record's output* where the run's first line was first kept.
STUB_CASES: list[tuple[str, list[str], list[str]]] = [
    ("runs across records", ["a\nb\nc", "x\nb\nc\ny\na"],
     ["a\nb\nc", "x\n[LAM:L0 2 lines=r0:1]\ny\n[LAM:L0 1 lines=r0:0]"]),
    ("line index counted in output lines, not input lines", ["p\nq", "p\nq\nr", "r\ns"],
     ["p\nq", "[LAM:L0 2 lines=r0:0]\nr", "[LAM:L0 1 lines=r1:1]\ns"]),
    ("blank lines and stubs count as output lines", ["\n[LAM:L1 3=1 d=0.1234]\nz\n", "z\nz"],
     ["\n[LAM:L1 3=1 d=0.1234]\nz\n", "[LAM:L0 2 lines=r0:2]"]),
    ("a repeat inside one record", ["k\nm\nk\nm\nk"], ["k\nm\n[LAM:L0 3 lines=r0:0]"]),
]


@check("lines.stub_format", claim="L0",
       spec="§8.1 L0 stubs byte-exact: [LAM:L0 n lines=rR:L], R input record, L output line, both 0-based",
       parts=("lines",), profiles=("l0-stubs",), shown_to_fail_on=("m39_l0_stub_one_based", "m40_l0_stub_input_lines"))
def check_lines_stub_format(impl: Any, ctx: Context) -> None:
    """STUB_PREFIX is "[LAM:" and every L0 stub is the exact template with its 0-based pointer."""
    assert impl.stub_prefix == "[LAM:", f"profile l0-stubs fixes STUB_PREFIX = '[LAM:', got {impl.stub_prefix!r} (SPEC §8.1)"
    cases = list(STUB_CASES)
    many = [f"row {k}" for k in range(1100)]
    cases.append(("pointers past line 1,024", ["\n".join(many), "\n".join(many[1030:1033] + ["new"] + many[:2])],
                  reference_dedup(["\n".join(many), "\n".join(many[1030:1033] + ["new"] + many[:2])])))
    for label, records, want in cases:
        assert reference_dedup(records) == want, f"the suite's own stub case {label!r} disagrees with the SPEC §7 model"
        ctx.note({"case": label, "records": records, "expected": want})
        got = impl.dedup_lines(list(records))
        assert isinstance(got, list) and len(got) == len(want), f"{label}: dedup_lines returned {_short(got)}"
        for k, (g, w) in enumerate(zip(got, want)):
            assert g == w, f"{label}: record {k}: expected {w!r}, got {g!r} (SPEC §8.1 stub fields, 0-based output positions)"


# -------------------------------------------------------------------------------------------
# L2 codec (profiles codec-bound, codec-v1)
# -------------------------------------------------------------------------------------------
def _roundtrip(impl: Any, x: np.ndarray, eb: float, what: str) -> np.ndarray:
    blob = _accepts(lambda: impl.codec_encode(x, eb), f"codec_encode of {what}")
    assert isinstance(blob, (bytes, bytearray)), f"codec_encode must return bytes, got {type(blob).__name__}"
    y = _accepts(lambda: impl.codec_decode(bytes(blob)), f"codec_decode of the encoding of {what}")
    assert isinstance(y, np.ndarray) and y.dtype == np.float32 and y.shape == (x.size,), (
        f"codec_decode of {what} must return float32[{x.size}], got {type(y).__name__} {getattr(y, 'dtype', '')} "
        f"{getattr(y, 'shape', '')}"
    )
    return y


def _bound_violation(x: np.ndarray, y: np.ndarray, eb: float) -> str | None:
    from .checks import codec_slack

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
        y = _roundtrip(impl, x, eb, f"a vector of {x.size} value(s)")
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
            got = _accepts(lambda arr=arr: impl.codec_encode(arr, eb), f"codec_encode of a {name} vector (SPEC §9.4)")
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
    y = _roundtrip(impl, x, eb, f"{x.size} values with |x|/(2eb) up to 2**31 - 2")
    problem = _bound_violation(x, y, eb)
    assert problem is None, f"codes near 2**31: {problem} (SPEC §9.3; compute the quotient in float64)"
    for scale, what in ((1e30, "magnitudes near 1e30"), (1e-30, "magnitudes near 1e-30")):
        xs = (x * np.float32(scale)).astype(np.float32)
        ebs = float(np.max(np.abs(xs.astype(np.float64)))) / 2**30
        ys = _roundtrip(impl, xs, ebs, what)
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
_V1_HEAD = struct.Struct("<4sBBHQd")


def v1_stream(block: int, n: int, eb: float, rates: bytes, payload: bytes, *, magic: bytes = b"LSZP",
              version: int = 1, flags: int = 0, crc: int | None = None) -> bytes:
    """A version-1 stream from its fields, CRC-32 computed unless given (docs/codec.md)."""
    head = _V1_HEAD.pack(magic, version, flags, block, n, eb)
    body = rates + payload
    value = zlib.crc32(head + body) if crc is None else crc
    return head + struct.pack("<I", value) + body


#: docs/codec.md's worked example: n = 40, eb = 0.5, x = [2.5, -0.5, 1.0 x30, -1.5, -1.0, 0.25 x6].
HAND_X = np.array([2.5, -0.5] + [1.0] * 30 + [-1.5, -1.0] + [0.25] * 6, dtype=np.float32)
HAND_STREAM = v1_stream(32, 40, 0.5, bytes([2, 1]), bytes.fromhex("40000000E0000000C0000000" "80000000A0000000"))
HAND_DECODED = np.array([3, 0] + [1] * 30 + [-1, -1] + [0] * 6, dtype=np.float32)


def _split_v1(blob: bytes) -> tuple[tuple[Any, ...], bytes]:
    return _V1_HEAD.unpack(blob[:24]), blob[28:]


@check("codec.v1_format", claim="L2",
       spec="§9.4 codec-v1: the bytes of docs/codec.md exactly; streams of any valid block size decode",
       parts=("codec",), profiles=("codec-v1",), shown_to_fail_on=("m43_codec_v1_fixed_block",))
def check_codec_v1_format(impl: Any, ctx: Context) -> None:
    """The worked example byte for byte, streams written with block sizes 8, 64 and 4,096 decode
    exactly, and encodings equal the v1 reference encoder's bytes."""
    from .. import codec as ref

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
            y = _accepts(lambda stream=stream: impl.codec_decode(stream), f"codec_decode of a v1 stream with block size {block}")
            want_y = ref.codec_decode(stream)
            assert np.array_equal(np.asarray(y).view(np.uint32), want_y.view(np.uint32)), (
                f"n = {n}, block size {block}: decoded values differ from the stream's (SPEC §9.4: B comes from the header)"
            )


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
    y = _accepts(lambda: impl.codec_decode(base), "codec_decode of a valid v1 stream of 45 values")
    assert np.asarray(y).shape == (45,), f"the valid stream decodes to shape {np.asarray(y).shape}"
    for what, blob in _refusal_cases():
        ctx.note({"case": what, "bytes": blob})
        _expect_value_error(lambda blob=blob: impl.codec_decode(blob), f"codec_decode of a v1 stream with {what}")
    for eb in (1e308, float(np.finfo(np.float64).max)):
        _expect_value_error(lambda eb=eb: impl.codec_encode(HAND_X, eb), f"codec_encode with eb = {eb!r} (2·eb overflows, SPEC §9.4)")


# -------------------------------------------------------------------------------------------
# session save format (profile session-v1)
# -------------------------------------------------------------------------------------------
@check("session.v1_roundtrip", claim="ONLINE",
       spec="§6.3 a saved session restores (own reader and lam_ref's v1 reader) and decides as if it never stopped",
       parts=("substitute", "online", "session"), profiles=("session-v1",), shown_to_fail_on=("m45_session_restarts",))
def check_session_v1_roundtrip(impl: Any, ctx: Context) -> None:
    """Save after some turns, restore, continue: equal to the batch π; the file is save format v1
    (lam_ref's reader restores it too, and the implementation restores lam_ref's files); a cut file is refused."""
    from ..online import OnlineSession as RefSession

    def body(case: tuple[np.ndarray, float]) -> None:
        e, t = case
        n = e.shape[0]
        half = n // 2
        want, source = _want(impl, e, t)
        with tempfile.TemporaryDirectory(prefix="lam-session-") as tmp:
            path = os.path.join(tmp, "s.lamsession")
            session = impl.online_session(t)
            first = _as_pi(session.admit(e[:half]), half, "admit before saving")
            impl.session_save(session, path)
            restored = _accepts(lambda: impl.session_load(path, t), "session_load of the implementation's own save")
            rest = _as_pi(restored.admit(e[half:]), n - half, "admit after session_load")
            _assert_equal_pi(np.concatenate([first, rest]), want, "save, restore, continue", source)
            ref = _accepts(lambda: RefSession.load(path, t=t), "lam_ref's v1 reader on the implementation's save file")
            rest_ref = ref.admit(e[half:]).pi
            assert np.array_equal(rest_ref, want[half:]) or not impl.complete, (
                "lam_ref's reader restored the implementation's file but continued differently (SPEC §6.3 save format v1)"
            )
            theirs = RefSession(t, exhaustive=True)
            theirs.admit(e[:half])
            other = os.path.join(tmp, "ref.lamsession")
            theirs.save(other)
            mine = _accepts(lambda: impl.session_load(other, t), "session_load of a file lam_ref wrote (save format v1)")
            cont = _as_pi(mine.admit(e[half:]), n - half, "admit after loading lam_ref's file")
            if impl.complete:
                _assert_equal_pi(cont, want[half:], "continuing a session lam_ref saved", source)
            with open(path, "rb") as fh:
                data = fh.read()
            cut = os.path.join(tmp, "cut.lamsession")
            with open(cut, "wb") as fh:
                fh.write(data[: len(data) // 2])
            _expect_value_error(lambda: impl.session_load(cut, t), "session_load of a save file cut in half (SPEC §6.3)")

    fixed = _two_inputs()[0]
    ctx.note({"embeddings": fixed[0], "t": fixed[1]})
    body(fixed)  # a fixed case first: distinct rows on both sides of the save
    ctx.run(embeddings_and_threshold(min_n=2, max_n=24, min_dim=2, max_dim=8, min_t=0.8, max_t=0.99), body, examples=6)
