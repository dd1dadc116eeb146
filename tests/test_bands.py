"""The band index (SPEC §5.2, claim ``BAND``; :mod:`lam_ref.bands`): the quantizer and the band
keys (XXH3-64 of each band's int16 codes, App. K.2), the index ``I`` of Algorithm 1, intra-block
pairs and Table 26's recall, each against a definition computed here. Many of these tests were
written for the mutants that survived ``make mutation`` (docs/mutation.md, section ``bands``)."""

from __future__ import annotations

import json

import numpy as np
import pytest
import xxhash
from hypothesis import given
from hypothesis import strategies as st

from lam_ref.bands import (
    BandIndex,
    BandRecall,
    BandSettings,
    band_keys,
    band_quantize,
    band_recall,
    band_slices,
    intra_block_pairs,
    xxh3_64_rows,
)
from lam_ref.geometry import LamValueError, delta_sq, sq_dist

from .datagen import clustered, unit_rows

THRESHOLDS = st.sampled_from([0.5, 0.8, 0.9, 0.95, 0.99])


def _brute_recall(e: np.ndarray, t: float, r: int, rel: float) -> tuple[int, int, int]:
    keys = band_keys(e, BandSettings(r=r, rel=rel))
    d2 = delta_sq(t)
    true = found = cand = 0
    for i in range(e.shape[0]):
        for j in range(i + 1, e.shape[0]):
            c = bool((keys[i] == keys[j]).any())
            w = sq_dist(e[i], e[j]) <= d2
            cand += c
            true += w
            found += c and w
    return true, found, cand


@pytest.mark.parametrize("block", [1, 3, 7, 64])
def test_band_recall_is_independent_of_the_block_size(block):
    """Table 26's counts are over all pairs ``i < j``: processing the rows in blocks of any size
    (1, 3, 7 and more than N) gives the counts of a plain double loop."""
    e = clustered(np.random.default_rng(5), 23, 6, dup=0.5, spread=(0.01, 0.3))
    want = _brute_recall(e, 0.9, 2, 0.5)
    rec = band_recall(e, 0.9, r=2, rel=0.5, block=block)
    got = (rec.true_pairs, rec.true_pairs_found, rec.candidate_pairs)
    assert got == want, f"block = {block}: (true, found, candidates) {got} != {want}"
    assert want[0] > 0 and want[2] > 0, "the fixture must have true pairs and candidates"


def test_band_recall_record_and_its_rates():
    """The record carries the settings and the rates: recall = found/true (1.0 without true
    pairs), candidate rate = candidates/all pairs (0.0 without pairs); JSON carries both."""
    e = clustered(np.random.default_rng(2), 12, 4, dup=0.5, spread=(0.01, 0.2))
    rec = band_recall(e, 0.95, r=3, rel=0.4)
    assert (rec.n, rec.dim, rec.t, rec.r, rec.rel, rec.total_pairs) == (12, 4, 0.95, 3, 0.4, 66), f"{rec}"
    assert rec.recall == rec.true_pairs_found / rec.true_pairs, f"recall of {rec}"
    assert rec.candidate_rate == rec.candidate_pairs / 66, f"candidate rate of {rec}"
    j = json.loads(json.dumps(rec.to_json()))
    assert j["recall"] == rec.recall and j["candidate_rate"] == rec.candidate_rate and j["n"] == 12, f"{j}"
    assert type(j["total_pairs"]) is int, f"a pair count is an integer in the report: {j['total_pairs']!r}"
    default = band_recall(e, 0.95)
    assert (default.r, default.rel) == (4, 0.2), f"the defaults are the band settings' (Table 4): {default}"
    assert default == band_recall(e, 0.95, r=BandSettings().r, rel=BandSettings().rel), "defaults = BandSettings()"
    one = band_recall(e[:1], 0.95, r=3, rel=0.4)
    assert (one.n, one.dim, one.total_pairs, one.true_pairs, one.true_pairs_found, one.candidate_pairs) == (1, 4, 0, 0, 0, 0), (
        f"{one}"
    )
    assert (one.r, one.rel, one.t) == (3, 0.4, 0.95), f"settings carried for N = 1: {one}"
    assert one.recall == 1.0 and one.candidate_rate == 0.0, "no pairs: recall 1, candidate rate 0"
    none = BandRecall(3, 2, 0.9, 4, 0.2, 3, 0, 0, 1)
    assert none.recall == 1.0 and none.candidate_rate == 1 / 3, f"{none}"
    with pytest.raises(LamValueError, match=r"row 0 has norm 2"):
        band_recall(e * 2.0, 0.9)
    scaled = band_recall(e * 2.0, 0.95, r=3, rel=0.4, normalize=True)
    assert scaled.true_pairs == rec.true_pairs, "normalize=True rescales rows to unit norm"


