"""The on-disk embedding cache (SPEC §4.6; issue 37 §3): a second run reads what the first
encoded; entries are written atomically; a corrupted or foreign entry is refused and encoded
again, never trusted; the cache is bounded, least recently used first; an unwritable folder is a
usage error before any work. The encoder is the hashing encoder (rows known without the cache:
each test compares against the encoder itself, never against the cache's own output)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np
import pytest

from lam_ref.text.embedding_cache import DiskCachedEncoder, EmbeddingCache
from lam_ref.text.encoders import HashingEncoder

ROOT = Path(__file__).resolve().parents[1]
DEMO = ROOT / "determinism" / "inputs" / "demo_agent.traj.json"
TEXTS = [f"window {i}: the quick brown fox {'jumps ' * i}over the lazy dog" for i in range(12)]


class Counting(HashingEncoder):
    """The hashing encoder, counting the texts it really encodes."""

    def __init__(self, dim: int = 64) -> None:
        super().__init__(dim)
        self.seen = 0

    def _encode(self, texts, batch_size, progress):
        self.seen += len(texts)
        return super()._encode(texts, batch_size, progress)


def _cached(root: Path, dim: int = 64, **kw) -> tuple[DiskCachedEncoder, Counting]:
    inner = Counting(dim)
    return DiskCachedEncoder(inner, EmbeddingCache(root, **kw)), inner


def _entries(root: Path) -> list[Path]:
    return sorted(p for p in root.rglob("*.emb") if not p.name.startswith(".tmp-"))


def test_a_second_run_reads_every_row_and_encodes_nothing(tmp_path):
    want = HashingEncoder(64).encode(TEXTS)
    first, inner1 = _cached(tmp_path)
    got1 = first.encode(TEXTS)
    second, inner2 = _cached(tmp_path)  # a new process's cache over the same folder
    got2 = second.encode(TEXTS)
    assert inner1.seen == len(TEXTS) and first.cache.written == len(TEXTS), first.cache.describe()
    assert inner2.seen == 0 and second.cache.hits == len(TEXTS), f"nothing encoded again: {second.cache.describe()}"
    assert np.array_equal(got1, want) and np.array_equal(got2, want), "the rows are the encoder's"
    assert len(_entries(tmp_path)) == len(TEXTS), "one entry per text"


def test_the_key_separates_encoders(tmp_path):
    """Another encoder (here another dimension, so other weights) never reads the first one's rows."""
    a, _ = _cached(tmp_path, dim=64)
    a.encode(TEXTS)
    b, inner = _cached(tmp_path, dim=32)
    got = b.encode(TEXTS)
    assert inner.seen == len(TEXTS) and b.cache.hits == 0, b.cache.describe()
    assert np.array_equal(got, HashingEncoder(32).encode(TEXTS)), "the second encoder's own rows"


@pytest.mark.parametrize("damage", ["flip a payload byte", "truncate", "foreign entry", "wrong dimension", "garbage"])
def test_a_corrupted_or_foreign_entry_is_refused_and_encoded_again(tmp_path, damage):
    enc, _ = _cached(tmp_path)
    enc.encode(TEXTS[:2])
    path = enc.cache._path(enc._model, TEXTS[0])
    other = enc.cache._path(enc._model, TEXTS[1])
    data = path.read_bytes()
    if damage == "flip a payload byte":
        bad = bytearray(data)
        bad[-20] ^= 0x01
        path.write_bytes(bytes(bad))
    elif damage == "truncate":
        path.write_bytes(data[:-9])
    elif damage == "foreign entry":  # another text's whole, valid entry under this text's name
        path.write_bytes(other.read_bytes())
    elif damage == "wrong dimension":  # a whole entry of the 32-dimensional encoder, under this name
        small, _ = _cached(tmp_path / "small", dim=32)
        small.encode(TEXTS[:1])
        path.write_bytes(small.cache._path(small._model, TEXTS[0]).read_bytes())
    else:
        path.write_bytes(b"not an entry")
    again, inner = _cached(tmp_path)
    got = again.encode(TEXTS[:2])
    assert again.cache.refused == 1 and inner.seen == 1 and again.cache.hits == 1, \
        f"{damage}: refused and encoded again: {again.cache.describe()}"
    assert np.array_equal(got, HashingEncoder(64).encode(TEXTS[:2])), f"{damage}: the encoder's rows, not the entry's"
    third, inner3 = _cached(tmp_path)
    third.encode(TEXTS[:2])
    assert inner3.seen == 0 and third.cache.refused == 0, f"{damage}: the entry was rewritten whole"


