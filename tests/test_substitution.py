"""Algorithm 2 (batch) against its oracle; soundness of banded search; lowest-index witness (SPEC §5)."""

from __future__ import annotations

import numpy as np
import pytest
import xxhash
from hypothesis import given
from hypothesis import strategies as st

from lam_ref import oracle, substitute
from lam_ref.bands import BandSettings, band_keys, band_recall, quantize, xxh3_64_rows
from lam_ref.geometry import delta_sq, sq_dist

from .datagen import clustered, definition_pi, unit_rows

THRESHOLDS = st.sampled_from([0.5, 0.8, 0.9, 0.95, 0.99])


def brute_force_pi(e: np.ndarray, t: float) -> list[int]:
    """The SPEC §5 definition, one arrival at a time (``tests.datagen.definition_pi``)."""
    return definition_pi(e, t)[0]


@given(seed=st.integers(0, 2**32 - 1), n=st.integers(1, 60), d=st.sampled_from([2, 3, 8, 32]), t=THRESHOLDS)
def test_oracle_equals_plain_definition(seed, n, d, t):
    """DEF1/SPEC §5: lam_ref's vectorised oracle equals a pure-Python loop over pairs.

    Shown to catch: a strict ``<`` in the oracle changes π on clustered data (checked by editing it)."""
    e = clustered(np.random.default_rng(seed), n, d)
    assert oracle(e, t).pi.tolist() == brute_force_pi(e, t), "oracle differs from the plain definition"


@pytest.mark.claim("DEF1")
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(1, 300), d=st.sampled_from([3, 16, 64, 200]), t=THRESHOLDS)
def test_exhaustive_equals_oracle(seed, n, d, t):
    """SPEC §5: ``exhaustive=True`` returns exactly the oracle's π, distances and δ̂."""
    e = clustered(np.random.default_rng(seed), n, d)
    ref, got = oracle(e, t), substitute(e, t, exhaustive=True)
    assert np.array_equal(got.pi, ref.pi), f"exhaustive π differs from oracle at {np.flatnonzero(got.pi != ref.pi)[:5]}"
    assert np.array_equal(got.distances, ref.distances), "distances must be identical floats"
    assert got.delta_hat == ref.delta_hat <= np.sqrt(delta_sq(t)), "δ̂ must equal the oracle's and be <= δ"
    assert got.pairs_verified == ref.pairs_verified, "exhaustive verifies every retained predecessor, as the oracle"


def test_exhaustive_crosses_block_boundaries():
    """Blocks of 512 arrivals: matches across and inside blocks, N = 1,300 (three blocks)."""
    e = clustered(np.random.default_rng(7), 1300, 24, dup=0.5)
    assert np.array_equal(substitute(e, 0.9, exhaustive=True).pi, oracle(e, 0.9).pi), "multi-block run differs from oracle"


def test_exhaustive_decides_a_hair_inside_and_outside_delta():
    """The float32 GEMM prefilter must never hide a pair: pairs at sq = δ² ∓ 1e-7 decide as the exact rule."""
    rng = np.random.default_rng(3)
    t = 0.95
    d2 = delta_sq(t)
    rows = []
    expected = []
    for k in range(200):
        a = unit_rows(rng, 1, 64)[0].astype(np.float64)
        u = rng.standard_normal(64)
        u -= u.dot(a) * a
        u /= np.linalg.norm(u)
        target = d2 + (1e-7 if k % 2 else -1e-7)
        # b = cos·a + sin·u at angle with 2 - 2cos = target
        c = 1 - target / 2
        b = c * a + np.sqrt(1 - c * c) * u
        a32, b32 = a.astype(np.float32), b.astype(np.float32)
        rows += [a32, b32]
        expected.append(sq_dist(a32, b32) <= d2)
    e = np.stack(rows)
    # pairs are far apart from each other (random directions in D=64), so each b can only match its own a
    res = substitute(e, t, exhaustive=True)
    got = [res.pi[2 * k + 1] == 2 * k for k in range(200)]
    assert got == expected, "exhaustive mode mis-decided a near-threshold pair"
    assert 40 < sum(expected) < 160, "the generated pairs should straddle the threshold"


