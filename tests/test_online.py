"""Algorithm 1: online ≡ batch, never revising, save/restore (SPEC §6; claim ONLINE)."""

from __future__ import annotations

import hashlib
import io
import json
import zipfile

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from lam_ref import OnlineSession, oracle, substitute
from lam_ref.geometry import LamValueError, delta_from_t
from lam_ref.online import FORMAT, FORMAT_VERSION, SessionFileError

from .datagen import clustered

pytestmark = pytest.mark.claim("ONLINE")


# ------------------------------------------------------------------------------------------------
# Algorithm 1 equals Algorithm 2 (SPEC §6): any split into turns, decisions never revised, the lowest witness
# ------------------------------------------------------------------------------------------------


def _split(n: int, cuts: list[int]) -> list[tuple[int, int]]:
    points = sorted({c for c in cuts if 0 < c < n})
    bounds = [0, *points, n]
    return list(zip(bounds[:-1], bounds[1:]))


@pytest.mark.claim("ONLINE")
@given(
    seed=st.integers(0, 2**32 - 1),
    n=st.integers(1, 250),
    cuts=st.lists(st.integers(0, 250), max_size=30),
    t=st.sampled_from([0.5, 0.9, 0.95, 0.99]),
    exhaustive=st.booleans(),
)
def test_online_equals_batch_for_any_split(seed, n, cuts, t, exhaustive):
    """SPEC §6: concatenated admit() outputs over any split into turns equal Algorithm 2's π, and the
    run δ̂ is the max of the turn δ̂s. Shown to catch: no matching within a turn (a mutant that checks
    arrivals only against R from previous turns) fails on splits with several arrivals per turn."""
    e = clustered(np.random.default_rng(seed), n, 16, dup=0.4)
    batch = substitute(e, t, exhaustive=exhaustive)
    s = OnlineSession(t, exhaustive=exhaustive)
    turns = [s.admit(e[a:b]) for a, b in _split(n, cuts)]
    pi = np.concatenate([tr.pi for tr in turns])
    assert np.array_equal(pi, batch.pi), f"online π differs from batch at {np.flatnonzero(pi != batch.pi)[:5]}"
    assert np.array_equal(s.pi, batch.pi), "session.pi must be the concatenation"
    assert s.delta_hat == max(tr.delta_hat for tr in turns) == batch.delta_hat, "run δ̂ = max of turn δ̂ = batch δ̂"
    assert s.deletion_digest == batch.deletion_digest and s.map_digest == batch.map_digest, "digests must agree"
    if exhaustive:
        assert np.array_equal(pi, oracle(e, t).pi), "exhaustive online must equal the oracle"


@given(seed=st.integers(0, 2**32 - 1), n=st.integers(2, 120))
def test_decisions_are_never_revised(seed, n):
    """Alg. 1: admitting later turns never changes the π entries already returned."""
    e = clustered(np.random.default_rng(seed), n, 8, dup=0.5)
    s = OnlineSession(0.9)
    returned = []
    for k in range(n):
        returned.append(int(s.admit(e[k : k + 1]).pi[0]))
        assert s.pi.tolist() == returned, "an earlier decision changed after a later arrival"


def test_intra_turn_matching():
    """SPEC §6: an arrival may match an earlier arrival of the same turn."""
    e = np.array([[1.0, 0.0], [0.999, 0.0447]], dtype=np.float32)
    e /= np.linalg.norm(e, axis=1, keepdims=True)
    for exhaustive in (False, True):
        tr = OnlineSession(0.95, exhaustive=exhaustive, r=1, rel=1.0).admit(e)
        assert tr.pi.tolist() == [0, 0], f"second arrival must match the first within the turn (exhaustive={exhaustive})"
        assert 0 < tr.delta_hat <= np.sqrt(2 - 2 * 0.95), "turn δ̂ is the merge distance"


