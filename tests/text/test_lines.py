"""L0 exact line deduplication (SPEC §7; paper §2.2, App. B.1)."""

from __future__ import annotations

import os

import pytest
import xxhash
from hypothesis import given
from hypothesis import strategies as st

from lam_ref.geometry import LamValueError
from lam_ref.text import lines as lines_mod
from lam_ref.text.audit import undo_patches
from lam_ref.text.chunking import Tokenizer, get_tokenizer
from lam_ref.text.lines import BACKENDS, STUB_PREFIX, dedup_lines, dedup_records, is_blank, reference_dedup
from lam_ref.text.stubs import L0Stub, try_parse_stub

#: cl100k_base (offline), the unit removal is reported in and the net-positive rule counts in.
TOK = get_tokenizer()

LINES = ["alpha", "beta", "gamma = 1", "", "   ", "\t", "\u3000", "\u00a0 ", "\r", "x\r", "x", "é中😀",
         "[LAM:L1 4=1 d=0.1000]", "[LAM:not a stub but protected", "[x] item", "[LAM", "ok", "ok  ", " ok",
         "\x1c", "\x85", "\u200b", "\x00", "a" * 40]
records = st.lists(st.lists(st.sampled_from(LINES), max_size=12).map("\n".join), max_size=8)


#: Every L0 implementation built here (``c`` and ``python``) runs the tests marked with this.
each_backend = pytest.mark.parametrize("backend", BACKENDS)


def test_extension_is_built():
    """The compiled L0 (``lam_ref/text/_l0.c``) is what `pip install` builds here; without it L0
    falls back to numpy and misses its throughput target (docs/performance.md). Set LAM_REF_PURE_PYTHON=1 to run
    the suite on a machine with no C compiler."""
    if os.environ.get("LAM_REF_PURE_PYTHON") == "1":
        pytest.skip("LAM_REF_PURE_PYTHON=1: the numpy L0 alone is tested")
    assert "c" in BACKENDS, "lam_ref.text._l0 is not built: reinstall (`make venv`) on a machine with a C compiler"


@pytest.mark.skipif("c" not in BACKENDS, reason="the C extension lam_ref.text._l0 is not built")
def test_vendored_xxh3_equals_the_xxhash_package():
    """The vendored xxhash.h gives the same XXH3-64 (seed 0) as the `xxhash` package (SPEC §7), on
    every length class of XXH3 (0, 1-3, 4-8, 9-16, 17-128, 129-240, long)."""
    data = bytes(range(256)) * 8
    for n in [*range(0, 260), 1000, 2047]:
        assert lines_mod._c.xxh3_64(data[:n]) == xxhash.xxh3_64_intdigest(data[:n]), f"length {n}"


def _texts(recs, backend):
    return [r.text for r in dedup_records(recs, backend=backend)]


@each_backend
def test_hand_example(backend):
    """Worked by hand: repeats are dropped across and within records, blank lines never are,
    a run of consecutive repeats becomes one stub pointing at the first copy's output line."""
    out = _texts(["a\nb\n\na", "x\nb\na\n\nb\n[LAM:L1 9=2 d=0.0100]\n[LAM:L1 9=2 d=0.0100]"], backend)
    assert out == [
        "a\nb\n\n[LAM:L0 1 lines=r0:0]",
        "x\n[LAM:L0 2 lines=r0:1]\n\n[LAM:L0 1 lines=r0:1]\n[LAM:L1 9=2 d=0.0100]\n[LAM:L1 9=2 d=0.0100]",
    ], f"got {out!r}"


@each_backend
def test_pointer_is_output_line_of_first_copy(backend):
    """The stub's line index counts lines of the *residual* of the first copy's record."""
    out = _texts(["p\np\np\nq", "q"], backend)  # q is input line 3 of record 0 but output line 2
    assert out == ["p\n[LAM:L0 2 lines=r0:0]\nq", "[LAM:L0 1 lines=r0:2]"], f"got {out!r}"


