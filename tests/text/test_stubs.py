"""Stub templates (SPEC §8): fixed, documented, parseable back."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from lam_ref.geometry import LamValueError
from lam_ref.text.stubs import STUB_PREFIX, L0Stub, L1Stub, is_stub_line, parse_stub, try_parse_stub


def test_templates_by_hand():
    """The documented templates, written out (docs/compaction.md)."""
    assert L1Stub(17, 3, 0.21034).render() == "[LAM:L1 17=3 d=0.2103]", "L1 template"
    assert L0Stub(3, 17, 4).render() == "[LAM:L0 3 lines=r17:4]", "L0 template"
    assert STUB_PREFIX == "[LAM:", "the documented prefix"
    assert is_stub_line("[LAM:anything") and not is_stub_line(" [LAM:L1 1=0 d=0.0000]"), "prefix at column 0"
    for d, text in [(0.0, "0.0000"), (1.99996, "2.0000"), (2.0, "2.0000")]:  # the ends of [0, 2] (t = 1 .. -1)
        line = f"[LAM:L1 5=0 d={text}]"
        assert L1Stub(5, 0, d).render() == line and parse_stub(line) == L1Stub(5, 0, float(text)), f"d={text}"


@given(chunk=st.integers(1, 10**9), data=st.data(), d=st.floats(0.0, 2.0))
def test_l1_round_trip(chunk, data, d):
    """Claim: every rendered L1 stub parses back to the same ids and the distance to 4 decimals,
    and rendering the parsed stub gives the same line. Shown to fail on a parser whose integer
    pattern was ``[0-9]`` (single digit) — ids >= 10 did not parse."""
    rep = data.draw(st.integers(0, chunk - 1))
    line = L1Stub(chunk, rep, d).render()
    back = parse_stub(line)
    assert isinstance(back, L1Stub) and (back.chunk, back.rep) == (chunk, rep), f"ids lost in {line!r}"
    assert abs(back.distance - d) <= 5e-5 + 1e-12, f"distance {d} came back as {back.distance}"
    assert back.render() == line, "render(parse(s)) must equal s"
    assert is_stub_line(line), "stubs carry the prefix"


@given(count=st.integers(1, 10**6), record=st.integers(0, 10**6), line_no=st.integers(0, 10**6))
def test_l0_round_trip(count, record, line_no):
    """Claim: every rendered L0 stub parses back to exactly its fields. Shown to fail on the same
    single-digit integer pattern (records and lines >= 10 did not parse)."""
    stub = L0Stub(count, record, line_no)
    line = stub.render()
    assert parse_stub(line) == stub, f"{line!r} did not parse back"
    assert "\n" not in line, "a stub is one line"


@pytest.mark.parametrize("line", [
    "[LAM:L1 3=5 d=0.1000]",  # representative must be a smaller id
    "[LAM:L1 3=1 d=2.5000]",  # distance above 2
    "[LAM:L1 03=1 d=0.1000]",  # leading zero: not canonical
    "[LAM:L0 0 lines=r1:2]",  # empty run
    "[LAM:L0 2 lines=r1:2] ",  # trailing space
    "text that mentions [LAM:L1 3=1 d=0.1000]",
])
def test_not_stubs(line):
    assert try_parse_stub(line) is None, f"{line!r} must not parse as a stub"
    with pytest.raises(LamValueError, match="not a LAM stub"):
        parse_stub(line)


def test_invalid_fields_raise():
    with pytest.raises(LamValueError, match="rep must be a smaller id"):
        L1Stub(2, 2, 0.0)
    with pytest.raises(LamValueError, match="count must be >= 1"):
        L0Stub(0, 1, 1)