@pytest.mark.claim("ONLINE")
@pytest.mark.parametrize("exhaustive", [True, False])
def test_one_arrival_per_turn_takes_the_lowest_witness(exhaustive):
    """SPEC §2/§6: with every turn a single arrival (the session's one-row fast path), an arrival
    within δ of several retained rows maps to the lowest id, as the oracle does. By hand: rows 0
    and 1 are retained (far apart), arrival 2 is within δ of both and nearer to 1: π(2) = 0. Then a
    dense random stream, one row per turn, at a low threshold (many arrivals with several
    witnesses) must equal the oracle. Shown to fail on a fast path that took the last (highest-id)
    match instead of the first."""
    t = 0.5  # δ = 1
    a = np.array([1.0, 0.0, 0.0], np.float32)
    b = np.array([0.0, 1.0, 0.0], np.float32)
    c = np.array([0.6, 0.8, 0.0], np.float32)
    c /= np.linalg.norm(c)
    assert np.linalg.norm(a - b) > 1.0 and np.linalg.norm(c - a) <= 1.0 and np.linalg.norm(c - b) < np.linalg.norm(c - a)
    s = OnlineSession(t, exhaustive=exhaustive)
    pis = [int(s.admit(row[None, :]).pi[0]) for row in (a, b, c)]
    # banded search may miss row 0 as a candidate (SPEC §5 allows it), never pick 1 over a found 0
    allowed = [[0, 1, 0]] if exhaustive else [[0, 1, 0], [0, 1, 2]]
    assert pis in allowed, f"π must be one of {allowed} (lowest-index witness), got {pis}"
    e = clustered(np.random.default_rng(3), 300, 8, dup=0.5)
    ref = substitute(e, t, exhaustive=exhaustive)  # the same candidates, all at once (Algorithm 2)
    if exhaustive:
        assert np.array_equal(ref.pi, oracle(e, t).pi), "exhaustive Algorithm 2 is the oracle"
    s = OnlineSession(t, exhaustive=exhaustive)
    pi = np.concatenate([s.admit(row[None, :]).pi for row in e])
    kept = np.flatnonzero(ref.pi == np.arange(len(e)))
    d = np.linalg.norm(e[:, None, :].astype(np.float64) - e[None, kept, :], axis=2)
    multi = sum(1 for i in range(len(e)) if ((kept < i) & (d[i] <= 1.0)).sum() >= 2)
    assert multi > 20, f"the stream must hold arrivals with several retained witnesses ({multi})"
    assert np.array_equal(pi, ref.pi), f"one-row turns differ from Algorithm 2 at {np.flatnonzero(pi != ref.pi)[:5]}"


@pytest.mark.claim("ONLINE")
@pytest.mark.parametrize("exhaustive", [True, False])
def test_admit_arrival_takes_the_lowest_id_whatever_the_candidate_order(exhaustive, monkeypatch):
    """Algorithm 1 line 8 (``y* = min{y ∈ C : ‖e_j − e_y‖ ≤ δ}``; SPEC §6): the per-arrival test of
    :func:`lam_ref.online.admit_arrival` applies lowest-id-wins itself. With the matcher's
    candidate generator made to return its positions reversed, a stream of one-row turns at a low
    threshold (many arrivals with several retained witnesses) still equals Algorithm 2 and, in
    exhaustive mode, the oracle. Taking the first candidate within δ fails here. (Distances are
    compared exactly: both paths take them from :func:`lam_ref.geometry.sq_dist_rows`.)"""
    from lam_ref.substitution import Matcher

    t = 0.5
    real = Matcher.candidates
    monkeypatch.setattr(Matcher, "candidates", lambda self, row, keys: real(self, row, keys)[::-1].copy())
    e = clustered(np.random.default_rng(3), 300, 8, dup=0.5)
    ref = substitute(e, t, exhaustive=exhaustive)
    if exhaustive:
        assert np.array_equal(ref.pi, oracle(e, t).pi), "exhaustive Algorithm 2 is the oracle"
    s = OnlineSession(t, exhaustive=exhaustive)
    turns = [s.admit(row[None, :]) for row in e]
    pi = np.concatenate([tr.pi for tr in turns])
    assert np.array_equal(pi, ref.pi), f"one-row turns differ from Algorithm 2 at {np.flatnonzero(pi != ref.pi)[:5]}"
    assert np.array_equal(s.distances, ref.distances), "and so do the merge distances"
    assert s.pairs_verified == ref.pairs_verified, f"pairs verified {s.pairs_verified} vs {ref.pairs_verified}"