@each_backend
def test_unicode_whitespace_is_blank(backend):
    assert is_blank("\u3000 \t".encode()) and is_blank(b"") and is_blank(b"\x1c"), "str.isspace semantics"
    assert not is_blank("\u200b".encode()) and not is_blank(b" x "), "zero-width space is not whitespace"
    assert _texts(["\u3000\n\u3000"], backend) == ["\u3000\n\u3000"], "ideographic spaces are blank lines"
    spaces = [chr(c) for c in range(0x110000) if chr(c).isspace() and chr(c) != "\n"]
    got = _texts(["\n".join(spaces * 2)], backend)
    assert got == ["\n".join(spaces * 2)], "every str.isspace character makes a blank (protected) line"
    near = ["\u200b", "\u180e", "\ufeff", "x\u3000", "\u3000x"]  # not blank by str.isspace
    got = _texts(["\n".join(near * 2)], backend)
    assert got == ["\n".join(near) + "\n[LAM:L0 5 lines=r0:0]"], f"non-blank lines are deduplicated: {got!r}"


@each_backend
@given(recs=records)
def test_equals_the_line_by_line_definition(backend, recs):
    """Claim: each L0 implementation equals the definition of SPEC §7 run line by line
    (:func:`reference_dedup`). Shown to fail on a numpy variant that checked protection with ASCII
    ``bytes.strip`` only (lines of U+3000 were dropped) and on one with a seen-set per record; and
    on C variants (``_l0.c`` edited by hand) that: gave a registered line its output index before a
    pending stub took its line, checked blankness on ASCII only, forgot the stub-prefix protection,
    or reset the seen-set after the first record."""
    assert _texts(recs, backend) == reference_dedup(recs), f"L0 ({backend}) differs from the definition"


@given(recs=records, rids=st.lists(st.integers(-(2**70), 2**70), min_size=8, max_size=8))
def test_backends_agree_on_whole_records(recs, rids):
    """Claim: the backends return identical L0Records (text, stub fields, dropped count, audit
    patches), including for record ids beyond int64 (the C pass hands those to numpy)."""
    ids = rids[: len(recs)]
    outs = {b: dedup_records(recs, record_ids=ids, backend=b) for b in BACKENDS}
    for b, out in outs.items():
        assert out == outs["python"], f"backend {b!r} differs from 'python'"


@each_backend
def test_many_distinct_lines(backend):
    """Thousands of distinct lines (the C seen-set grows several times), repeated in a shuffled
    order across records with blank lines between: equal to the definition."""
    import random

    rng = random.Random(7)
    distinct = [f"line {i} " + "x" * rng.randrange(0, 300) for i in range(6000)]
    recs = ["\n".join(rng.choice(distinct) if rng.random() > 0.1 else "  " for _ in range(400)) for _ in range(40)]
    assert _texts(recs, backend) == reference_dedup(recs), f"L0 ({backend}) differs on a large trajectory"


@each_backend
def test_lone_surrogates_fall_back(backend):
    """A str with a lone surrogate has no UTF-8 form; L0 still handles it (surrogatepass), equal to
    the definition, whatever the backend asked for."""
    recs = ["a\ud800\nb", "a\ud800\nb\nc"]
    assert _texts(recs, backend) == reference_dedup(recs) == ["a\ud800\nb", "[LAM:L0 2 lines=r0:0]\nc"]


@each_backend
def test_bad_input_is_named(backend):
    """Bad input names the argument and the value (non-negotiable of the guide)."""
    with pytest.raises(LamValueError, match=r"texts\[1\] must be str, got bytes"):
        dedup_records(["a", b"b"], backend=backend)
    with pytest.raises(LamValueError, match="record_ids has 1 entries for 2 texts"):
        dedup_records(["a", "b"], record_ids=[0], backend=backend)
    with pytest.raises(LamValueError, match="backend must be"):
        dedup_records(["a"], backend="fortran")
    assert dedup_records([], backend=backend) == [], "no records in, no records out"


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