def test_a_failed_write_leaves_no_entry_and_no_temporary_file(tmp_path, monkeypatch):
    """Atomic: the entry appears by ``os.replace`` of a complete temporary file, or not at all."""
    enc, _ = _cached(tmp_path)

    def broken(src, dst):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", broken)
    with pytest.raises(OSError, match="No space left"):
        enc.encode(TEXTS[:1])
    leftovers = [p for p in tmp_path.rglob("*") if p.is_file()]
    assert leftovers == [], f"no partial entry or temporary file: {leftovers}"


def test_the_cache_is_bounded_and_evicts_the_least_recently_used(tmp_path):
    enc, _ = _cached(tmp_path)
    enc.encode(TEXTS[:1])
    entry = _entries(tmp_path)[0].stat().st_size
    bound = 4 * entry
    small, _ = _cached(tmp_path / "b", max_bytes=bound)
    small.encode(TEXTS[:4])
    paths = [small.cache._path(small._model, t) for t in TEXTS[:4]]
    for k, p in enumerate(paths):  # distinct ages: text 0 oldest
        os.utime(p, ns=(10**18 + k * 10**9, 10**18 + k * 10**9))
    reader, _ = _cached(tmp_path / "b", max_bytes=bound)
    reader.encode(TEXTS[:1])  # a hit makes text 0 the most recently used
    writer, _ = _cached(tmp_path / "b", max_bytes=bound)
    writer.encode(TEXTS[4:6])  # two new entries: two must go
    left = {p.name for p in _entries(tmp_path / "b")}
    assert writer.cache.evicted == 2 and writer.cache.size() <= bound, writer.cache.describe()
    assert paths[0].name in left and paths[1].name not in left and paths[2].name not in left, \
        "the least recently used (texts 1 and 2) went; text 0, read last, stayed"


def test_an_unwritable_cache_folder_is_one_line_and_exit_2_before_any_work(tmp_path, capsys):
    from lam_ref.cli import main

    blocker = tmp_path / "file"
    blocker.write_text("x")
    bad = str(blocker / "cache")
    with pytest.raises(SystemExit) as exc:
        main(["compact", str(DEMO), "--encoder", "hash", "--no-progress", "--embedding-cache", bad])
    err = capsys.readouterr().err.strip().splitlines()
    assert exc.value.code == 2, f"exit 2, got {exc.value.code}"
    assert len(err[-1:]) == 1 and "--embedding-cache" in err[-1] and bad in err[-1], err
    assert not any("encoded" in x for x in err), f"nothing was encoded: {err}"


@pytest.mark.parametrize("command", ["compact", "sweep", "pairs"])
def test_compact_sweep_and_pairs_reuse_the_cache_across_runs(command, tmp_path, capsys):
    """The same command twice over the same input with one cache folder: the second run reads
    every window the first wrote, encodes none, decides the same, and its table says so."""
    from lam_ref.cli import main

    cache = tmp_path / "cache"
    outs = []
    for k in range(2):
        out = tmp_path / f"{k}.json"
        extra = ["--no-l2"] if command == "compact" else []
        rc = main([command, str(DEMO), "--encoder", "hash", "--no-progress", "--embedding-cache", str(cache),
                   "--json", str(out), *extra])
        captured = capsys.readouterr()
        assert rc == 0, f"{command} run {k}: exit {rc}: {captured.err}"
        outs.append(json.loads(out.read_text(encoding="utf-8")))
    assert f"embedding cache {outs[1]['encoder']['embedding_cache']['hits']} read, 0 written" in captured.out, \
        f"{command}'s table names the cache's reads: {captured.out}"
    first, second = (o["encoder"]["embedding_cache"] for o in outs)
    assert first["written"] > 0 and first["hits"] == 0, first
    assert second["hits"] == first["written"] and second["written"] == 0, second
    if command == "compact":
        assert outs[0]["total"]["map_digest"] == outs[1]["total"]["map_digest"], "the same decisions"


def test_the_dask_path_refuses_the_cache(tmp_path, capsys):
    from lam_ref.cli import main

    rc = main(["compact", str(DEMO), "--encoder", "hash", "--no-progress", "--workers", "1",
               "--embedding-cache", str(tmp_path / "c")])
    err = capsys.readouterr().err.strip().splitlines()
    assert rc == 2 and len(err) == 1 and "--embedding-cache runs serially only" in err[0], \
        f"refused on Dask (its workers would not read it), one line: {rc} {err}"