def test_turn_of_several_one_dimensional_arrivals():
    """SPEC §6.1: a turn of several arrivals is tested in order whatever the dimension; with
    ``D = 1`` (the unit "sphere" {-1, +1}, points 2 apart) the turn ``[1, -1, 1]`` gives
    ``π = [0, 1, 0]``, as one arrival per turn does. Dispatching on the width instead of the
    number of arrivals fails here."""
    rows = np.array([[1.0], [-1.0], [1.0]], dtype=np.float32)
    for exhaustive in (True, False):
        s = OnlineSession(0.5, exhaustive=exhaustive)
        tr = s.admit(rows)
        assert tr.pi.tolist() == [0, 1, 0] and len(tr) == 3, f"exhaustive={exhaustive}: {tr.pi}"
        one = OnlineSession(0.5, exhaustive=exhaustive)
        assert [int(one.admit(r[None, :]).pi[0]) for r in rows] == [0, 1, 0], "one arrival per turn"


# ------------------------------------------------------------------------------------------------
# A session's state and its turn records: what an unused session reports, global ids, settings, refusals naming the argument
# ------------------------------------------------------------------------------------------------


ROWS = np.array([[1, 0, 0], [0, 1, 0], [1, 0, 0], [0, 0, 1], [0, 1, 0]], dtype=np.float32)


def test_unused_session_reports_nothing_seen():
    """Before any arrival: no dimension, nothing seen or kept, empty int64 ids and map, empty
    float64 distances, no pairs verified; ``delta`` follows from ``t`` (eq. 1)."""
    s = OnlineSession(0.875)
    assert s.dim is None and s.n_seen == 0 and s.kept_count == 0 and s.pairs_verified == 0 and s.turns == 0, "nothing seen"
    assert s.retained_ids.dtype == np.int64 and s.retained_ids.shape == (0,), f"{s.retained_ids!r}"
    assert s.pi.dtype == np.int64 and s.pi.shape == (0,), f"{s.pi!r}"
    assert s.distances.dtype == np.float64 and s.distances.shape == (0,), f"{s.distances!r}"
    assert s.delta == pytest.approx(delta_from_t(0.875)) and s.delta == pytest.approx(0.5), f"δ = sqrt(2 - 2t): {s.delta}"
    fixed = OnlineSession(0.875, dim=3)
    assert fixed.dim == 3 and fixed.n_seen == 0, "a session may fix its dimension up front"
    with pytest.raises(LamValueError, match="turn_embeddings"):
        fixed.admit(np.ones((1, 4), np.float32) / 2)


def test_turn_records_use_global_ids():
    """A turn's record: its first global id, the map (global ids), the merge distances, the
    turn's own ``δ̂``, the retained mask relative to the turn, its length; the session counts
    every arrival, retained row and turn; ``retained_ids`` is a copy."""
    s = OnlineSession(0.9, exhaustive=True)
    a = s.admit(ROWS[:2])
    b = s.admit(ROWS[2:])
    assert (a.first_id, b.first_id) == (0, 2), "ids continue across turns"
    assert b.pi.tolist() == [0, 3, 1] and b.kept.tolist() == [False, True, False], f"{b.pi}, {b.kept}"
    assert len(b) == 3 and b.delta_hat == 0.0 and a.delta_hat == 0.0, "exact copies merge at distance 0"
    assert (s.n_seen, s.kept_count, s.turns) == (5, 3, 2), f"{s.n_seen}, {s.kept_count}, {s.turns}"
    assert s.pairs_verified == a.pairs_verified + b.pairs_verified > 0, "pairs verified add up over turns"
    ids = s.retained_ids
    ids[0] = 99
    assert s.retained_ids.tolist() == [0, 1, 3], "retained_ids is a copy"
    c, d = np.float32(np.cos(0.3)), np.float32(np.sin(0.3))
    t = s.admit(np.array([[c, d, 0]], dtype=np.float32))
    assert t.pi.tolist() == [0] and t.delta_hat == pytest.approx(2 * np.sin(0.15), abs=1e-6), f"{t.pi}, {t.delta_hat}"


