"""Checks of the area ``lines``: L0 exact line deduplication over residual records (SPEC §7, §8.1; the
SPEC item ``L0``).

The semantics against the SPEC §7 model (:func:`expected_dedup`, the projection of lam_ref's one
L0 reference model :func:`lam_ref.text.lines.reference_tokens`); text edges (CRLF, lone CR,
trailing and Unicode whitespace, non-Latin text, the stub prefix inside a line); large seen-sets
and long lines sharing prefixes; the byte-exact stub fields (profile ``l0-stubs``); lines equal
only after normalisation are different lines; the caller's list is left alone.
"""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

from ...text.lines import reference_dedup, reference_tokens
from ..asserts import short
from ..harness import Context, check
from ..hazards import l0_key_cases
from ..strategies import residual_records


def expected_dedup(records: list[str], stub_prefix: str) -> list[list[tuple[str, str | None]]]:
    """The SPEC §7 model: per record, a list of ``("keep", line)`` and ``("stub", None)`` tokens.

    A line is dropped iff an equal line (same UTF-8 bytes, hence same XXH3-64) was kept earlier in
    the trajectory; blank/whitespace-only lines and stub lines are kept and never registered; a
    maximal run of dropped lines becomes one stub. The projection of lam_ref's one L0 reference
    model (:func:`lam_ref.text.lines.reference_tokens`) onto what every implementation shares
    (a stub's text is the implementation's own).
    """
    return [
        [("keep", tok[1]) if tok[0] == "keep" else ("stub", None) for tok in rec]
        for rec in reference_tokens(records, stub_prefix)
    ]


@check("lines.semantics", claim="L0", spec="§7 exact line dedup over residual records; one stub per run", parts=("lines",), profiles=("l0", "l0-stubs"), shown_to_fail_on=("m12_l0_dedups_blank", "m13_l0_per_record", "m14_l0_stub_per_line", "m15_l0_dedups_stubs"))
def check_lines_semantics(impl: Any, ctx: Context) -> None:
    """dedup_lines drops exactly the repeated lines (across and within records), one stub line per run."""
    prefix = impl.stub_prefix

    def body(records: list[str]) -> None:
        out = impl.dedup_lines(list(records))
        assert isinstance(out, list) and all(isinstance(r, str) for r in out), (
            f"dedup_lines must return a list of str, got {short(out)}"
        )
        assert len(out) == len(records), f"dedup_lines returned {len(out)} records for {len(records)} (SPEC §7)"
        for k, (tokens, got) in enumerate(zip(expected_dedup(records, prefix), out)):
            lines = got.split("\n")
            want = [line if kind == "keep" else f"<a line starting with {prefix!r}>" for kind, line in tokens]
            assert len(lines) == len(tokens), (
                f"record {k}: expected {len(tokens)} lines after dedup, got {len(lines)}\n"
                f"input:    {short(records[k].split(chr(10)))}\nexpected: {short(want)}\ngot:      {short(lines)}"
            )
            for pos, ((kind, line), have) in enumerate(zip(tokens, lines)):
                if kind == "keep":
                    assert have == line, (
                        f"record {k} line {pos}: expected the kept line {line!r}, got {have!r} "
                        "(only lines seen earlier are dropped; blank and stub lines always stay; SPEC §7)"
                    )
                else:
                    assert have.startswith(prefix), (
                        f"record {k} line {pos}: a run of repeated lines must become one stub line starting "
                        f"with STUB_PREFIX {prefix!r}, got {have!r} (SPEC §7, §15)"
                    )

    ctx.run(residual_records(prefix), body, examples=120)


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
    check_lines_semantics.check.func(impl, _Fixed(records, label))


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
        assert isinstance(got, list) and len(got) == len(want), f"{label}: dedup_lines returned {short(got)}"
        for k, (g, w) in enumerate(zip(got, want)):
            assert g == w, f"{label}: record {k}: expected {w!r}, got {g!r} (SPEC §8.1 stub fields, 0-based output positions)"


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


@check("lines.key_collisions", claim="L0",
       spec="§7.1 a line's key is its exact UTF-8 bytes: 32-bit hash collisions, NUL, lone CR and prototype names are distinct lines",
       parts=("lines",), profiles=("l0", "l0-stubs"),
       shown_to_fail_on=("m152_l0_java_hash_key", "m153_l0_fnv1a32_key", "m154_l0_djb2_key", "m155_l0_key_cut_at_nul",
                         "m156_l0_prototype_names"))
def check_lines_key_collisions(impl: Any, ctx: Context) -> None:
    """Lines colliding under Java hashCode, FNV-1a 32 and djb2, lines with NUL and lone CR, and lines
    named like Object.prototype members or Python dunders, against the SPEC §7 model."""
    for label, records, _flags in l0_key_cases():
        _run_lines(impl, records, label, ctx)
    # differential: records drawn from the hazardous lines in any order and multiplicity (more under --thorough)
    hazards = sorted({line for _, records, _ in l0_key_cases() for r in records for line in r.split("\n")})
    records = st.lists(st.lists(st.sampled_from(hazards), max_size=10).map("\n".join), max_size=4)
    ctx.run(records, lambda recs: _run_lines(impl, recs, "generated records of hazardous lines", ctx), 25)
