"""Algorithm 2 (batch) against its oracle; soundness of banded search; lowest-index witness (SPEC §5).

Expected values are derived by hand or by the plain definition written out here, never copied from
lam_ref's output."""

from __future__ import annotations

import time

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from lam_ref import digest, oracle, substitute
from lam_ref.bands import BandSettings, band_keys, band_recall
from lam_ref.geometry import LamValueError, delta_sq, sq_dist
from lam_ref.online import OnlineSession
from lam_ref.substitution import Matcher, SubstitutionResult

from .datagen import clustered, definition_pi, unit_rows

pytestmark = pytest.mark.claim("DEF1")


THRESHOLDS = st.sampled_from([0.5, 0.8, 0.9, 0.95, 0.99])


#: Two unit rows at squared distance exactly 1.0 = δ² for t = 0.5 (all values exact in float32):
#: |e1 - e2|² = 0.5² + 3·0.5² = 1.
AT_DELTA = np.array([[1, 0, 0, 0], [0.5, 0.5, 0.5, 0.5]], dtype=np.float32)


def brute_force_pi(e: np.ndarray, t: float) -> list[int]:
    """The SPEC §5 definition, one arrival at a time (``tests.datagen.definition_pi``)."""
    return definition_pi(e, t)[0]


def plain_definition(e: np.ndarray, t: float) -> tuple[list[int], int]:
    """SPEC §5 by its definition: π (lowest retained id within δ) and the number of
    (arrival, retained predecessor) pairs the oracle looks at (every retained row before i)."""
    return definition_pi(e, t)


def banded_definition(e: np.ndarray, t: float, settings: BandSettings) -> tuple[list[int], int]:
    """Banded Algorithm 2 by its definition (SPEC §5): the candidates of arrival ``i`` are the
    retained ``y < i`` sharing a band key; π[i] is the lowest candidate within δ. Returns π and
    the number of candidates (the pairs the exact rule verifies)."""
    return definition_pi(e, t, band_keys(e, settings))


# ------------------------------------------------------------------------------------------------
# The oracle and exhaustive Algorithm 2 equal the definition (SPEC §5, DEF1): the lowest retained id within δ,
# inclusive at δ, in every mode, block and dimension
# ------------------------------------------------------------------------------------------------


@given(seed=st.integers(0, 2**32 - 1), n=st.integers(1, 60), d=st.sampled_from([2, 3, 8, 32]), t=THRESHOLDS)
def test_oracle_equals_plain_definition(seed, n, d, t):
    """DEF1/SPEC §5: lam_ref's vectorised oracle equals a pure-Python loop over pairs.

    Shown to catch: a strict ``<`` in the oracle changes π on clustered data (checked by editing it)."""
    e = clustered(np.random.default_rng(seed), n, d)
    assert oracle(e, t).pi.tolist() == brute_force_pi(e, t), "oracle differs from the plain definition"


@pytest.mark.claim("DEF1")
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(1, 300), d=st.sampled_from([3, 16, 64, 200]), t=THRESHOLDS)
def test_exhaustive_equals_oracle(seed, n, d, t):
    """SPEC §5: ``exhaustive=True`` returns exactly the oracle's π, distances and δ̂.

    Exact float equality is guaranteed, not lucky: both compute every distance with
    :func:`lam_ref.geometry.sq_dist_rows` from the same float32 rows, one float64 row reduction
    whose order numpy fixes by ``D`` alone (no BLAS), so it is the same float on every kernel."""
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