def test_empty_turns_and_empty_session(tmp_path):
    """An empty turn returns an empty map; an unused session saves and restores."""
    s = OnlineSession(0.9)
    tr = s.admit(np.zeros((0, 4), np.float32))
    assert len(tr) == 0 and tr.delta_hat == 0.0, "empty turn gives nothing"
    s2 = OnlineSession.load(OnlineSession(0.9).save(tmp_path / "e.lam"))
    assert s2.n_seen == 0 and s2.pi.shape == (0,), "empty session round-trips"


def test_normalize_rescales_arrivals():
    """``normalize=True`` rescales each arrival to unit norm; without it, non-unit rows are refused."""
    s = OnlineSession(0.9, normalize=True)
    tr = s.admit(np.array([[2, 0, 0], [0, 3, 0], [5, 0, 0]], dtype=np.float32))
    assert tr.pi.tolist() == [0, 1, 0], f"rows 0 and 2 have the same direction: {tr.pi}"
    with pytest.raises(LamValueError, match="turn_embeddings"):
        OnlineSession(0.9).admit(np.array([[2, 0, 0]], dtype=np.float32))


def test_default_threshold_and_band_settings_reach_the_matcher():
    """``OnlineSession()`` uses ``t = 0.95``; the band settings ``r`` and ``rel`` given to the
    session are the ones its candidate generator uses, whether the dimension is fixed up front
    or taken from the first turn: the pairs verified equal Algorithm 2's at the same settings."""
    assert OnlineSession().t == 0.95, "the default threshold of SPEC §6"
    e = clustered(np.random.default_rng(7), 120, 8)
    counts = {}
    for r, rel in ((4, 0.2), (1, 0.5), (2, 1.0)):
        batch = substitute(e, 0.9, r=r, rel=rel)
        counts[(r, rel)] = batch.pairs_verified
        for dim in (None, 8):
            s = OnlineSession(0.9, r=r, rel=rel, dim=dim)
            tr = s.admit(e)
            assert tr.pi.tolist() == batch.pi.tolist(), f"online ≡ batch at r={r}, rel={rel}, dim={dim}"
            assert tr.pairs_verified == batch.pairs_verified, (
                f"r={r}, rel={rel}, dim={dim}: {tr.pairs_verified} pairs, batch verified {batch.pairs_verified}")
    assert len(set(counts.values())) == 3, f"the settings must give different candidate counts: {counts}"


def test_wrong_width_is_refused_naming_the_argument():
    """A turn of another width is refused with the argument named exactly (``turn_embeddings``)."""
    s = OnlineSession(0.9, dim=3)
    with pytest.raises(LamValueError, match=r"^turn_embeddings has dimension D = 4, expected 3"):
        s.admit(np.ones((1, 4), np.float32) / 2)


# ------------------------------------------------------------------------------------------------
# The session file (SPEC §6.3): a restored session decides as an uninterrupted one; the header; every way
# `load` refuses a file, each with a message naming the file and what is wrong
# ------------------------------------------------------------------------------------------------


@pytest.mark.claim("ONLINE")
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(2, 150), stop=st.integers(1, 149), exhaustive=st.booleans())
def test_save_restore_decides_as_uninterrupted(seed, n, stop, exhaustive, tmp_path_factory):
    """SPEC §6: a restored session makes the same decisions as one that never stopped."""
    stop = min(stop, n - 1)
    e = clustered(np.random.default_rng(seed), n, 12, dup=0.4)
    whole = OnlineSession(0.9, exhaustive=exhaustive)
    whole.admit(e[:stop])
    whole.admit(e[stop:])
    first = OnlineSession(0.9, exhaustive=exhaustive)
    first.admit(e[:stop])
    path = tmp_path_factory.mktemp("s") / "session.lam"
    first.save(path)
    restored = OnlineSession.load(path)
    tr = restored.admit(e[stop:])
    assert np.array_equal(restored.pi, whole.pi), "restored session decided differently"
    assert tr.pi.tolist() == whole.pi[stop:].tolist(), "the post-restore turn differs"
    assert restored.delta_hat == whole.delta_hat and restored.turns == 2, "δ̂ and turn count carry over"