def test_band_settings_json_and_slices():
    """Settings serialise as ``{"r", "rel"}`` (the defaults of Table 4 are ``r = 4``,
    ``rel = 0.2``); bands are contiguous, the last shorter when ``r`` does not divide ``D``."""
    assert BandSettings().to_json() == {"r": 4, "rel": 0.2}, "default settings"
    assert BandSettings(r=np.int64(2), rel=1).to_json() == {"r": 2, "rel": 1.0}, "normalised to int and float"
    assert band_slices(10, 4) == [(0, 4), (4, 8), (8, 10)], "D = 10, r = 4"
    assert band_slices(8, 4) == [(0, 4), (4, 8)], "r divides D"
    assert band_slices(3, 5) == [(0, 3)], "r > D: one short band"
    with pytest.raises(LamValueError, match=r"^r must be a positive integer, got 0$"):
        band_slices(4, 0)


def test_band_quantize_checks_its_inputs_and_overflow():
    """Codes are ``rint(e/(2ε))`` as int16; a rank other than 2 is refused naming the shape; a
    code beyond int16 is refused (with or without ``validated_unit``), naming ``rel``."""
    e = unit_rows(np.random.default_rng(3), 5, 9)
    q = band_quantize(e, 0.5)
    assert q.dtype == np.int16, "int16 codes"
    assert np.array_equal(band_quantize(e, 0.5, validated_unit=True), q), "validated_unit gives the same codes"
    with pytest.raises(LamValueError, match=r"^embeddings must be 2-D \(N, D\), got shape \(9,\)$"):
        band_quantize(e[0], 0.5)
    for validated in (False, True):
        with pytest.raises(LamValueError, match=r"^rel=1e-06 is too small: a quantized code overflows int16 \(max \|q\| = \d+\)$"):
            band_quantize(e, 1e-6, validated_unit=validated)
    big = np.array([[60000.0, 0.0]])  # not a unit row: the range is scanned unless validated_unit
    with pytest.raises(LamValueError, match="overflows int16"):
        band_quantize(big, 1.0)
    edge = np.array([[32767.0 * 2 * 1.0 / np.sqrt(2), -32768.0 * 2 * 1.0 / np.sqrt(2)]])
    assert band_quantize(edge, 1.0).tolist() == [[32767, -32768]], "the int16 range itself is accepted"
    with pytest.raises(LamValueError, match=r"^rel must be a positive finite number, got 0\.0$"):
        band_quantize(e, 0.0)
    assert band_quantize(np.zeros((0, 3)), 0.2).shape == (0, 3), "no rows: no codes"


def test_xxh3_of_empty_rows_and_long_rows():
    """XXH3-64 of zero rows is empty; of zero-length rows it is the hash of the empty string;
    rows longer than 16 bytes go through the xxhash package (SPEC §5)."""
    assert xxh3_64_rows(np.zeros((0, 4), np.uint8)).shape == (0,), "no rows"
    assert xxh3_64_rows(np.zeros((0, 4), np.uint8)).dtype == np.uint64, "uint64 even when empty"
    empty = xxh3_64_rows(np.zeros((2, 0), np.uint8))
    assert empty.tolist() == [xxhash.xxh3_64_intdigest(b"")] * 2, "zero-length rows hash the empty string"
    data = np.arange(2 * 40, dtype=np.uint8).reshape(2, 40)
    assert xxh3_64_rows(data).tolist() == [xxhash.xxh3_64_intdigest(r.tobytes()) for r in data], "40-byte rows"