@pytest.mark.claim("BAND")
@given(
    seed=st.integers(0, 2**32 - 1),
    n=st.integers(1, 250),
    d=st.sampled_from([5, 16, 64, 130]),
    t=THRESHOLDS,
    r=st.integers(1, 12),
    rel=st.sampled_from([0.01, 0.05, 0.2, 0.5, 2.0]),
)
def test_banded_is_sound_at_any_setting(seed, n, d, t, r, rel):
    """BAND (SPEC §5): every banded merge is within δ, to a retained chunk with a smaller id, and is the
    lowest such id among the retained chunks sharing a band key (so Theorem 1 holds at any (r, rel)).

    Shown to catch: accepting a band match without exact verification (edit in Matcher) fails here."""
    e = clustered(np.random.default_rng(seed), n, d)
    res = substitute(e, t, r=r, rel=rel)
    kept = res.kept
    d2 = delta_sq(t)
    keys = band_keys(e, BandSettings(r=r, rel=rel))
    for i in np.flatnonzero(~kept):
        y = int(res.pi[i])
        assert y < i and kept[y], f"π[{i}] = {y} must be a retained chunk with a smaller id"
        assert sq_dist(e[i], e[y]) <= d2, f"merge {i}->{y} exceeds δ"
        shares = [z for z in range(y) if kept[z] and (keys[z] == keys[i]).any() and sq_dist(e[i], e[z]) <= d2]
        assert not shares, f"lower retained candidate {shares[:3]} of {i} passes: lowest-index rule broken"
    assert res.delta_hat <= np.sqrt(d2), "δ̂ must not exceed δ"


@given(seed=st.integers(0, 2**32 - 1), n=st.integers(2, 200), t=THRESHOLDS)
def test_banded_equals_oracle_when_recall_is_full(seed, n, t):
    """SPEC §5: banded π equals the oracle whenever the band index proposes every true pair (recall 1).

    With r = 1 and a coarse step every pair within δ shares some coordinate code, so recall is full."""
    e = clustered(np.random.default_rng(seed), n, 8, spread=(0.0, 0.3))
    rec = band_recall(e, t, r=1, rel=2.0)
    if rec.recall == 1.0:
        assert np.array_equal(substitute(e, t, r=1, rel=2.0).pi, oracle(e, t).pi), "full recall must give the oracle's π"


def test_lowest_index_witness_not_nearest():
    """Alg. 1 line 8: the representative is the lowest retained id within δ, not the nearest one."""
    t = 0.9
    deg = np.pi / 180  # δ at t = 0.9 is the chord of 25.84°
    a, b, x = (np.array([np.cos(k * deg), np.sin(k * deg)]) for k in (0.0, 40.0, 22.0))
    e = np.stack([a, b, x]).astype(np.float32)  # a, b > δ apart (both kept); x within δ of both, nearer b
    d_a, d_b = sq_dist(e[2], e[0]), sq_dist(e[2], e[1])
    assert d_b < d_a <= delta_sq(t), "fixture: x must be within δ of both, nearer to b"
    for res in (oracle(e, t), substitute(e, t, exhaustive=True), substitute(e, t, r=1, rel=5.0)):
        assert res.pi.tolist() == [0, 1, 0], f"{res.mode}: expected lowest id 0, got {res.pi.tolist()}"


