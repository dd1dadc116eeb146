"""Each distinct window text encoded once per run (SPEC §4.4; issue 26 §1).

* :class:`~lam_ref.text.reuse.EncodingCache` against a plain encoder: the same rows in the same
  order as encoding every text (the hashing encoder is batch-independent, so exactly), each distinct
  text through the encoder once, in first-occurrence order, keyed by its text and never by its
  position; bounded memory; ``enabled=False`` encodes everything; one cache per encoder.
* ``lam-ref compact`` on shared SWE-agent replays with the real MiniLM encoder: reuse leaves every
  deletion and map digest as a run that encodes every window (``--no-reuse``), and reports the
  counts in the table and the JSON (skipped without ``../shared/data``).
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from lam_ref.cli import main
from lam_ref.geometry import LamValueError
from lam_ref.text.encoders import HashingEncoder
from lam_ref.text.reuse import EncodingCache, text_key

#: Few distinct texts, so that draws repeat them (the case reuse is for); a lone surrogate and an
#: empty text among them.
TEXTS = st.sampled_from(["", "ok", "ok ", "Ok", "def f():\n    return 1\n", "x" * 300, "caf\u00e9", "\ud800 lone",
                         "1 passed in 0.01s"])


class Recording(HashingEncoder):
    """The hashing encoder, recording every text it is asked to encode."""

    def __init__(self) -> None:
        super().__init__(64)
        self.seen: list[str] = []

    def _encode(self, texts, batch_size, progress):
        self.seen.extend(texts)
        return super()._encode(texts, batch_size, progress)


@given(calls=st.lists(st.lists(TEXTS, max_size=12), min_size=1, max_size=4))
def test_reuse_returns_the_plain_rows_and_encodes_each_distinct_text_once(calls):
    """SPEC §4.4: the rows equal encoding every text; over a run, the encoder sees each distinct
    text exactly once, at its first occurrence; the counts add up."""
    enc, plain = Recording(), HashingEncoder(64)
    cache = EncodingCache()
    first_seen: list[str] = []
    for texts in calls:
        rows, encoded, reused = cache.encode(enc, texts, batch_size=4)
        expected = plain.encode(texts) if texts else np.zeros((0, 64), np.float32)
        assert rows.shape == expected.shape and np.array_equal(rows, expected), \
            f"the rows of {texts!r} are the plain encoder's, in order"
        new = [t for t in dict.fromkeys(texts) if t not in first_seen]
        first_seen.extend(new)
        assert encoded == len(new) and reused == len(texts) - len(new), \
            f"{texts!r}: {encoded} encoded / {reused} reused, expected {len(new)} / {len(texts) - len(new)}"
    assert enc.seen == first_seen, f"each distinct text once, in first-occurrence order: {enc.seen!r}"
    assert (cache.encoded, cache.reused) == (len(first_seen), sum(map(len, calls)) - len(first_seen)), \
        "the cache's totals are the calls' sums"


def test_the_key_is_the_text_not_its_position():
    enc = Recording()
    cache = EncodingCache()
    cache.encode(enc, ["a b", "c d", "e f"], batch_size=2)
    rows, encoded, reused = cache.encode(enc, ["e f", "a b", "c d", "a b"], batch_size=2)
    assert (encoded, reused) == (0, 4), f"the same texts in another order are all reused: {encoded}, {reused}"
    assert np.array_equal(rows, HashingEncoder(64).encode(["e f", "a b", "c d", "a b"])), "rows follow the texts"
    assert text_key("ok") != text_key("ok ") and text_key("\ud800") != text_key("\ud801"), \
        "texts that differ by one character (a lone surrogate included) have different keys"


def test_disabled_cache_encodes_every_window():
    enc = Recording()
    cache = EncodingCache(enabled=False)
    rows, encoded, reused = cache.encode(enc, ["a", "a", "b"], batch_size=2)
    assert (encoded, reused) == (3, 0) and enc.seen == ["a", "a", "b"], f"--no-reuse: every window: {enc.seen}"
    assert np.array_equal(rows[0], rows[1]), "the hashing encoder gives a text one row"


def test_the_cache_is_bounded_and_stays_correct_after_evictions():
    enc = Recording()
    row_bytes = 64 * 4
    cache = EncodingCache(max_bytes=3 * row_bytes)
    texts = [f"text {i}" for i in range(6)]
    cache.encode(enc, texts, batch_size=2)
    assert len(cache) == 3, f"at most 3 rows of {row_bytes} bytes are kept: {len(cache)}"
    rows, encoded, reused = cache.encode(enc, texts[:2] + texts[-1:], batch_size=2)
    assert (encoded, reused) == (2, 1), f"the two oldest were evicted, the newest reused: {encoded}, {reused}"
    assert np.array_equal(rows, HashingEncoder(64).encode(texts[:2] + texts[-1:])), "re-encoded rows are right"


def test_one_cache_per_encoder():
    cache = EncodingCache()
    cache.encode(HashingEncoder(64), ["a"], batch_size=1)
    with pytest.raises(LamValueError, match="one cache per encoder"):
        cache.encode(HashingEncoder(64), ["a"], batch_size=1)
    with pytest.raises(LamValueError, match="max_bytes"):
        EncodingCache(max_bytes=0)


SHARED = Path(__file__).resolve().parents[2].parent / "shared" / "data" / "swe-agent-trajectories"
REPLAYS = sorted((SHARED / "trajectories" / "demonstrations").glob("replay__marshmallow-code*xml*/*.traj"))


@pytest.mark.data
@pytest.mark.skipif(len(REPLAYS) < 2, reason="needs two SWE-agent replays in ../shared/data")
def test_reuse_keeps_every_digest_on_real_replays(tmp_path, capsys):
    """Replays of one task repeat whole windows across files: reuse encodes each text once and the
    deletion sets are those of a run that encodes every window (SPEC §4.4)."""
    a, b = tmp_path / "reuse.json", tmp_path / "all.json"
    assert main(["compact", *map(str, REPLAYS), "--json", str(a), "--no-progress"]) == 0
    out = capsys.readouterr().out
    assert main(["compact", *map(str, REPLAYS), "--json", str(b), "--no-progress", "--no-reuse"]) == 0
    out_all = capsys.readouterr().out
    ra, rb = json.loads(a.read_text()), json.loads(b.read_text())
    for x, y in zip(ra["trajectories"], rb["trajectories"], strict=True):
        assert (x["deletion_digest"], x["map_digest"]) == (y["deletion_digest"], y["map_digest"]), \
            f"{x['id']}: reuse changed the deletion set"
    ta, tb = ra["total"], rb["total"]
    assert tb["windows_reused"] == 0 and tb["windows_encoded"] == tb["chunks"], f"--no-reuse encodes all: {tb}"
    assert ta["windows_reused"] > 0 and ta["windows_encoded"] + ta["windows_reused"] == ta["chunks"], \
        f"the replays repeat windows, and every window is counted once: {ta}"
    assert f"encoding: {ta['windows_encoded']} windows encoded, {ta['windows_reused']} reused" in out, out
    assert "none reused (--no-reuse)" in out_all, out_all
    assert ra["config"]["reuse"] == "distinct-texts" and rb["config"]["reuse"] == "none", "the config says which"


@given(texts=st.lists(TEXTS, max_size=20))
def test_the_probe_encodes_each_distinct_text_once_per_batch_size(texts):
    """SPEC §4.4 for ``determinism probe``: :func:`encode_corpus` gives every text its plain row and
    hands the encoder each distinct text once, in first-occurrence order."""
    from lam_ref.determinism.encoder import encode_corpus
    from lam_ref.text.reuse import distinct_texts

    distinct, inverse = distinct_texts(texts)
    assert distinct == list(dict.fromkeys(texts)), f"first-occurrence order: {distinct!r}"
    assert [distinct[j] for j in inverse] == texts, "inverse maps every text to its copy"
    enc = Recording()
    rows = encode_corpus(texts, enc, 3)
    assert enc.seen == distinct, f"each distinct text once: {enc.seen!r}"
    expected = HashingEncoder(64).encode(texts) if texts else np.zeros((0, 64), np.float32)
    assert np.array_equal(rows, expected), "every text gets its own text's row"