def test_pair_exactly_at_delta_merges_in_every_mode():
    """SPEC §5 merges at ``sq <= δ²``: a pair at exactly δ merges in the oracle, in both batch
    modes, one arrival at a time (both candidate generators) and through the matcher itself."""
    assert delta_sq(0.5) == 1.0, "δ² = 2 - 2t is exactly 1 at t = 0.5"
    diff = AT_DELTA[0].astype(np.float64) - AT_DELTA[1].astype(np.float64)
    assert float(diff @ diff) == 1.0, "fixture: the pair lies exactly at δ"
    wide = {"r": 4, "rel": 10.0}  # one band, every coordinate quantizes to 0: the pair is a candidate
    runs = {
        "oracle": oracle(AT_DELTA, 0.5),
        "exhaustive": substitute(AT_DELTA, 0.5, exhaustive=True),
        "banded": substitute(AT_DELTA, 0.5, **wide),
    }
    for name, res in runs.items():
        assert res.pi.tolist() == [0, 0], f"{name}: a pair at exactly δ merges, got {res.pi.tolist()}"
        assert res.delta_hat == 1.0, f"{name}: δ̂ is the merge distance 1.0, got {res.delta_hat}"
    for kw in ({"exhaustive": True}, wide):
        s = OnlineSession(0.5, **kw)
        got = [s.admit(AT_DELTA[i : i + 1]).pi.tolist() for i in range(2)]
        assert got == [[0], [0]], f"one at a time ({kw}): {got}"
        assert s.distances.tolist() == [0.0, 1.0], f"one at a time ({kw}): {s.distances.tolist()}"
        s = OnlineSession(0.5, **kw)
        s.admit(AT_DELTA[:1])
        tr = s.admit(np.stack([AT_DELTA[1], np.float32([0, 0, 0, -1])]))
        assert tr.pi.tolist() == [0, 2], f"a turn of two against a retained row at exactly δ ({kw}): {tr.pi.tolist()}"


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


def _confirmed_pairs(e: np.ndarray, m: int, t: float):
    """Every pair the exact rule accepts for the block ``e[m:]`` after the prefix ``e[:m]``: against
    the prefix's retained chunks (by the definition) and among the block's own rows ``j < i``; and
    the float64 squared distances of the block's rows to every row, ``sq[i, y]``, they come from."""
    prefix_pi = definition_pi(e[:m], t)[0]
    kept = np.asarray([i for i in range(m) if prefix_pi[i] == i], dtype=np.int64)
    e64 = e.astype(np.float64)
    sq = ((e64[m:, None, :] - e64[None, :, :]) ** 2).sum(axis=2)
    d2 = delta_sq(t)
    r_rows, r_k = np.nonzero(sq[:, kept] <= d2)
    in_rows, in_cols = np.nonzero((sq[:, m:] <= d2) & np.tri(e.shape[0] - m, k=-1, dtype=bool))
    return (r_rows, kept[r_k], sq[r_rows, kept[r_k]]), (in_rows, in_cols, sq[in_rows, m + in_cols]), sq


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
    (r_rows, r_ids, r_sq), (in_rows, in_cols, in_sq), sq_all = _confirmed_pairs(e, m, t)
    want, _ = definition_pi(e, t)
    want_block = np.asarray(want[m:])
    assert np.bincount(r_rows).max() >= 2, "fixture: a row with several retained candidates"
    merged_first = [i for i in set(in_rows.tolist()) if want_block[in_cols[in_rows == i].min()] != m + in_cols[in_rows == i].min()]
    assert merged_first, "fixture: a row whose lowest in-block candidate was merged"
    p, q = rng.permutation(r_rows.size), rng.permutation(in_rows.size)
    pi, sq, keep = resolve(m, e.shape[0] - m, r_rows[p], r_ids[p], r_sq[p], in_rows[q], in_cols[q], in_sq[q])
    assert pi.tolist() == want_block.tolist(), f"resolve differs from the definition at {np.flatnonzero(pi != want_block)[:10]}"
    assert keep.tolist() == (want_block == np.arange(m, e.shape[0])).tolist(), "the retained mask is π's fixed points"
    ref_sq = sq_all[np.arange(want_block.size), want_block]  # resolve copies the sq it is given
    assert np.array_equal(sq, np.where(keep, 0.0, ref_sq)), "each row's sq is that of the chosen representative"
    again = resolve(m, e.shape[0] - m, r_rows, r_ids, r_sq, in_rows, in_cols, in_sq)
    assert np.array_equal(again[0], pi), "the order of the candidates does not matter"


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


def test_oracle_and_substitute_normalize():
    """``normalize=True`` rescales rows to unit norm first (both entry points); the result is the
    one of the unit rows, and without it non-unit rows are refused."""
    e = clustered(np.random.default_rng(5), 30, 4, dup=0.5)
    scaled = e * np.linspace(0.5, 3.0, 30, dtype=np.float32)[:, None]
    pi, _ = plain_definition(e, 0.9)
    assert oracle(scaled, 0.9, normalize=True).pi.tolist() == pi, "oracle on rescaled rows"
    assert substitute(scaled, 0.9, normalize=True, exhaustive=True).pi.tolist() == pi, "substitute on rescaled rows"
    for fn in (oracle, substitute):
        with pytest.raises(LamValueError, match="embeddings"):
            fn(scaled, 0.9)


