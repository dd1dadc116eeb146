"""lam_ref.evidence: the evidence lines of a patch and their retention after compaction (Table 14,
App. F.3-F.4, SPEC §12). Expected values are worked by hand, never taken from the code's output."""

from __future__ import annotations

import itertools
from fractions import Fraction

import pytest
from hypothesis import given
from hypothesis import strategies as st

from lam_ref.evidence import (
    EvidenceResult,
    evidence_lines,
    evidence_retention,
    relaxed_match,
    summarize_evidence,
)
from lam_ref.geometry import LamValueError

PATCH = """diff --git a/src/fields.py b/src/fields.py
--- a/src/fields.py
+++ b/src/fields.py
@@ -10,3 +10,6 @@ class TimeDelta(Field):
     def _serialize(self, value, attr, obj):
+        seconds = value.total_seconds()
+        else:
+        return int(round(seconds * 1000))\r
-        return int(value.total_seconds() * 1000)
+        seconds = value.total_seconds()
+
"""


def test_evidence_lines_from_unified_diff():
    # added lines: 'seconds = value.total_seconds()' (31 chars, kept once), 'else:' (5, too short),
    # 'return int(round(seconds * 1000))' (CR stripped), '' (blank); '+++ b/...' is a header
    assert evidence_lines(PATCH) == [
        "seconds = value.total_seconds()",
        "return int(round(seconds * 1000))",
    ], f"evidence lines {evidence_lines(PATCH)}"
    assert evidence_lines(PATCH, min_chars=40) == [], "no added line has 40 characters"


def test_evidence_retention_exact_and_relaxed():
    originals = [
        "  10 |     seconds = value.total_seconds()\n  11 |     return int(round(seconds * 1000))\n",
        "nothing relevant here",
    ]
    # the residual keeps line 10 verbatim; line 11 only as a token-dropped paraphrase
    residual = ["  10 |     seconds = value.total_seconds()\n  11 | return int round seconds 1000 )\n", "[stub]"]
    exact = evidence_retention(PATCH, originals, residual)
    assert exact.witnessed_count == 2 and exact.lost == ("return int(round(seconds * 1000))",), f"exact {exact}"
    relaxed = evidence_retention(PATCH, originals, residual, relaxed=True)
    assert relaxed.lost == () and relaxed.intact, f"relaxed match must accept the token-dropped line: {relaxed}"
    unseen = evidence_retention(PATCH, ["unrelated"], ["unrelated"])
    assert unseen.witnessed == () and unseen.intact and unseen.retention == 1, "unwitnessed lines do not count"


def test_evidence_searches_each_text_separately():
    # the line exists only across the boundary of two residual records: it does not survive
    line = "abcdefghijklmnop"
    res = evidence_retention([line], [line], ["abcdefgh", "ijklmnop"])
    assert res.lost == (line,), "a line split across two texts must not be found"


def test_relaxed_match_window_by_hand():
    line = "return foo(bar, baz)"  # tokens return, foo, bar, baz: k = 4, window <= 16 tokens
    assert relaxed_match(line, "return the foo of bar and baz"), "span 7 <= 16"
    assert relaxed_match(line, "return " + "x " * 12 + "foo bar baz"), "span exactly 16 is allowed"
    assert not relaxed_match(line, "return " + "x " * 13 + "foo bar baz"), "span 17 exceeds 4*4"
    assert not relaxed_match(line, "baz bar foo return"), "order matters"
    assert not relaxed_match(line, "Return foo bar baz"), "case-sensitive"
    assert relaxed_match("my_var = 1", "my var 1"), "underscore separates tokens"
    assert relaxed_match("=== ---", "x === --- y") and not relaxed_match("=== ---", "=== --"), "no tokens: substring"


def test_summarize_evidence_micro_and_macro():
    rs = [
        EvidenceResult(("a", "b", "c"), ("c",)),
        EvidenceResult(("d",), ()),
        EvidenceResult((), ()),  # no evidence: not in the macro denominator
    ]
    s = summarize_evidence(rs)
    assert (s.witnessed, s.kept, s.lost) == (4, 3, 1), f"counts {s}"
    assert s.micro == Fraction(3, 4) and s.macro_intact == Fraction(1, 2), f"micro {s.micro}, macro {s.macro_intact}"


# ------------------------------------------------------------------------------------------------
# Property: the relaxed match equals a brute-force search (App. F.4).
# ------------------------------------------------------------------------------------------------


TOKENS = st.sampled_from(["a", "b", "c", "d"])


@st.composite
def line_and_text(draw):
    """A line of 1-4 tokens and a text that embeds it with random gaps between its tokens (so
    spans near the window limit are common), between random prefix and suffix tokens."""
    line = draw(st.lists(TOKENS, min_size=1, max_size=4))
    gaps = draw(st.lists(st.integers(0, 5), min_size=len(line) - 1, max_size=len(line) - 1))
    middle = [line[0]]
    for tok, gap in zip(line[1:], gaps):
        middle += draw(st.lists(TOKENS, min_size=gap, max_size=gap)) + [tok]
    prefix = draw(st.lists(TOKENS, max_size=4))
    suffix = draw(st.lists(TOKENS, max_size=3))
    return line, prefix + middle + suffix


@given(pair=line_and_text(), dil=st.integers(1, 4))
def test_relaxed_match_equals_brute_force(pair, dil):
    """Claim (App. F.4): the relaxed test holds iff some increasing positions p_1 < ... < p_k of
    the text carry the line's tokens in order with ``p_k - p_1 + 1 <= dilation·k``.

    Shown to fail on: a window measured as ``p_k - p_1 <= dilation·k`` (off by one), and on a greedy
    scan that only tries the first occurrence of the first token.
    """
    line, text = pair
    k = len(line)
    want = any(
        all(text[p] == t for p, t in zip(pos, line)) and pos[-1] - pos[0] + 1 <= dil * k
        for pos in itertools.combinations(range(len(text)), k)
    )
    assert relaxed_match(" ".join(line), " ".join(text), dil) == want, f"{line} in {text} at dilation {dil}"


# ------------------------------------------------------------------------------------------------
# min_chars at its edge (a mutant of evidence_lines once escaped the suite; docs/mutation.md).
# ------------------------------------------------------------------------------------------------


def test_evidence_lines_keeps_a_line_of_exactly_min_chars():
    """``min_chars`` is inclusive: a line of exactly that length is evidence (App. F.3, SPEC §12).
    Kills: ``>=`` → ``>`` in ``evidence.evidence_lines`` (then in ``metrics``)."""
    patch = "+++ b/x.py\n+abcde\n+abcd\n"
    assert evidence_lines(patch, min_chars=5) == ["abcde"], f"got {evidence_lines(patch, min_chars=5)}"
    assert evidence_lines(patch, min_chars=6) == [], "a shorter line is dropped"
    with pytest.raises(LamValueError, match="min_chars"):
        evidence_lines(patch, min_chars=-1)
