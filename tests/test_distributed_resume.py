"""Issue 39 §4: a resumed Dask run never trusts a run-folder file it did not check. Every file a
resumed run reads back from its run folder is bound to a checksum recorded when it was written: the
per-file records (SHA-256, ``tests/test_faults_runs.py``), the embedding shards and the staged
residual and audit files (XXH3-128, recorded in the records), the corpus map and the banded
greedy's files (written again by every run, checked where they are read). An edited shard or staged
file is computed again, so the resumed report and residual files equal a fresh run's
(docs/reliability.md).

In-process clusters (``LAM_REF_DASK_PROCESSES=0``) and the hash encoder keep these runs short."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("distributed")

from lam_ref.distributed.shards import ShardError, checksum_file  # noqa: E402
from lam_ref.distributed.trajectories import map_file, staged_problem  # noqa: E402

from .datagen import (  # noqa: E402
    outcome,  # noqa: E402
    run_cli,
    swe_corpus,
)

pytestmark = pytest.mark.dask


@pytest.fixture(autouse=True)
def _inproc(monkeypatch):
    monkeypatch.setenv("LAM_REF_DASK_PROCESSES", "0")
    monkeypatch.setenv("LAM_REF_DASK_TIMEOUT", "2")


def _flip(path: Path, at: int = -5) -> None:
    data = bytearray(path.read_bytes())
    data[at] ^= 0x01
    path.write_bytes(bytes(data))


def _edit_staged_residual(stage: Path) -> Path:
    """One staged residual edited so that it stays valid JSON lines (the edit a person would make)."""
    p = sorted(stage.glob("*.residual.jsonl"))[0]
    lines = p.read_text(encoding="utf-8").splitlines()
    rec = json.loads(lines[0])
    rec["text"] = "EDITED " + rec["text"]
    p.write_text("\n".join([json.dumps(rec), *lines[1:]]) + "\n", encoding="utf-8")
    return p


def _files(d: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(d.iterdir())}


def _found(report: dict) -> dict:
    """What a corpus run found (not how: the resumed and computed counts, the timings)."""
    total = {k: v for k, v in report["total"].items() if k not in ("wall_time_s", "resolver_peak_bytes")}
    return {"trajectories": outcome(report["trajectories"]), "total": total, "failures": report["failures"],
            "residual_total": report["residual_total"], "residual_files": report["residual_files"]}


def test_corpus_resume_recomputes_edited_run_folder_files_and_equals_a_fresh_run(tmp_path, capsys):
    """A corpus-scope run stopped after its work, one file's outputs removed (the part a killed run
    had not finished), then one shard, the corpus map and one staged residual edited and a stale
    banded shuffle file left: the resumed run recomputes the shard and the staged files (naming
    each), never reads the stale file, never places the edited residual, and its report and
    residual files equal a fresh run's. Before, the edited staged residual was copied into
    ``--residual-dir`` (and bound to a new audit store) with exit 0, and the stale shuffle file was
    read by the banded greedy."""
    d = swe_corpus(tmp_path, 3)
    run, ra, rb, fresh = tmp_path / "run", tmp_path / "ra", tmp_path / "rb", tmp_path / "fresh"
    base = ["compact", str(d), "--encoder", "hash", "--scope", "corpus", "--workers", "1", "--no-progress", "--mkdir"]
    rc, _, err = run_cli(capsys, *base, "--resume", str(run), "--residual-dir", str(ra), "--json", str(tmp_path / "a.json"))
    assert rc == 0, f"first run: {err}"
    for kind in ("files", "residuals"):  # the last file unfinished, as a run killed before it
        (run / kind / "0000002.json").unlink()
    shard = run / "shards" / "0000000.npy"
    _flip(shard)
    _flip(run / "map" / "pi.npy", -1)
    staged = _edit_staged_residual(run / "stage" / "0000001")
    stale = np.array([(0, 7, 10**6), (0, 7, 10**6 + 1)], dtype=[("band", "<i4"), ("key", "<u8"), ("row", "<i8")])
    np.save(run / "bands" / "shuffle" / "part-00000" / "tile-099999.npy", stale)  # a banded shuffle file left over
    rc, out, err = run_cli(capsys, *base, "--resume", str(run), "--residual-dir", str(rb), "--json", str(tmp_path / "b.json"))
    assert rc == 0, f"the resumed run recomputes what it cannot trust: rc={rc} {err}"
    assert "recomputing" in err and shard.name in err and "corrupt" in err, f"the edited shard is named: {err}"
    assert any("recomputing" in x and str(staged) in x for x in err.splitlines()), f"the edited staged file is named: {err}"
    rc, _, err = run_cli(capsys, *base, "--residual-dir", str(fresh), "--json", str(tmp_path / "f.json"))
    assert rc == 0, f"fresh run: {err}"
    a, b, f = (json.loads((tmp_path / n).read_text()) for n in ("a.json", "b.json", "f.json"))
    assert _found(b) == _found(f) and _found(a) == _found(f), "the resumed report equals a fresh run's"
    assert b["total"]["map_digest"] == f["total"]["map_digest"], "the corpus map equals a fresh run's"
    assert _files(rb) == _files(fresh), "the resumed run's residual files equal a fresh run's byte for byte"
    assert "EDITED" not in "".join(p.read_text() for p in rb.glob("*.residual.jsonl")), "the edit never reaches them"


def test_trajectory_scope_resume_recomputes_an_edited_staged_file(tmp_path, capsys):
    """The per-trajectory scope stages its residual and audit files the same way: an edited staged
    audit store is recomputed on resume (named), and the residual folder equals a fresh run's."""
    d = swe_corpus(tmp_path, 2)
    run, ra, rb = tmp_path / "run", tmp_path / "ra", tmp_path / "rb"
    base = ["compact", str(d), "--encoder", "hash", "--workers", "1", "--no-progress", "--mkdir"]
    assert run_cli(capsys, *base, "--resume", str(run), "--residual-dir", str(ra))[0] == 0
    store = sorted((run / "stage" / "0000000").glob("*.audit.json"))[0]
    _flip(store, 10)
    rc, _, err = run_cli(capsys, *base, "--resume", str(run), "--residual-dir", str(rb))
    assert rc == 0 and "recomputing" in err and str(store) in err, f"the edited store is recomputed: rc={rc} {err}"
    assert _files(rb) == _files(ra), "the resumed run's residual files equal the first run's"