def test_one_dimensional_rows_and_int64_ids_before_any_regrowth():
    """``D = 1`` is a valid dimension (the unit "sphere" is {-1, +1}: the two points lie 2 apart,
    beyond every δ < 2), and the retained ids are int64 from the first admitted row, before any
    regrowth replaces the arrays."""
    m = Matcher(0.5, 1, exhaustive=True)
    pi, dist, _ = m.admit(np.array([[1.0], [-1.0], [1.0]], dtype=np.float32))
    assert pi.tolist() == [0, 1, 0] and dist.tolist() == [0.0, 0.0, 0.0], f"π {pi}, distances {dist}"
    assert m.retained_ids.dtype == np.int64 and m.retained_ids.tolist() == [0, 1], f"{m.retained_ids!r}"
    b = Matcher(0.5, 1)
    assert b.admit(np.array([[1.0]], dtype=np.float32))[0].tolist() == [0], "banded, one arrival"
    assert b.retained_ids.dtype == np.int64, f"{b.retained_ids!r}"


def test_in_block_prefilter_below_orthogonal_thresholds():
    """SPEC §2/§5 at a negative threshold (``t = -0.5``: ``δ² = 3``, pairs down to cosine -0.5 merge):
    the in-block float32 prefilter (run when a block has at least 256 unresolved band pairs) must
    keep a pair at cosine -0.4. With a quantizer step so coarse that every row shares every band
    key, 300 rows give 44,850 in-block pairs; row 1 lies at cosine -0.4 from row 0 and must merge
    into it, as in the definition. A threshold that is not ``(|a|² + |b|² − δ²)/2`` less the error
    bound (e.g. divided by 3, too high when ``δ² > 2``) drops the pair and keeps row 1."""
    rng = np.random.default_rng(9)
    d, t = 8, -0.5
    e = unit_rows(rng, 300, d)
    e[0] = 0.0
    e[0, 0] = 1.0
    e[1] = 0.0
    e[1, 0], e[1, 1] = -0.4, np.sqrt(1 - 0.16)
    settings = BandSettings(r=4, rel=10.0)
    keys = band_keys(e, settings)
    assert (keys == keys[0]).all(), "fixture: every row shares every band key"
    res = substitute(e, t, r=4, rel=10.0)
    want, _ = definition_pi(e, t, keys)
    assert res.pi[1] == 0 and res.pi.tolist() == want, f"π[1] = {res.pi[1]}; differs at {np.flatnonzero(res.pi != np.asarray(want))[:5]}"


# ------------------------------------------------------------------------------------------------
# Banded mode (SPEC §5, BAND): sound at any setting, equal to its definition, a prefilter that keeps every pair within δ
# ------------------------------------------------------------------------------------------------


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


def test_dense_banded_blocks_equal_the_definition():
    """With one band shared by every row (``rel = 10``: all codes 0) every retained row is a
    band candidate, so blocks after the first take the dense path (candidates marked in a
    matrix, verified through the blocked products); banded π then equals the exact definition
    (SPEC §5), across three blocks of 512 arrivals, with merges inside and across blocks."""
    e = clustered(np.random.default_rng(9), 1200, 4, dup=0.4)
    pi, looked = plain_definition(e, 0.9)
    kept = [i for i in range(1200) if pi[i] == i]
    res = substitute(e, 0.9, r=4, rel=10.0)
    assert res.pi.tolist() == pi, f"dense banded π differs at {np.flatnonzero(res.pi != np.asarray(pi))[:5]}"
    assert res.pairs_verified == looked, f"every retained predecessor is a candidate: {res.pairs_verified} vs {looked}"
    assert 20 < len(kept) < 600, f"fixture: merges and retained rows in every block ({len(kept)} kept)"