def test_band_keys_of_a_single_band_and_of_one_row():
    """With ``r >= D`` there is one band (the whole code vector); one row gives one key row."""
    e = unit_rows(np.random.default_rng(4), 3, 5)
    keys = band_keys(e, BandSettings(r=8, rel=0.5))
    q = band_quantize(e, 0.5)
    assert keys.shape == (3, 1), f"one band: {keys.shape}"
    assert keys[:, 0].tolist() == [xxhash.xxh3_64_intdigest(row.astype("<i2").tobytes()) for row in q], "whole-row key"
    assert np.array_equal(band_keys(e[:1], BandSettings(r=2, rel=0.5)), band_keys(e, BandSettings(r=2, rel=0.5))[:1]), (
        "a row's keys do not depend on the other rows"
    )


def _brute_query(stored: list[np.ndarray], query: np.ndarray) -> list[tuple[int, int]]:
    return [(r, p) for r in range(query.shape[0]) for p, k in enumerate(stored) if (k == query[r]).any()]


def test_band_index_single_rows_bulk_rows_and_raw_queries():
    """Algorithm 1's index: rows added one at a time (the buffer) and in bulk (more than 16 rows:
    the main level) are all found; one query row, many query rows and ``unique=False`` (raw
    matches, one per shared band) agree with a brute-force scan; size and memory grow with
    every entry."""
    rng = np.random.default_rng(9)
    nb = 3
    idx = BandIndex()
    assert len(idx) == 0 and idx.nbytes == 0, "an empty index"
    for m in (1, 2):
        empty_r, empty_p = idx.query(rng.integers(0, 3, size=(m, nb)).astype(np.uint64))
        assert empty_r.size == 0 and empty_p.size == 0, "an empty index proposes nothing"
        assert empty_r.dtype == np.int64 and empty_p.dtype == np.int64, "empty results are int64 ids (usable as indices)"
    stored: list[np.ndarray] = []
    for size in (1, 1, 20, 2, 1, 17):
        keys = rng.integers(0, 3, size=(size, nb)).astype(np.uint64)
        idx.add(keys, np.arange(len(stored), len(stored) + size))
        stored.extend(keys)
        assert len(idx) == len(stored) * nb, f"{len(idx)} entries for {len(stored)} rows of {nb} bands"
        assert idx.nbytes == 16 * len(stored) * nb, "16 bytes per band entry"
        for m in (1, 2, 4):
            query = rng.integers(0, 4, size=(m, nb)).astype(np.uint64)
            rows, pos = idx.query(query)
            assert rows.dtype == np.int64 and pos.dtype == np.int64, "int64 ids"
            miss = idx.query(np.full((m, nb), 99, dtype=np.uint64))
            assert miss[0].size == 0 and miss[0].dtype == np.int64 and miss[1].dtype == np.int64, "no match: empty int64 ids"
            assert list(zip(rows.tolist(), pos.tolist())) == _brute_query(stored, query), f"m = {m} after {len(stored)} rows"
            raw_r, raw_p = idx.query(query, unique=False)
            want_raw = sorted(
                (r, p) for r in range(m) for p, k in enumerate(stored) for b in range(nb) if k[b] == query[r, b]
            )
            assert sorted(zip(raw_r.tolist(), raw_p.tolist())) == want_raw, "raw matches: one per shared band"
    idx.add(np.zeros((0, nb), np.uint64), np.zeros(0, np.int64))
    assert len(idx) == len(stored) * nb, "adding no rows changes nothing"


