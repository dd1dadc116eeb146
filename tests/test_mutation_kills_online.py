"""Algorithm 1's session (:mod:`lam_ref.online`) at its edges: what an unused session reports,
each turn's record, the session file's header, and every way ``load`` refuses a file, each with
a message naming the file and what is wrong (SPEC §6).

Written for mutants of :mod:`lam_ref.online` that survived ``make mutation`` (docs/mutation.md).
"""

from __future__ import annotations

import hashlib
import io
import json
import zipfile

import numpy as np
import pytest

from lam_ref.geometry import LamValueError, delta_from_t
from lam_ref.online import FORMAT, FORMAT_VERSION, OnlineSession, SessionFileError

pytestmark = pytest.mark.claim("ONLINE")

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


def test_normalize_rescales_arrivals():
    """``normalize=True`` rescales each arrival to unit norm; without it, non-unit rows are refused."""
    s = OnlineSession(0.9, normalize=True)
    tr = s.admit(np.array([[2, 0, 0], [0, 3, 0], [5, 0, 0]], dtype=np.float32))
    assert tr.pi.tolist() == [0, 1, 0], f"rows 0 and 2 have the same direction: {tr.pi}"
    with pytest.raises(LamValueError, match="turn_embeddings"):
        OnlineSession(0.9).admit(np.array([[2, 0, 0]], dtype=np.float32))


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