def test_banded_blocks_equal_the_banded_definition():
    """Three blocks of banded Algorithm 2 on near-duplicate rows: π and the number of band
    candidates verified equal the banded definition (SPEC §5: candidates are the retained rows
    sharing a band key, the lowest one within δ wins)."""
    rng = np.random.default_rng(12)
    e = clustered(rng, 1100, 32, dup=0.6, spread=(0.0, 0.3))
    pi, looked = banded_definition(e, 0.9, BandSettings(4, 0.5))
    res = substitute(e, 0.9, r=4, rel=0.5)
    assert res.pi.tolist() == pi, f"banded π differs at {np.flatnonzero(res.pi != np.asarray(pi))[:5]}"
    assert res.pairs_verified == looked, f"{res.pairs_verified} candidates, the definition has {looked}"


def test_sparse_banded_block_with_hundreds_of_band_candidates_follows_the_definition():
    """The banded path where a block has at least 256 distinct band candidates but too few to be
    dense (raw matches × 256 < block × |R|): the float32 prefilter runs on the candidate pairs
    before the exact rule (SPEC §5). 1024 random rows are retained first; the next block of 512
    holds 300 exact copies and 100 near-copies (inside δ) of retained rows and 112 new rows. With
    two bands of 8 coordinates at a fine step, each copy matches in both bands and random rows
    almost never do, so the block has about 800 raw matches against 512 × 1024 / 256 = 2048."""
    dim = 16
    rng = np.random.default_rng(11)
    base = rng.standard_normal((1024 + 112, dim))
    base = (base / np.linalg.norm(base, axis=1, keepdims=True)).astype(np.float32)
    src = rng.choice(1024, size=400, replace=False)
    near = base[src[300:]].astype(np.float64) + rng.normal(scale=0.01, size=(100, dim))
    near = (near / np.linalg.norm(near, axis=1, keepdims=True)).astype(np.float32)
    block = np.concatenate([base[src[:300]], near, base[1024:]])
    block = block[rng.permutation(block.shape[0])]
    e = np.concatenate([base[:1024], block])
    t = 0.95
    keys = band_keys(block, BandSettings(r=8, rel=0.02))
    rkeys = band_keys(base[:1024], BandSettings(r=8, rel=0.02))
    raw = sum(int(np.isin(keys[:, b], rkeys[:, b]).sum()) for b in range(keys.shape[1]))
    assert 256 <= raw and raw * 256 < 512 * 1024, f"the block must take the sparse path: {raw} raw matches"
    res = substitute(e, t, r=8, rel=0.02)
    want, looked = banded_definition(e, t, BandSettings(r=8, rel=0.02))
    assert res.pi.tolist() == want, (
        f"banded π differs from its definition at {np.flatnonzero(res.pi != np.asarray(want))[:10]}")
    assert res.pairs_verified == looked, f"pairs verified {res.pairs_verified}, band candidates {looked}"
    assert int(np.sum(res.pi[1024:] < 1024)) >= 300, "the 300 exact copies merge into the retained rows"


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


def test_prefilter_keeps_every_pair_within_delta_across_chunks_of_16384():
    """SPEC §5 (sound prefilter): ``Matcher._prefilter`` works through the candidate pairs in chunks
    of 16,384 and returns each pair that its float32 bound cannot exclude, once, in the order
    given. 40,000 pairs (three chunks, the last partial), each either well inside δ (a near-copy
    of its retained row) or far outside it, must come back as exactly the inside ones. Chunks
    that overlap, skip a pair, stop after 16,384 starts or offset the indices wrongly fail here."""
    rng = np.random.default_rng(5)
    d, t = 16, 0.9
    retained = unit_rows(rng, 64, d)
    m = Matcher(t, d)
    m.admit(retained)
    assert m.n_retained == 64, "fixture: 64 random rows are all retained at t = 0.9"
    near = retained + rng.normal(scale=0.01, size=retained.shape).astype(np.float32)
    block = np.concatenate([near / np.linalg.norm(near, axis=1, keepdims=True), unit_rows(rng, 64, d)]).astype(np.float32)
    rows = rng.integers(0, 128, size=40_000)
    cols = np.where(rows < 64, rows, rng.integers(0, 64, size=40_000))
    b64 = block.astype(np.float64)
    bnorms = np.einsum("ij,ij->i", b64, b64)
    sq = ((b64[rows] - retained[cols].astype(np.float64)) ** 2).sum(axis=1)
    inside = sq <= delta_sq(t)
    assert np.array_equal(inside, rows < 64) and sq[~inside].min() > delta_sq(t) + 0.05, "fixture: a clear gap at δ"
    got_rows, got_cols = m._prefilter(block, bnorms, rows, cols)
    want = np.flatnonzero(inside)
    assert got_rows.size == want.size, f"{got_rows.size} pairs kept, {want.size} are inside δ"
    assert np.array_equal(got_rows, rows[want]) and np.array_equal(got_cols, cols[want]), "the inside pairs, in order"