def test_band_index_reports_a_position_once_however_many_bands_match():
    """A stored row sharing two or three bands with a query row is one candidate (one query row
    and several query rows alike); ``unique=False`` gives one match per shared band."""
    idx = BandIndex()
    idx.add(np.array([[1, 2, 3], [4, 5, 6]], dtype=np.uint64), np.array([0, 1]))
    for query, want in (([[1, 2, 0]], [(0, 0)]), ([[1, 2, 3]], [(0, 0)]), ([[1, 2, 0], [4, 5, 6]], [(0, 0), (1, 1)])):
        rows, pos = idx.query(np.array(query, dtype=np.uint64))
        assert list(zip(rows.tolist(), pos.tolist())) == want, f"query {query}: {rows.tolist()}, {pos.tolist()}"
    raw_r, raw_p = idx.query(np.array([[1, 2, 0]], dtype=np.uint64), unique=False)
    assert (raw_r.tolist(), raw_p.tolist()) == ([0, 0], [0, 0]), "two shared bands: two raw matches"


def test_band_index_positions_above_two_to_the_32():
    """Positions are stored beside the band in one int64 (``band << 32 | position``): a position
    up to ``2**32 - 1`` comes back unchanged, in every band."""
    idx = BandIndex()
    keys = np.array([[5, 6, 7]], dtype=np.uint64)
    idx.add(keys, np.array([2**32 - 1]))
    rows, pos = idx.query(np.array([[0, 0, 7]], dtype=np.uint64))
    assert (rows.tolist(), pos.tolist()) == ([0], [2**32 - 1]), f"band 2 match: {rows.tolist()}, {pos.tolist()}"


def test_intra_block_pairs_equals_brute_force():
    """Pairs ``(i, j)``, ``j < i``, of rows sharing a band key, sorted by ``i`` then ``j``; fewer
    than two rows have none."""
    rng = np.random.default_rng(11)
    keys = rng.integers(0, 3, size=(9, 2)).astype(np.uint64)
    rows, cols = intra_block_pairs(keys)
    want = [(i, j) for i in range(9) for j in range(i) if (keys[i] == keys[j]).any()]
    assert list(zip(rows.tolist(), cols.tolist())) == want, "intra-block pairs differ from brute force"
    assert rows.dtype == np.int64 and cols.dtype == np.int64, "int64 ids"
    one_r, one_c = intra_block_pairs(keys[:1])
    assert one_r.size == 0 and one_c.size == 0, "one row: no pairs"
    assert one_r.dtype == np.int64 and one_c.dtype == np.int64, "no pairs: empty int64 ids (usable as indices)"
    two_r, two_c = intra_block_pairs(np.array([[7, 1], [7, 2]], dtype=np.uint64))
    assert (two_r.tolist(), two_c.tolist()) == ([1], [0]), "two rows sharing band 0 are a pair"


def test_band_index_with_more_bands_than_its_precomputed_constants(monkeypatch):
    """The per-band mixing constants are precomputed for 1024 bands and extended on demand: an
    index over 1100 bands (``r = 1`` in ``D = 1100``) finds a match in band 1099 only. The
    process-wide caches are emptied first (``raising=False``: a version without them passes too),
    so the test does not depend on which tests ran before in the same process."""
    import lam_ref.bands as bands_module

    monkeypatch.setattr(BandIndex, "_MIX", np.zeros(0, np.uint64), raising=False)
    monkeypatch.setattr(bands_module, "_BAND_SHIFTED", {}, raising=False)
    nb = 1100
    idx = BandIndex()
    stored = np.arange(2 * nb, dtype=np.uint64).reshape(2, nb)
    idx.add(stored, np.array([0, 1]))
    query = np.full((1, nb), 10**9, dtype=np.uint64)
    query[0, nb - 1] = stored[1, nb - 1]
    rows, pos = idx.query(query)
    assert (rows.tolist(), pos.tolist()) == ([0], [1]), f"a match in band {nb - 1}: {rows.tolist()}, {pos.tolist()}"