@pytest.mark.claim("C4")
def test_connected_components_is_not_a_delta_substitution():
    """C4 (§C.4): on a chain a~b, b~c, a≁c, one representative per connected component (union-find)
    leaves c at distance > δ from its representative a; greedy first-occurrence keeps c instead."""
    t = 0.9
    ang = np.arccos(t) * 0.9  # consecutive points within δ, endpoints not
    e = np.array([[np.cos(k * ang), np.sin(k * ang)] for k in range(3)], dtype=np.float32)
    d2 = delta_sq(t)
    assert sq_dist(e[0], e[1]) <= d2 and sq_dist(e[1], e[2]) <= d2 and sq_dist(e[0], e[2]) > d2, "fixture must be a chain"
    parent = list(range(3))

    def find(i):
        while parent[i] != i:
            i = parent[i]
        return i

    for i in range(3):
        for j in range(i):
            if sq_dist(e[i], e[j]) <= d2:
                parent[find(i)] = find(j)
    dsu_pi = [min(k for k in range(3) if find(k) == find(i)) for i in range(3)]
    worst = max(np.sqrt(sq_dist(e[i], e[dsu_pi[i]])) for i in range(3))
    assert worst > np.sqrt(d2), "union-find must violate DEF1 on the chain (that is the counterexample)"
    res = substitute(e, t, exhaustive=True)
    assert res.pi.tolist() == [0, 0, 2], f"greedy keeps c: expected [0, 0, 2], got {res.pi.tolist()}"
    assert res.delta_hat <= np.sqrt(d2), "greedy stays within δ"


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
    q = quantize(e, rel)
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


@given(seed=st.integers(0, 2**32 - 1), n=st.integers(2, 200))
def test_pairs_verified_is_the_candidate_count(seed, n):
    """Banded mode verifies exactly the retained candidates: never more pairs than exhaustive mode."""
    e = clustered(np.random.default_rng(seed), n, 16)
    b, x = substitute(e, 0.9), substitute(e, 0.9, exhaustive=True)
    assert b.pairs_verified <= x.pairs_verified or b.kept_count > x.kept_count, "banded verified more than all pairs"
    assert x.pairs_verified <= x.total_pairs, "exhaustive verifies at most all pairs"


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


def _pairs_a_hair_inside_delta(t: float, pairs: int, seed: int) -> np.ndarray:
    """``2·pairs`` unit rows in R^8, ordered a_0, b_0, a_1, b_1, ...: each ``b_k`` equals ``a_k``
    on band 0 (dims 0-3, so the band index proposes the pair) and lies inside δ of ``a_k`` by less
    than the float32 dot-product error bound (so only a correctly signed margin keeps the pair)."""
    from lam_ref.geometry import dot_error_bound

    rng = np.random.default_rng(seed)
    d2 = delta_sq(t)
    err = dot_error_bound(8)
    s = 1 / np.sqrt(2)
    out = []
    while len(out) < 2 * pairs:
        u = rng.standard_normal(4)
        v, z = rng.standard_normal(4), rng.standard_normal(4)
        u, v = u / np.linalg.norm(u), v / np.linalg.norm(v)
        z -= (z @ v) * v
        z /= np.linalg.norm(z)
        cos_phi = 1 - (d2 - err / 4) / (2 * s * s)  # |a - b|² = s²·|v - w|² = δ² - err/4
        w = cos_phi * v + np.sqrt(1 - cos_phi**2) * z
        a = np.concatenate([s * u, s * v]).astype(np.float32)
        b = np.concatenate([s * u, s * w]).astype(np.float32)
        gap = d2 - sq_dist(a, b)
        prior = np.array(out, dtype=np.float64).reshape(-1, 8)
        near = min(((prior - a) ** 2).sum(1).min(initial=9), ((prior - b) ** 2).sum(1).min(initial=9))
        if 0 < gap < err / 2 and near > d2 + 1e-3:  # the pair is far from every earlier row
            out += [a, b]
    return np.array(out, dtype=np.float32)


def test_banded_prefilter_keeps_pairs_a_hair_inside_delta():
    """The banded prefilter (reached only with >= 256 candidates in a block) drops a pair only
    when its float32 dot product *proves* ``sq > δ²`` (SPEC §2, §5): 300 pairs proposed by the
    band index and a hair inside δ all merge, as in the oracle. A wrong-signed rounding margin
    in ``Matcher._prefilter`` fails here."""
    t = 0.9
    e = _pairs_a_hair_inside_delta(t, 300, seed=11)
    want = oracle(e, t).pi
    assert (want[1::2] == np.arange(0, e.shape[0], 2)).all(), "the oracle merges every b_k into a_k"
    got = substitute(e, t, r=4, rel=0.2)
    assert got.pairs_verified >= 256, f"the prefilter is reached only with >= 256 candidates, got {got.pairs_verified}"
    lost = np.flatnonzero(got.pi != want)
    assert lost.size == 0, f"banded run lost {lost.size} merges a hair inside δ (first row {lost[:1].tolist()})"