@each_backend
@given(recs=records)
def test_stub_pointers_and_patches(backend, recs):
    """Claim: each L0 stub points at an output line equal to the first dropped line of its run, and
    the patches undo each record exactly (the audit of SPEC §8). Shown to fail on a variant that
    pointed at the first copy's *input* line index instead of its output line."""
    res = dedup_records(recs, backend=backend)
    outs = [r.text.split("\n") for r in res]
    for r, (orig, rr) in enumerate(zip(recs, res)):
        assert undo_patches(rr.text, rr.patches) == orig, f"record {r} does not undo to its input"
        for (start, end, moved), stub in zip(rr.patches, rr.stubs):
            line = rr.text.encode()[start:end].decode()
            assert try_parse_stub(line) == stub and isinstance(stub, L0Stub), f"patch span is not its stub: {line!r}"
            first = moved.decode().split("\n")[0]
            assert outs[stub.record][stub.line] == first, "pointer must name the first copy's output line"
            assert len(moved.decode().split("\n")) == stub.count, "count = lines in the run"


# ---- net-positive stubs (SPEC §7.3) -------------------------------------------------------------

#: Short lines (a stub is 21+ bytes, so a run of these usually stays), long ones (a stub wins), and
#: lines long in bytes but short in cl100k tokens (rulers: 1-2 tokens against a stub's 12), where
#: the byte rule and the token rule disagree.
NP_LINES = ["</output>", "ok", "$", "x", "", "[LAM:L1 4=1 d=0.1000]", "a" * 30, "b" * 60, "c" * 25,
            "def f():", "    return 1", "é中😀", "=" * 67, "=" * 80, "-" * 72, "#" * 40, "0123456789" * 4,
            "the quick brown fox jumps over the lazy dog"]
np_records = st.lists(st.lists(st.sampled_from(NP_LINES), max_size=14).map("\n".join), max_size=8)


@each_backend
@given(recs=np_records)
def test_net_positive_equals_the_line_by_line_definition(backend, recs):
    """Claim (SPEC §7.3): with ``net_positive=True`` each backend equals the definition run line by
    line: a run is stubbed only when its stub has fewer UTF-8 bytes and fewer cl100k tokens than the
    run's lines joined by ``\\n``, else the lines stay (unregistered), and later stub pointers count
    them as output lines. The backends get the Tokenizer (with its byte bound, counting only runs
    that need it); the definition counts every run with the plain counter."""
    got = [r.text for r in dedup_records(recs, backend=backend, net_positive=True, count_tokens=TOK)]
    want = reference_dedup(recs, net_positive=True, count_tokens=TOK.count_many)
    assert got == want, f"net-positive L0 ({backend}) differs from the definition"


@given(recs=np_records, rids=st.lists(st.integers(-(2**70), 2**70), min_size=8, max_size=8))
def test_net_positive_backends_agree_on_whole_records(recs, rids):
    """Claim: with ``net_positive=True`` the backends return identical L0Records (fields, counts,
    patches), also for record ids beyond int64 (stub lengths depend on the id's digits)."""
    ids = rids[: len(recs)]
    outs = {b: dedup_records(recs, record_ids=ids, backend=b, net_positive=True) for b in BACKENDS}
    for b, out in outs.items():
        assert out == outs["python"], f"backend {b!r} differs from 'python' (net-positive)"


@each_backend
@given(recs=np_records)
def test_net_positive_stubs_are_shorter_and_patches_undo(backend, recs):
    """Claim (SPEC §7.3, §8): every stub emitted under ``net_positive`` is shorter than the lines it
    replaced in bytes and in cl100k tokens, each pointer names the first copy's output line, the
    patches undo every record, and no record grows."""
    res = dedup_records(recs, backend=backend, net_positive=True)
    outs = [r.text.split("\n") for r in res]
    for r, (orig, rr) in enumerate(zip(recs, res)):
        assert undo_patches(rr.text, rr.patches) == orig, f"record {r} does not undo to its input"
        assert len(rr.text.encode()) <= len(orig.encode()), f"record {r} grew under net-positive stubs"
        for (start, end, moved), stub in zip(rr.patches, rr.stubs):
            assert end - start < len(moved), f"stub of {end - start} bytes replaced only {len(moved)} bytes"
            st_tok, run_tok = TOK.count(stub.render()), TOK.count(moved.decode())
            assert st_tok < run_tok, f"stub of {st_tok} cl100k tokens replaced a run of only {run_tok}"
            assert outs[stub.record][stub.line] == moved.decode().split("\n")[0], "pointer names the first copy"