# ------------------------------------------------------------------------------------------------
# Pairs verified (SPEC §5.3): exactly the candidates the exact rule looks at
# ------------------------------------------------------------------------------------------------


@given(seed=st.integers(0, 2**32 - 1), n=st.integers(2, 200))
def test_pairs_verified_is_the_candidate_count(seed, n):
    """Banded mode verifies exactly the retained candidates: never more pairs than exhaustive mode."""
    e = clustered(np.random.default_rng(seed), n, 16)
    b, x = substitute(e, 0.9), substitute(e, 0.9, exhaustive=True)
    assert b.pairs_verified <= x.pairs_verified or b.kept_count > x.kept_count, "banded verified more than all pairs"
    assert x.pairs_verified <= x.total_pairs, "exhaustive verifies at most all pairs"


def test_single_arrivals_count_the_pairs_they_verify():
    """Arrivals admitted one at a time verify, in exhaustive mode, every retained row before
    them (as the oracle), and in banded mode exactly the band candidates (as the batch run)."""
    e = clustered(np.random.default_rng(3), 60, 8, dup=0.5)
    pi, looked = plain_definition(e, 0.9)
    banded_pi, banded_looked = banded_definition(e, 0.9, BandSettings())
    for kw, expected in (({"exhaustive": True}, looked), ({}, banded_looked)):
        s = OnlineSession(0.9, **kw)
        counts = [s.admit(e[i : i + 1]).pairs_verified for i in range(60)]
        assert s.pi.tolist() == (pi if kw else banded_pi), f"{kw}: one at a time equals the definition"
        assert sum(counts) == expected, f"{kw}: {sum(counts)} pairs verified, expected {expected}"
    assert looked != banded_looked, "fixture: the two counts differ"


def test_blocks_of_one_arrival_count_the_pairs_they_verify():
    """SPEC §5.3 / pairs verified (spec-decisions): ``Matcher.admit`` given one arrival at a time
    (a block of one row) decides as the definition and counts the pairs the definition looks at:
    every retained row in exhaustive mode, the retained rows sharing a band key in banded mode. A
    block of one row has no in-block pair to count."""
    e = clustered(np.random.default_rng(12), 60, 8, dup=0.5)
    for exhaustive in (True, False):
        m = Matcher(0.9, 8, exhaustive=exhaustive)
        steps = [m.admit(e[i : i + 1]) for i in range(60)]
        want, looked = definition_pi(e, 0.9, None if exhaustive else band_keys(e, BandSettings()))
        assert [int(s[0][0]) for s in steps] == want, f"exhaustive={exhaustive}: π differs from the definition"
        assert sum(s[2] for s in steps) == looked == m.pairs_verified, (
            f"exhaustive={exhaustive}: {sum(s[2] for s in steps)} pairs counted, the definition looks at {looked}")


def test_turn_with_no_candidate_against_the_retained_set():
    """A turn whose rows are far from every retained row (no product passes the filter) keeps them
    all, in exhaustive mode and through the dense banded path (every row shares the one band)."""
    eye = np.eye(4, dtype=np.float32)
    for kw in ({"exhaustive": True}, {"r": 4, "rel": 10.0}):
        s = OnlineSession(0.9, **kw)
        s.admit(eye[:1])
        tr = s.admit(eye[1:])
        assert tr.pi.tolist() == [1, 2, 3], f"{kw}: orthogonal rows are all retained, got {tr.pi.tolist()}"
        assert s.kept_count == 4 and s.distances.tolist() == [0.0] * 4, f"{kw}: {s.kept_count}"
        tr = s.admit(np.concatenate([eye, eye[::-1]]))
        assert tr.pi.tolist() == [0, 1, 2, 3, 3, 2, 1, 0], f"{kw}: copies merge with the retained rows: {tr.pi.tolist()}"


# ------------------------------------------------------------------------------------------------
# The record of a run: mode, threshold, δ, pair counts, settings, the JSON summary
# ------------------------------------------------------------------------------------------------