def test_a_map_file_or_staged_file_not_the_one_written_is_named(tmp_path):
    """The one check behind both: a map file read by a residual task must have the checksum the
    driver recorded (else one line naming it), and a record that staged files without recording
    their checksums (an older run folder) has them recomputed rather than trusted."""
    (tmp_path / "map").mkdir()
    p = tmp_path / "map" / "pi.npy"
    np.save(p, np.arange(4))
    sums = {"pi": checksum_file(p)}
    assert map_file(str(tmp_path), "pi", sums).tolist() == [0, 1, 2, 3], "the recorded file is read"
    _flip(p, -1)
    with pytest.raises(ShardError, match=r"corpus map file '.*pi\.npy' is corrupt: checksum"):
        map_file(str(tmp_path), "pi", sums)
    problem = staged_problem(str(tmp_path), 0, {"staged": [0]})
    assert problem is not None and "0.residual.jsonl" in problem and "no recorded checksum" in problem, problem
    assert staged_problem(str(tmp_path), 0, {"staged": []}) is None, "nothing staged, nothing to check"


def test_a_band_file_changed_during_the_banded_greedy_is_named(tmp_path):
    """The banded greedy's shuffle files are checked where they are read, against the XXH3-128 the
    task that wrote them returned: one changed between the two steps raises one line naming it
    (before, it was read as it was)."""
    import distributed
    from distributed import as_completed

    from lam_ref.distributed import corpus_greedy, write_shards

    rng = np.random.default_rng(3)
    e = rng.normal(size=(60, 8))
    e = (e / np.linalg.norm(e, axis=1, keepdims=True)).astype(np.float32)
    shards = write_shards(e, tmp_path / "shards", 30)

    def progress(futs, desc):
        yield from as_completed(futs, with_results=True)
        if desc == "band keys":  # between the map and the reduce tasks
            _flip(sorted((tmp_path / "work" / "bands" / "shuffle").rglob("tile-*.npy"))[0])

    with distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=False, dashboard_address=":0") as c, \
            distributed.Client(c) as cl:
        with pytest.raises(ShardError, match=r"band file '.*shuffle.*tile-000000\.npy' is corrupt: checksum"):
            corpus_greedy(cl, shards, 0.9, mode="banded", tile=20, work_dir=tmp_path / "work", progress=progress)