@each_backend
def test_net_positive_by_hand(backend):
    """Worked by hand: the repeated run ``</output>\nok`` (12 bytes) stays, as its stub
    ``[LAM:L0 2 lines=r0:0]`` (21 bytes) would add 9; a repeated 60-byte line is stubbed, and its
    pointer counts the two kept lines before its first copy (output line 2 of record 1, where the
    paper's rule, with one stub line there, gives line 1)."""
    long = "b" * 60
    recs = ["</output>\nok", f"</output>\nok\n{long}\nw\n{long}"]
    paper = [r.text for r in dedup_records(recs, backend=backend)]
    net = [r.text for r in dedup_records(recs, backend=backend, net_positive=True)]
    assert paper[1] == f"[LAM:L0 2 lines=r0:0]\n{long}\nw\n[LAM:L0 1 lines=r1:1]", f"paper rule: {paper[1]!r}"
    assert net[1] == f"</output>\nok\n{long}\nw\n[LAM:L0 1 lines=r1:2]", f"net-positive: {net[1]!r}"
    assert net[0] == recs[0], "the first record has no repeat"
    alone = [r.text for r in dedup_records(["</output>", "</output>"], backend=backend, net_positive=True)]
    assert alone == ["</output>", "</output>"], f"a short repeat stays verbatim: {alone!r}"


def _weighted_counter(weights: dict[str, int], stub_tokens: int):
    """A token counter with drawn costs: a text's count is the sum over its lines of the line's
    weight (its length when not drawn); a stub line costs ``stub_tokens``."""

    def count(texts):
        return [sum(stub_tokens if ln.startswith(STUB_PREFIX) else weights.get(ln, len(ln)) for ln in t.split("\n"))
                for t in texts]

    return count


@given(recs=np_records, weights=st.dictionaries(st.sampled_from(NP_LINES), st.integers(0, 30), max_size=len(NP_LINES)),
       stub_tokens=st.integers(0, 40), rids=st.lists(st.integers(0, 10**6), min_size=8, max_size=8, unique=True))
def test_net_positive_token_rule_with_any_counter(recs, weights, stub_tokens, rids):
    """Claim (SPEC §7.3): for any token counter, the C pass, the numpy pass and the definition agree
    exactly under the net-positive rule: whole L0Records between the backends, texts against the
    definition. Costs are drawn per line (a long line may cost 0 tokens, a short one 30) and per
    stub, so runs short in tokens but long in bytes, and the reverse, are both drawn; each stub
    emitted is shorter than its run in bytes and in the counter's tokens."""
    count = _weighted_counter(weights, stub_tokens)
    outs = {b: dedup_records(recs, record_ids=list(range(len(recs))), backend=b, net_positive=True,
                             count_tokens=count) for b in BACKENDS}
    for b, out in outs.items():
        assert out == outs["python"], f"backend {b!r} differs from 'python' under a drawn token counter"
    want = reference_dedup(recs, net_positive=True, count_tokens=count)
    assert [r.text for r in outs["python"]] == want, "the numpy pass differs from the definition"
    for rr in outs["python"]:
        for (_, _, moved), stub in zip(rr.patches, rr.stubs):
            assert count([stub.render()])[0] < count([moved.decode()])[0], "a stub without fewer tokens"
    ids = rids[: len(recs)]
    by_id = {b: dedup_records(recs, record_ids=ids, backend=b, net_positive=True, count_tokens=count)
             for b in BACKENDS}
    assert all(v == by_id["python"] for v in by_id.values()), "backends differ with other record ids"