def test_oracle_record():
    """The oracle's record: its mode, threshold and δ, the map of the plain definition, the number
    of pairs it looked at, all ``N(N-1)/2`` pairs as an int, and a wall time measured within the call."""
    e = clustered(np.random.default_rng(11), 40, 6, dup=0.5)
    pi, looked = plain_definition(e, 0.8)
    before = time.perf_counter()
    res = oracle(e, 0.8)
    elapsed = time.perf_counter() - before
    assert res.mode == "oracle" and res.t == 0.8, f"{res.mode}, {res.t}"
    assert res.delta == pytest.approx(np.sqrt(0.4)), f"δ = sqrt(2 - 2t): {res.delta}"
    assert res.pi.tolist() == pi and res.pi.dtype == np.int64, "the plain definition's π"
    assert 0 < res.kept_count < 40, f"fixture: some rows merge, some stay ({res.kept_count})"
    assert res.pairs_verified == looked, f"{res.pairs_verified} pairs, the definition looks at {looked}"
    assert type(res.total_pairs) is int and res.total_pairs == 780, f"40·39/2 = 780: {res.total_pairs!r}"
    assert 0.0 <= res.wall_time_s <= elapsed, f"wall time {res.wall_time_s} outside the call's {elapsed}"
    assert res.to_json()["mode"] == "oracle" and res.to_json()["total_pairs"] == 780, "the JSON record"


def test_substitute_record():
    """``substitute``'s record: default ``t = 0.95`` and band settings ``r = 4``, ``rel = 0.2``,
    the mode's name, settings only in banded mode, all ``N(N-1)/2`` pairs as an int, a wall time
    measured within the call, no ``device`` entry on the CPU; an unknown device is refused before
    the embeddings are looked at."""
    e = clustered(np.random.default_rng(4), 50, 6, dup=0.5)
    before = time.perf_counter()
    res = substitute(e)
    elapsed = time.perf_counter() - before
    assert res.t == 0.95 and res.mode == "banded" and res.settings == BandSettings(4, 0.2), f"{res.t} {res.mode} {res.settings}"
    assert res.pi.tolist() == substitute(e, 0.95, r=4, rel=0.2).pi.tolist(), "defaults are t=0.95, r=4, rel=0.2"
    assert type(res.total_pairs) is int and res.total_pairs == 50 * 49 // 2, f"{res.total_pairs!r}"
    assert 0.0 <= res.wall_time_s <= elapsed, f"wall time {res.wall_time_s} outside the call's {elapsed}"
    assert res.extra == {} and "device" not in res.to_json(), "no device entry on the CPU"
    ex = substitute(e, 0.9, exhaustive=True)
    assert ex.mode == "exhaustive" and ex.settings is None and ex.t == 0.9, f"{ex.mode} {ex.settings}"
    assert ex.to_json()["settings"] is None and ex.to_json()["mode"] == "exhaustive", "the JSON record"
    assert ex.pi.tolist() == plain_definition(e, 0.9)[0], "exhaustive equals the definition"
    other = substitute(e, 0.9, r=2, rel=0.5)
    for got, settings in ((res, BandSettings(4, 0.2)), (other, BandSettings(2, 0.5))):
        pi, looked = banded_definition(e, got.t, settings)
        assert got.pi.tolist() == pi and got.pairs_verified == looked, f"{settings}: {got.pairs_verified} vs {looked}"
    assert res.pairs_verified != other.pairs_verified, "fixture: the settings change the candidates"
    assert other.settings == BandSettings(2, 0.5) and other.to_json()["settings"] == {"r": 2, "rel": 0.5}, f"{other.settings}"
    with pytest.raises(LamValueError, match=r"^device must be one of cpu, cuda, got 'tpu'$"):
        substitute(np.full((2, 2), np.nan, np.float32), device="tpu")
    with pytest.raises(LamValueError, match=r"^t must be in \[-1, 1\], got 2\.0$"):
        substitute(e, 2.0)