def _confirmed_pairs(e: np.ndarray, m: int, t: float):
    """Every pair the exact rule accepts for the block ``e[m:]`` after the prefix ``e[:m]``: against
    the prefix's retained chunks (by the definition) and among the block's own rows ``j < i``."""
    prefix_pi = definition_pi(e[:m], t)[0]
    kept = np.asarray([i for i in range(m) if prefix_pi[i] == i], dtype=np.int64)
    block = e[m:]
    d2 = delta_sq(t)
    sq_r = ((block[:, None, :].astype(np.float64) - e[kept][None, :, :].astype(np.float64)) ** 2).sum(axis=2)
    r_rows, r_k = np.nonzero(sq_r <= d2)
    sq_b = ((block[:, None, :].astype(np.float64) - block[None, :, :].astype(np.float64)) ** 2).sum(axis=2)
    in_rows, in_cols = np.nonzero((sq_b <= d2) & np.tri(block.shape[0], k=-1, dtype=bool))
    return (r_rows, kept[r_k], sq_r[r_rows, r_k]), (in_rows, in_cols, sq_b[in_rows, in_cols])


@pytest.mark.claim("DEF1")
@given(seed=st.integers(0, 2**32 - 1))
def test_resolve_takes_the_lowest_id_from_candidates_in_any_order(seed):
    """DEF1/SPEC §5.1, Algorithm 2 line 7 (``y* = min{y ∈ C : ‖e_i − e_y‖ ≤ δ}``): the resolve step
    of the batch engine applies lowest-id-wins itself. Fed every confirmed pair of a block, both
    lists shuffled (so no producer's ``(row, id)`` order helps), it returns the definition's π and
    distances for the block. A resolve that takes the first pair of each row, or the highest id,
    fails here: the fixture has rows with several retained candidates and rows whose lowest
    earlier in-block candidate was itself merged."""
    from lam_ref.substitution import resolve

    rng = np.random.default_rng(seed)
    t, m = 0.7, 40
    e = clustered(rng, 100, 4, dup=0.6, spread=(0.05, 0.9))
    (r_rows, r_ids, r_sq), (in_rows, in_cols, in_sq) = _confirmed_pairs(e, m, t)
    want, _ = definition_pi(e, t)
    want_block = np.asarray(want[m:])
    assert np.bincount(r_rows).max() >= 2, "fixture: a row with several retained candidates"
    merged_first = [i for i in set(in_rows.tolist()) if want_block[in_cols[in_rows == i].min()] != m + in_cols[in_rows == i].min()]
    assert merged_first, "fixture: a row whose lowest in-block candidate was merged"
    p, q = rng.permutation(r_rows.size), rng.permutation(in_rows.size)
    pi, sq, keep = resolve(m, e.shape[0] - m, r_rows[p], r_ids[p], r_sq[p], in_rows[q], in_cols[q], in_sq[q])
    assert pi.tolist() == want_block.tolist(), f"resolve differs from the definition at {np.flatnonzero(pi != want_block)[:10]}"
    assert keep.tolist() == (want_block == np.arange(m, e.shape[0])).tolist(), "the retained mask is π's fixed points"
    block64 = e[m:].astype(np.float64)
    ref_sq = ((block64 - e[want_block].astype(np.float64)) ** 2).sum(axis=1)
    assert np.array_equal(sq, np.where(keep, 0.0, ref_sq)), "each row's sq is that of the chosen representative"
    again = resolve(m, e.shape[0] - m, r_rows, r_ids, r_sq, in_rows, in_cols, in_sq)
    assert np.array_equal(again[0], pi), "the order of the candidates does not matter"