@each_backend
def test_net_positive_keeps_rulers_short_in_tokens(backend):
    """Worked by hand (SPEC §7.3): a repeated ruler of 70 ``=`` (70 bytes, 2 cl100k tokens) stays
    verbatim, although its stub ``[LAM:L0 1 lines=r0:0]`` (21 bytes) is shorter in bytes: the stub
    is 12 tokens. A repeated 60-byte line of words is stubbed (more tokens than the stub). The
    paper's rule stubs both."""
    ruler, words = "=" * 70, "error: the file could not be opened because it does not exist"
    assert TOK.count(ruler) < TOK.count("[LAM:L0 1 lines=r0:0]") < TOK.count(words), "premise of the example"
    recs = [f"{ruler}\n{words}", f"{ruler}\nx\n{words}"]
    net = [r.text for r in dedup_records(recs, backend=backend, net_positive=True, count_tokens=TOK)]
    assert net == [recs[0], f"{ruler}\nx\n[LAM:L0 1 lines=r0:1]"], f"net-positive: {net!r}"
    paper = [r.text for r in dedup_records(recs, backend=backend)]
    assert paper[1] == "[LAM:L0 1 lines=r0:0]\nx\n[LAM:L0 1 lines=r0:1]", f"paper rule: {paper!r}"


class _SpyTokenizer(Tokenizer):
    """cl100k that records every text it is asked to count."""

    def __init__(self) -> None:
        super().__init__(TOK.name, TOK.encoding)
        self.asked: list[str] = []

    def count_many(self, texts):
        self.asked.extend(texts)
        return super().count_many(texts)


@each_backend
def test_net_positive_counts_only_candidate_runs(backend):
    """Claim (SPEC §7.3, cost): tokens are counted only for runs whose stub is already shorter in
    bytes, each distinct text once, and never for a run longer than ``max_token_bytes`` times its
    stub's tokens (it has more tokens than the stub by the byte bound): here the 3,000-byte run is
    stubbed without being tokenised, a short repeat is never counted, and the decision equals the
    definition's, which counts everything."""
    spy = _SpyTokenizer()
    big = "\n".join(f"line {i} of a long repeated block" for i in range(100))
    assert len(big.encode()) > spy.max_token_bytes * 20, "the block must exceed the byte bound"
    recs = ["</output>\nok", big, "</output>\nok", big, "</output>"]
    got = [r.text for r in dedup_records(recs, backend=backend, net_positive=True, count_tokens=spy)]
    assert got == reference_dedup(recs, net_positive=True, count_tokens=TOK.count_many), "differs from the definition"
    assert got[3] == "[LAM:L0 100 lines=r1:0]", f"the long block is stubbed: {got[3]!r}"
    assert got[2] == "</output>\nok" and got[4] == "</output>", "short repeats stay verbatim"
    assert spy.asked == ["[LAM:L0 100 lines=r1:0]"], f"only the stub is tokenised, got {spy.asked!r}"


@each_backend
def test_net_positive_counter_errors(backend):
    """A counter that fails, or answers with the wrong number of counts or a negative count, stops L0
    with its error (never a partial result); a counter without the net-positive rule is refused."""
    recs = ["a" * 40, "a" * 40]

    def boom(texts):
        raise RuntimeError("counter failed")

    with pytest.raises(RuntimeError, match="counter failed"):
        dedup_records(recs, backend=backend, net_positive=True, count_tokens=boom)
    for bad in (lambda texts: [], lambda texts: [-1] * len(texts), lambda texts: ["3"] * len(texts)):
        with pytest.raises(LamValueError, match="count_tokens must return one non-negative int per text"):
            dedup_records(recs, backend=backend, net_positive=True, count_tokens=bad)
    with pytest.raises(LamValueError, match="count_tokens applies only with net_positive=True"):
        dedup_records(recs, backend=backend, count_tokens=TOK)
    with pytest.raises(LamValueError, match="count_tokens must be a Tokenizer or callable"):
        dedup_records(recs, backend=backend, net_positive=True, count_tokens=3)