def test_to_json_fields():
    """The ``--json`` summary of a run: every field under its name, ``deleted = n - kept``, the
    digests of SPEC §10 over the deleted ids and the map, π itself up to 10,000 chunks only."""
    e = clustered(np.random.default_rng(6), 30, 5, dup=0.5)
    res = substitute(e, 0.9, exhaustive=True)
    pi, looked = plain_definition(e, 0.9)
    j = res.to_json()
    assert set(j) == {"n", "mode", "t", "delta", "kept", "deleted", "delta_hat", "pairs_verified", "total_pairs",
                      "candidate_rate", "wall_time_s", "settings", "deletion_digest", "map_digest", "pi"}, f"{sorted(j)}"
    kept = sum(p == i for i, p in enumerate(pi))
    assert (j["n"], j["t"], j["kept"], j["deleted"], j["pi"]) == (30, 0.9, kept, 30 - kept, pi), f"{j}"
    assert j["delta"] == pytest.approx(np.sqrt(0.2)) and j["pairs_verified"] == looked, f"{j['delta']} {j['pairs_verified']}"
    assert j["candidate_rate"] == pytest.approx(looked / 435) and j["wall_time_s"] == res.wall_time_s, f"{j}"
    assert float(j["delta_hat"]) == res.delta_hat and isinstance(j["delta_hat"], str), f"{j['delta_hat']!r}"
    deleted = np.array([i for i, p in enumerate(pi) if p != i], dtype=np.int64)
    assert j["deletion_digest"] == digest.deletion_digest(deleted), "deletion digest over the deleted ids"
    assert j["map_digest"] == digest.map_digest(np.asarray(pi, dtype=np.int64)), "map digest over π"
    for n, has_pi in ((10_000, True), (10_001, False)):
        big = SubstitutionResult(pi=np.arange(n, dtype=np.int64), distances=np.zeros(n), t=0.9, mode="oracle",
                                 pairs_verified=0, total_pairs=n * (n - 1) // 2, wall_time_s=0.0)
        assert ("pi" in big.to_json()) is has_pi, f"π in the JSON for n = {n}: expected {has_pi}"
        assert big.to_json().get("pi", [0])[-1] in (n - 1, 0), "π is the map itself"


# ------------------------------------------------------------------------------------------------
# The matcher: refusals naming the argument, a fresh state, capacity and growth
# ------------------------------------------------------------------------------------------------


def test_matcher_refuses_bad_arguments_naming_them():
    """A matcher refuses a threshold outside [-1, 1] and a dimension that is not a positive
    integer (booleans, floats, strings, 0, negatives), each message naming the argument and value;
    a numpy integer dimension is accepted."""
    with pytest.raises(LamValueError, match=r"^t must be in \[-1, 1\], got 1\.5$"):
        Matcher(1.5, 3)
    for dim in (True, 2.5, "3", 0, -1):
        with pytest.raises(LamValueError, match=rf"^dim must be a positive integer, got {dim!r}$"):
            Matcher(0.9, dim)
    m = Matcher(0.9, np.int64(3))
    assert m.dim == 3 and type(m.dim) is int, f"{m.dim!r}"
    with pytest.raises(LamValueError, match=r"^device must be one of cpu, cuda, got 'tpu'$"):
        Matcher(0.9, 3, device="tpu")


def test_fresh_matcher_state():
    """A fresh matcher: the threshold and δ² it was given, nothing admitted, the default band
    settings of SPEC §5 (``r = 4``, ``rel = 0.2``), room for 64 rows (float32 rows, float64
    norms, int64 ids: ``64·(4D + 16)`` bytes, the index empty), ``exhaustive`` as a bool."""
    m = Matcher(0.8, 5)
    assert m.t == 0.8 and m.d2 == pytest.approx(0.4), f"{m.t}, {m.d2}"
    assert (m.next_id, m.n_retained, m.pairs_verified) == (0, 0, 0), "nothing admitted"
    assert m.settings == BandSettings(4, 0.2), f"default band settings: {m.settings}"
    assert m.exhaustive is False and Matcher(0.8, 5, exhaustive=1).exhaustive is True, "exhaustive is a bool"
    assert m.device == "cpu", f"{m.device}"
    assert m.retained_ids.shape == (0,) and m.retained_embeddings.shape == (0, 5), "no retained rows"
    assert m.nbytes == 64 * (4 * 5 + 8 + 8), f"initial capacity 64 rows: {m.nbytes} bytes"
    given = BandSettings(2, 0.5)
    assert Matcher(0.8, 5, settings=given).settings is given, "given settings are kept"


def test_reserve_and_growth_keep_the_retained_rows():
    """``reserve`` makes room for N rows at once (never shrinks); growing past the capacity
    keeps every retained row, id and decision (exhaustive mode: no index bytes)."""
    d = 16
    per_row = 4 * d + 8 + 8
    m = Matcher(0.9, d, exhaustive=True)
    m.reserve(10)
    assert m.nbytes == 64 * per_row, f"reserve below the capacity keeps 64 rows: {m.nbytes}"
    m.reserve(64)
    assert m.nbytes == 64 * per_row, f"reserve of exactly the capacity keeps it: {m.nbytes}"
    m.reserve(100)
    assert m.nbytes == 100 * per_row, f"reserve(100) holds 100 rows: {m.nbytes}"
    e = clustered(np.random.default_rng(2), 300, d, dup=0.3)
    pi_ref, _ = plain_definition(e, 0.9)
    assert sum(pi_ref[i] == i for i in range(300)) > 100, "fixture: more retained rows than the first capacity"
    g = Matcher(0.9, d, exhaustive=True)
    pi = [int(g.admit(e[i : i + 1])[0][0]) for i in range(300)]
    assert pi == pi_ref, "one at a time through several regrowths equals the definition"
    kept = [i for i in range(300) if pi_ref[i] == i]
    assert g.retained_ids.tolist() == kept and g.retained_ids.dtype == np.int64, "retained ids survive regrowth"
    assert np.array_equal(g.retained_embeddings, e[kept]), "retained rows survive regrowth"
    assert g.nbytes >= len(kept) * per_row, f"{g.nbytes} bytes for {len(kept)} rows"
    b = Matcher(0.9, d, exhaustive=True)
    pi_b, _, _ = b.admit(e)
    assert pi_b.tolist() == pi_ref and b.retained_ids.tolist() == kept, "one block through regrowth"


def test_matcher_capacity_starts_at_64_rows_and_grows_by_half_when_full():
    """``nbytes`` counts the capacity held (SPEC §13's memory figures read it): 64 rows at first,
    ``reserve(n)`` makes room for ``n`` at once and never shrinks, and a full matcher grows to
    ``max(needed, 1.5 × capacity)`` (amortised appends). Each retained row holds ``4·D`` bytes of
    float32 row, an 8-byte float64 squared norm and an 8-byte int64 id; the exhaustive matcher's
    band index stays empty, so the rest of ``nbytes`` is constant."""
    dim, per_row = 16, 16 * 4 + 8 + 8
    rng = np.random.default_rng(7)
    rows = rng.standard_normal((2200, dim))
    rows = (rows / np.linalg.norm(rows, axis=1, keepdims=True)).astype(np.float32)
    m = Matcher(0.999, dim, exhaustive=True)
    rest = m.nbytes - 64 * per_row
    for i in range(64):
        m.admit(rows[i : i + 1])
    assert m.n_retained == 64, "64 random rows at t = 0.999 are all retained"
    assert m.nbytes == rest + 64 * per_row, f"64 rows fit the initial capacity exactly: {m.nbytes - rest}"
    m.admit(rows[64:65])
    assert m.nbytes == rest + 96 * per_row, f"the 65th row grows 64 -> 96 rows: {(m.nbytes - rest) / per_row}"
    m.reserve(1000)
    assert m.nbytes == rest + 1000 * per_row, f"reserve(1000): {(m.nbytes - rest) / per_row}"
    m.reserve(10)
    assert m.nbytes == rest + 1000 * per_row, "reserve never shrinks"
    m.admit(rows[65:1065])
    assert m.n_retained == 1065 and m.nbytes == rest + 1500 * per_row, (
        f"1065 rows need more than 1000: 1.5 x 1000 = 1500 > 1065: {(m.nbytes - rest) / per_row}")
    m.admit(rows[1065:])
    assert m.n_retained == 2200 and m.nbytes == rest + 2250 * per_row, (
        f"2200 rows: 1.5 x 1500 = 2250: {(m.nbytes - rest) / per_row}")
    assert np.array_equal(m.retained_ids, np.arange(2200)), "every row kept, in order, across the regrowths"
    wide = Matcher(0.999, 200, exhaustive=True)
    wide_rest = wide.nbytes - 64 * (200 * 4 + 16)
    wide.reserve(100)
    assert wide.nbytes == wide_rest + 100 * (200 * 4 + 16), "capacity counts rows, not coordinates (D = 200 > 100)"