def test_band_quantize_divides_in_float64_even_for_float32_rows():
    """SPEC §5: ``q = rint(e / (2ε))`` is computed in float64. For the float32 coordinate
    ``0.5196152329444885`` at ``D = 3``, ``rel = 0.3`` the float64 quotient lies just below 1.5
    (code 1) while a float32 division would round it up to 1.5 and then to the even code 2."""
    x = np.float32(0.5196152329444885)
    step = 2.0 * (0.3 / np.sqrt(3.0))
    want = round(float(x) / step)  # Python floats are float64; round() is half-to-even
    assert want == 1 and float(np.rint(np.float32(x) / np.float32(step))) == 2.0, "fixture: float32 and float64 differ"
    got = band_quantize(np.array([[x, 0.0, 0.0]], dtype=np.float32), 0.3)
    assert got[0, 0] == want, f"code {got[0, 0]} for {float(x)!r}: float64 gives {want}"


def test_band_quantize_refuses_the_first_code_outside_int16():
    """Codes 32767 and -32768 fit int16; 32768 and -32769 are refused, never wrapped. With
    ``validated_unit=True`` the range is still checked whenever a coordinate of a unit row
    (up to ``1 + 1e-4``) could leave int16."""
    rel = 1.0  # D = 4: step = 2·rel/2 = 1, so the code of x is rint(x)
    for x in (32768.0, -32769.0):
        with pytest.raises(LamValueError, match="overflows int16"):
            band_quantize(np.array([[x, 0.0, 0.0, 0.0]]), rel)
    step = 1.0001 / 32767.9  # D = 1: a coordinate of 1.0001 gives the code rint(32767.9) = 32768
    with pytest.raises(LamValueError, match="overflows int16"):
        band_quantize(np.array([[1.0001]]), step / 2.0, validated_unit=True)
    with pytest.raises(LamValueError, match="overflows int16"):
        band_keys(np.array([[60000.0, 0.0]]), BandSettings(r=1, rel=1.0))  # band_keys checks by default


def test_xxh3_rows_are_bytes_and_settings_are_plain_numbers():
    """``xxh3_64_rows`` hashes each row as bytes (integer lists are taken as byte values);
    ``BandSettings`` stores ``r`` as an int and ``rel`` as a float whatever numeric type it is
    given, so that its JSON form is the same."""
    for rows in ([[1, 2, 3], [250, 0, 7]], [[1, 2, 3, 4, 5], [9, 8, 7, 6, 255]], [list(range(12))]):
        got = xxh3_64_rows(rows)
        assert got.tolist() == [xxhash.xxh3_64_intdigest(bytes(r)) for r in rows], f"rows of byte values: {rows}"
    s = BandSettings(r=np.int64(3), rel=1)
    assert type(s.r) is int and type(s.rel) is float, f"plain int and float: {type(s.r)}, {type(s.rel)}"
    assert json.dumps(s.to_json()) == '{"r": 3, "rel": 1.0}', f"JSON form: {json.dumps(s.to_json())}"


@pytest.mark.parametrize("length", list(range(1, 21)))
def test_vectorised_xxh3_equals_xxhash(length):
    """Band keys are XXH3-64 seed 0 (SPEC §5): the numpy implementation equals the xxhash package."""
    data = np.random.default_rng(length).integers(0, 256, size=(300, length), dtype=np.uint8)
    data[0] = 0
    data[1] = 255
    want = [xxhash.xxh3_64_intdigest(row.tobytes()) for row in data]
    assert xxh3_64_rows(data).tolist() == want, f"vectorised XXH3 differs from xxhash at length {length}"



def test_band_key_layout_is_as_specified():
    """SPEC §5: q = rint(e/(2ε)), ε = rel/sqrt(D), half-to-even; band b hashes q[b*r:(b+1)*r] as <i2 bytes."""
    d, rel = 9, 0.5
    e = unit_rows(np.random.default_rng(1), 4, d)
    eps = rel / np.sqrt(d)
    q = band_quantize(e, rel)
    for i in range(4):
        for k in range(d):
            assert q[i, k] == round(float(e[i, k]) / (2 * eps)), "Python's round() is half-to-even too"
    keys = band_keys(e, BandSettings(r=4, rel=rel))
    assert keys.shape == (4, 3), "D=9, r=4 gives bands of 4, 4, 1 coordinates"
    for b, (s, z) in enumerate([(0, 4), (4, 8), (8, 9)]):
        for i in range(4):
            assert keys[i, b] == xxhash.xxh3_64_intdigest(q[i, s:z].astype("<i2").tobytes()), (i, b)