def test_save_is_atomic_and_refuses_corruption(tmp_path):
    """Corrupt, truncated, foreign and mismatched files are refused with a clear SessionFileError."""
    e = clustered(np.random.default_rng(0), 40, 8)
    s = OnlineSession(0.9)
    s.admit(e)
    path = s.save(tmp_path / "a.lam")
    assert [p.name for p in tmp_path.iterdir()] == ["a.lam"], "no temp files may be left behind"
    raw = path.read_bytes()

    (tmp_path / "trunc.lam").write_bytes(raw[: len(raw) // 2])
    with pytest.raises(SessionFileError, match="trunc.lam"):
        OnlineSession.load(tmp_path / "trunc.lam")

    flipped = bytearray(raw)
    pos = raw.index(b"\x93NUMPY") + 200  # inside the first array's data
    flipped[pos] ^= 0xFF
    (tmp_path / "flip.lam").write_bytes(bytes(flipped))
    with pytest.raises(SessionFileError, match="corrupt|not a readable"):
        OnlineSession.load(tmp_path / "flip.lam")

    (tmp_path / "junk.lam").write_bytes(b"not a zip")
    with pytest.raises(SessionFileError, match="junk.lam"):
        OnlineSession.load(tmp_path / "junk.lam")

    with zipfile.ZipFile(tmp_path / "foreign.lam", "w") as zf:
        zf.writestr("header.json", '{"format": "something-else", "version": 1}')
    with pytest.raises(SessionFileError, match="not a lam_ref online session"):
        OnlineSession.load(tmp_path / "foreign.lam")

    with pytest.raises(SessionFileError, match="t=0.9, but t=0.95"):
        OnlineSession.load(path, t=0.95)
    with pytest.raises(SessionFileError, match="exhaustive=False, but exhaustive=True"):
        OnlineSession.load(path, exhaustive=True)
    assert np.array_equal(OnlineSession.load(path, t=0.9).pi, s.pi), "matching settings load fine"


def _saved(tmp_path, **kw):
    s = OnlineSession(0.9, **kw)
    s.admit(ROWS[:2])
    s.admit(ROWS[2:])
    return s, s.save(tmp_path / "s.lam")


def _read(path):
    with zipfile.ZipFile(path) as zf:
        header = json.loads(zf.read("header.json"))
        arrays = {n: np.load(io.BytesIO(zf.read(n + ".npy"))) for n in header["sha256"]}
    return header, arrays


def _write(path, header, arrays, *, rehash=True):
    blobs = {}
    for name, arr in arrays.items():
        buf = io.BytesIO()
        np.save(buf, arr, allow_pickle=False)
        blobs[name] = buf.getvalue()
    if rehash:
        header = {**header, "sha256": {k: hashlib.sha256(v).hexdigest() for k, v in blobs.items()}}
    with zipfile.ZipFile(path, "w") as zf:
        zf.writestr("header.json", json.dumps(header))
        for name, blob in blobs.items():
            zf.writestr(name + ".npy", blob)
    return path


def test_session_file_header(tmp_path):
    """The header of a session file names its format and version, every setting, the next id,
    the turn count and a SHA-256 per array; the arrays hold the retained rows, ids, map,
    distances and turn lengths."""
    s, path = _saved(tmp_path, r=3, rel=0.25, exhaustive=False, normalize=True)
    header, arrays = _read(path)
    assert (header["format"], header["version"]) == (FORMAT, FORMAT_VERSION) == ("lam_ref.online_session", 1), f"{header}"
    assert header["settings"] == {"t": 0.9, "r": 3, "rel": 0.25, "exhaustive": False, "normalize": True, "dim": 3}, f"{header}"
    assert (header["next_id"], header["turns"]) == (5, 2), f"{header}"
    assert sorted(header["sha256"]) == ["distances", "pi", "retained_embeddings", "retained_ids", "turn_lengths"], f"{header}"
    assert arrays["turn_lengths"].tolist() == [2, 3] and arrays["retained_ids"].tolist() == [0, 1, 3], f"{arrays}"
    assert np.array_equal(arrays["retained_embeddings"], ROWS[[0, 1, 3]]) and arrays["pi"].tolist() == s.pi.tolist(), f"{arrays}"
    back = OnlineSession.load(path)
    assert (back.t, back.settings.r, back.settings.rel, back.exhaustive, back.normalize, back.dim) == (0.9, 3, 0.25, False, True, 3)
    assert back.turns == 2 and back.n_seen == 5 and back.kept_count == 3, f"{back.turns}, {back.n_seen}"
    assert [tr.pi.dtype for tr in [back.admit(ROWS[:1])]] == [np.int64] and back.pi.tolist()[-1] == 0, "decides on after loading"


def test_header_is_written_with_sorted_keys(tmp_path):
    """The header JSON is written with sorted keys, so equal sessions give byte-equal files."""
    _, path = _saved(tmp_path)
    with zipfile.ZipFile(path) as zf:
        raw = zf.read("header.json").decode()
    header = json.loads(raw)
    assert raw == json.dumps(header, sort_keys=True), f"header keys not sorted: {raw[:120]}"
    assert list(header) == sorted(header), f"top-level keys in order: {list(header)}"


def test_unused_session_file_keeps_its_dtypes(tmp_path):
    """An unused session's file holds empty arrays of the format's dtypes: float32 ``(0, 0)``
    rows, int64 ids and turn lengths; it loads back as an unused session."""
    path = OnlineSession(0.9).save(tmp_path / "u.lam")
    _, arrays = _read(path)
    assert arrays["retained_embeddings"].dtype == np.float32 and arrays["retained_embeddings"].shape == (0, 0), (
        f"{arrays['retained_embeddings'].dtype} {arrays['retained_embeddings'].shape}")
    for key in ("retained_ids", "turn_lengths", "pi"):
        assert arrays[key].dtype == np.int64 and arrays[key].shape == (0,), f"{key}: {arrays[key].dtype} {arrays[key].shape}"
    back = OnlineSession.load(path)
    assert back.dim is None and back.n_seen == 0 and back.pi.dtype == np.int64, "an unused session loads as unused"


def test_load_names_the_file_and_the_problem(tmp_path):
    """Each refusal names the file and says what is wrong: another version, a checksum
    mismatch (naming the array), an unreadable file, a setting other than requested (``r``,
    ``rel``), an inconsistent map or counts, non-finite distances."""
    s, path = _saved(tmp_path)
    header, arrays = _read(path)
    name = str(tmp_path / "x.lam")

    _write(tmp_path / "x.lam", {**header, "version": 2}, arrays)
    with pytest.raises(SessionFileError, match=rf"^path {name!r} has session format version 2, this lam_ref reads 1$"):
        OnlineSession.load(tmp_path / "x.lam")

    _write(tmp_path / "x.lam", header, {**arrays, "pi": arrays["pi"][::-1].copy()}, rehash=False)
    with pytest.raises(SessionFileError, match=rf"^path {name!r} is corrupt: checksum mismatch in 'pi'$"):
        OnlineSession.load(tmp_path / "x.lam")

    with zipfile.ZipFile(tmp_path / "x.lam", "w") as zf:
        zf.writestr("header.json", json.dumps({"format": FORMAT, "version": 1}))
    with pytest.raises(SessionFileError, match=rf"^path {name!r} is not a readable lam_ref session file: "):
        OnlineSession.load(tmp_path / "x.lam")

    with pytest.raises(SessionFileError, match=r"was saved with r=4, but r=8 was requested$"):
        OnlineSession.load(path, r=8)
    with pytest.raises(SessionFileError, match=r"was saved with rel=0.2, but rel=0.5 was requested$"):
        OnlineSession.load(path, rel=0.5)
    assert OnlineSession.load(path, t=0.9, r=4, rel=0.2, exhaustive=False).n_seen == 5, "matching settings load"

    inconsistent = rf"^path {name!r} is inconsistent: the map, retained ids and counts disagree$"
    _write(tmp_path / "x.lam", {**header, "next_id": 6}, arrays)
    with pytest.raises(SessionFileError, match=inconsistent):
        OnlineSession.load(tmp_path / "x.lam")
    for key, arr in (("distances", arrays["distances"][:-1]), ("retained_ids", arrays["retained_ids"][:-1]),
                     ("retained_ids", np.array([0, 1, 4])), ("pi", np.array([0, 1, 0, 3, 4])),
                     ("retained_embeddings", np.zeros((3, 2), np.float32))):
        _write(tmp_path / "x.lam", header, {**arrays, key: arr})
        with pytest.raises(SessionFileError, match=inconsistent):
            OnlineSession.load(tmp_path / "x.lam")

    dist = arrays["distances"].copy()
    dist[2] = np.inf
    _write(tmp_path / "x.lam", header, {**arrays, "distances": dist})
    with pytest.raises(SessionFileError, match=rf"^path {name!r} holds non-finite distances$"):
        OnlineSession.load(tmp_path / "x.lam")
    with pytest.raises(FileNotFoundError):
        OnlineSession.load(tmp_path / "missing.lam")


def test_load_refuses_another_format_naming_it(tmp_path):
    """A zip of another format is refused with the file and the format it claims."""
    _, path = _saved(tmp_path)
    header, arrays = _read(path)
    name = str(tmp_path / "x.lam")
    _write(tmp_path / "x.lam", {**header, "format": "other.thing"}, arrays)
    with pytest.raises(SessionFileError, match=rf"^path {name!r} is not a lam_ref online session \(format 'other.thing'\)$"):
        OnlineSession.load(tmp_path / "x.lam")
    with pytest.raises(SessionFileError, match=rf"^path {str(path)!r} was saved with t=0.9, but t=0.8 was requested$"):
        OnlineSession.load(path, t=0.8)


def test_load_refuses_pickled_arrays(tmp_path):
    """Arrays are read without pickle: an object array (pickled) with a valid checksum is refused
    as unreadable, never unpickled."""
    _, path = _saved(tmp_path)
    header, arrays = _read(path)
    buf = io.BytesIO()
    np.save(buf, np.array([0, 1, 0, 3, 1], dtype=object), allow_pickle=True)
    blobs = {}
    for key, arr in arrays.items():
        b = io.BytesIO()
        np.save(b, arr, allow_pickle=False)
        blobs[key] = b.getvalue()
    blobs["pi"] = buf.getvalue()
    header = {**header, "sha256": {k: hashlib.sha256(v).hexdigest() for k, v in blobs.items()}}
    with zipfile.ZipFile(tmp_path / "x.lam", "w") as zf:
        zf.writestr("header.json", json.dumps(header))
        for key, blob in blobs.items():
            zf.writestr(key + ".npy", blob)
    name = str(tmp_path / "x.lam")
    with pytest.raises(SessionFileError, match=rf"^path {name!r} is not a readable lam_ref session file: .*pickle"):
        OnlineSession.load(tmp_path / "x.lam")


def test_load_refuses_maps_that_are_not_substitutions(tmp_path):
    """A map whose retained ids agree with the file but that points at a deleted chunk
    (``π[4] = 2`` with ``π[2] = 0``) is not a δ-substitution map (Definition 1): refused."""
    _, path = _saved(tmp_path)
    header, arrays = _read(path)
    assert arrays["pi"].tolist() == [0, 1, 0, 3, 1], "the saved map (rows 2 and 4 repeat rows 0 and 1)"
    _write(tmp_path / "x.lam", header, {**arrays, "pi": np.array([0, 1, 0, 3, 2])})
    with pytest.raises(SessionFileError, match=r"is inconsistent: the map, retained ids and counts disagree$"):
        OnlineSession.load(tmp_path / "x.lam")


def test_load_checks_the_width_of_the_retained_rows(tmp_path):
    """The retained rows must have the file's dimension, one row or none; a file without a
    dimension (an unused session) must hold no rows and no arrivals."""
    s = OnlineSession(0.9)
    s.admit(ROWS[:1])
    path = s.save(tmp_path / "one.lam")
    header, arrays = _read(path)
    inconsistent = r"is inconsistent: the map, retained ids and counts disagree$"
    _write(tmp_path / "x.lam", header, {**arrays, "retained_embeddings": np.zeros((1, 2), np.float32)})
    with pytest.raises(SessionFileError, match=inconsistent):
        OnlineSession.load(tmp_path / "x.lam")
    _write(tmp_path / "x.lam", header, {**arrays, "retained_embeddings": np.zeros((1, 0), np.float32)})
    with pytest.raises(SessionFileError, match=inconsistent):
        OnlineSession.load(tmp_path / "x.lam")
    no_dim = {**header, "settings": {**header["settings"], "dim": None}}
    _write(tmp_path / "x.lam", no_dim, arrays)
    with pytest.raises(SessionFileError, match=inconsistent):
        OnlineSession.load(tmp_path / "x.lam")
    _write(tmp_path / "x.lam", no_dim, {**arrays, "retained_embeddings": np.zeros((1, 0), np.float32)})
    with pytest.raises(SessionFileError, match=inconsistent):
        OnlineSession.load(tmp_path / "x.lam")
    fixed = OnlineSession(0.9, dim=3).save(tmp_path / "fixed.lam")
    header, arrays = _read(fixed)
    assert arrays["retained_embeddings"].shape == (0, 3), "an unused session of fixed width saves (0, D) rows"
    _write(tmp_path / "x.lam", header, {**arrays, "retained_embeddings": np.zeros((0, 2), np.float32)})
    with pytest.raises(SessionFileError, match=inconsistent):
        OnlineSession.load(tmp_path / "x.lam")


def test_load_restores_turns_and_dtypes(tmp_path):
    """After loading, the map is int64 and the distances float64 even if the file stored narrower
    types, and the turns are the saved ones: saving the loaded session gives the same lengths."""
    s, path = _saved(tmp_path)
    header, arrays = _read(path)
    _write(tmp_path / "x.lam", header, {**arrays, "pi": arrays["pi"].astype(np.int32),
                                        "distances": arrays["distances"].astype(np.float32)})
    back = OnlineSession.load(tmp_path / "x.lam")
    assert back.pi.dtype == np.int64 and back.pi.tolist() == s.pi.tolist(), f"{back.pi.dtype} {back.pi}"
    assert back.distances.dtype == np.float64, f"{back.distances.dtype}"
    _, again = _read(back.save(tmp_path / "y.lam"))
    assert again["turn_lengths"].tolist() == [2, 3], f"turns kept: {again['turn_lengths']}"


def test_restored_rows_are_float32_as_at_admission(tmp_path):
    """Restored rows are cast to float32 before they are indexed, as at admission: a retained row
    stored in float64 a hair below a quantizer boundary (``rint`` half-way point of SPEC §5's
    ``Q_ε``) whose float32 value lies on the other side still matches its float32 copy."""
    step = 2.0 * 0.2 / np.sqrt(2.0)  # 2ε, ε = rel/sqrt(D), default rel = 0.2, D = 2
    x64 = 0.5 * step - 1e-10
    x32 = float(np.float32(x64))
    assert np.rint(x64 / step) != np.rint(x32 / step), "the float64 and float32 values quantize apart"
    row64 = np.array([[x64, np.sqrt(1.0 - x64 * x64)]])
    s = OnlineSession(0.99)
    s.admit(row64.astype(np.float32))
    header, arrays = _read(s.save(tmp_path / "s.lam"))
    _write(tmp_path / "x.lam", header, {**arrays, "retained_embeddings": row64})
    back = OnlineSession.load(tmp_path / "x.lam")
    assert back.admit(row64.astype(np.float32)).pi.tolist() == [0], "the float32 copy of the retained row merges"
