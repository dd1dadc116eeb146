"""L0 exact line deduplication (SPEC §7; paper §2.2, App. B.1)."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from lam_ref.text.audit import undo_patches
from lam_ref.text.lines import STUB_PREFIX, dedup_lines, dedup_records, is_blank, reference_dedup
from lam_ref.text.stubs import L0Stub, try_parse_stub

LINES = ["alpha", "beta", "gamma = 1", "", "   ", "\t", "\u3000", "\u00a0 ", "\r", "x\r", "é中😀",
         "[LAM:L1 4=1 d=0.1000]", "[LAM:not a stub but protected", "\x1c", "a" * 40]
records = st.lists(st.lists(st.sampled_from(LINES), max_size=12).map("\n".join), max_size=8)


def test_hand_example():
    """Worked by hand: repeats are dropped across and within records, blank lines never are,
    a run of consecutive repeats becomes one stub pointing at the first copy's output line."""
    out = dedup_lines(["a\nb\n\na", "x\nb\na\n\nb\n[LAM:L1 9=2 d=0.0100]\n[LAM:L1 9=2 d=0.0100]"])
    assert out == [
        "a\nb\n\n[LAM:L0 1 lines=r0:0]",
        "x\n[LAM:L0 2 lines=r0:1]\n\n[LAM:L0 1 lines=r0:1]\n[LAM:L1 9=2 d=0.0100]\n[LAM:L1 9=2 d=0.0100]",
    ], f"got {out!r}"


def test_pointer_is_output_line_of_first_copy():
    """The stub's line index counts lines of the *residual* of the first copy's record."""
    out = dedup_lines(["p\np\np\nq", "q"])  # q is input line 3 of record 0 but output line 2
    assert out == ["p\n[LAM:L0 2 lines=r0:0]\nq", "[LAM:L0 1 lines=r0:2]"], f"got {out!r}"


def test_unicode_whitespace_is_blank():
    assert is_blank("\u3000 \t".encode()) and is_blank(b"") and is_blank(b"\x1c"), "str.isspace semantics"
    assert not is_blank("\u200b".encode()) and not is_blank(b" x "), "zero-width space is not whitespace"
    assert dedup_lines(["\u3000\n\u3000"]) == ["\u3000\n\u3000"], "ideographic spaces are blank lines"


@given(recs=records)
def test_equals_the_line_by_line_definition(recs):
    """Claim: the vectorised L0 equals the definition of SPEC §7 run line by line
    (:func:`reference_dedup`). Shown to fail on a variant that checked protection with ASCII
    ``bytes.strip`` only (lines of U+3000 were dropped) and on one with a seen-set per record."""
    assert dedup_lines(recs) == reference_dedup(recs), "vectorised L0 differs from the definition"


@given(recs=records)
def test_no_repeated_content_line_survives(recs):
    """Claim (SPEC §7): after L0 no non-blank, non-stub line occurs twice in the trajectory's
    residual, and every line of the input that is missing from the output is a repeat of a kept
    line. Shown to fail on a wrong L0 that reset its seen-set for each record."""
    out = dedup_lines(recs)
    seen = set()
    for text in out:
        for line in text.split("\n"):
            if line.strip() == "" or line.startswith(STUB_PREFIX):
                continue
            assert line not in seen, f"repeated line {line!r} survived L0"
            seen.add(line)
    for text in recs:
        for line in text.split("\n"):
            assert line.strip() == "" or line.startswith(STUB_PREFIX) or line in seen, f"{line!r} vanished"


@given(recs=records)
def test_stub_pointers_and_patches(recs):
    """Claim: each L0 stub points at an output line equal to the first dropped line of its run, and
    the patches undo each record exactly (the audit of SPEC §8). Shown to fail on a variant that
    pointed at the first copy's *input* line index instead of its output line."""
    res = dedup_records(recs)
    outs = [r.text.split("\n") for r in res]
    for r, (orig, rr) in enumerate(zip(recs, res)):
        assert undo_patches(rr.text, rr.patches) == orig, f"record {r} does not undo to its input"
        for (start, end, moved), stub in zip(rr.patches, rr.stubs):
            line = rr.text.encode()[start:end].decode()
            assert try_parse_stub(line) == stub and isinstance(stub, L0Stub), f"patch span is not its stub: {line!r}"
            first = moved.decode().split("\n")[0]
            assert outs[stub.record][stub.line] == first, "pointer must name the first copy's output line"
            assert len(moved.decode().split("\n")) == stub.count, "count = lines in the run"