def test_band_number_is_part_of_the_key():
    """Equal codes in *different* bands must not make two rows candidates (key = (band, hash))."""
    x = np.array([1, 2, 3, 4, 9, 9, 9, 9], dtype=np.float64)
    y = np.array([9, 9, 9, 9, 1, 2, 3, 4], dtype=np.float64) * -1
    y[:4] = [1, 2, 3, 4]
    y[4:] = [-9, -9, -9, -9]
    # x's band 0 equals y's band 0 here by construction; now build z whose band 1 equals x's band 0
    z = np.array([-9, -9, -9, -9, 1, 2, 3, 4], dtype=np.float64)
    e = np.stack([x, z])
    e /= np.linalg.norm(e, axis=1, keepdims=True)
    keys = band_keys(e.astype(np.float32), BandSettings(r=4, rel=0.05))
    assert keys[0, 0] == keys[1, 1], "fixture: the two rows hash equal bytes in different bands"
    rec = band_recall(e.astype(np.float32), -1.0, r=4, rel=0.05)
    assert rec.candidate_pairs == 0, "a match across different band numbers must not propose a candidate"



@given(seed=st.integers(0, 2**32 - 1), n=st.integers(2, 80), r=st.integers(1, 6), t=THRESHOLDS)
def test_band_recall_matches_brute_force(seed, n, r, t):
    """Table 26 quantities: band_recall's counts equal a pure-Python count over all pairs."""
    e = clustered(np.random.default_rng(seed), n, 12)
    keys = band_keys(e, BandSettings(r=r, rel=0.3))
    d2 = delta_sq(t)
    true = cand = found = 0
    for i in range(n):
        for j in range(i + 1, n):
            c = bool((keys[i] == keys[j]).any())
            w = sq_dist(e[i], e[j]) <= d2
            cand += c
            true += w
            found += c and w
    rec = band_recall(e, t, r=r, rel=0.3)
    assert (rec.true_pairs, rec.true_pairs_found, rec.candidate_pairs) == (true, found, cand), rec
    assert rec.total_pairs == n * (n - 1) // 2



@given(
    seed=st.integers(0, 2**32 - 1),
    batches=st.lists(st.integers(1, 40), min_size=1, max_size=12),
    nb=st.integers(1, 6),
    alphabet=st.integers(1, 4),
)
def test_band_index_query_equals_brute_force(seed, batches, nb, alphabet):
    """Algorithm 1's index I: query returns exactly the registered positions sharing (band, key) with
    each query row, through single-row (buffer), bulk (main level) additions and buffer flushes."""
    from lam_ref.bands import BandIndex

    rng = np.random.default_rng(seed)
    idx = BandIndex()
    idx._BUFFER_LIMIT = 7  # force frequent flushes of the buffer into the main level
    stored = np.zeros((0, nb), np.uint64)
    for size in batches:
        keys = rng.integers(0, alphabet, size=(size, nb)).astype(np.uint64) * np.uint64(0x9E3779B97F4A7C15)
        idx.add(keys, np.arange(stored.shape[0], stored.shape[0] + size))
        stored = np.concatenate([stored, keys])
        query = rng.integers(0, alphabet + 1, size=(5, nb)).astype(np.uint64) * np.uint64(0x9E3779B97F4A7C15)
        rows, pos = idx.query(query)
        want = [(r, p) for r in range(5) for p in range(stored.shape[0]) if (stored[p] == query[r]).any()]
        assert list(zip(rows.tolist(), pos.tolist())) == want, "index query differs from brute force"
    assert len(idx) == stored.size, "every band entry is stored once"

