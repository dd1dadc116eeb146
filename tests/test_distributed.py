"""The corpus scope on Dask equals the serial greedy (paper §2.4, Algorithm 2; claims ``DEF1``,
``BAND``): exact tile pairs and banded buckets, folded identical rows, one resolve; the per-file
runs of ``lam-ref compact --workers`` equal the serial command; bad input gives one line.

Clusters here are in-process (``processes=False``; the tasks are the same functions); the fault
tests with real worker processes are in ``tests/test_distributed_faults.py``.
"""

from __future__ import annotations

import json
import math
import os
from pathlib import Path

import numpy as np
import pytest

distributed = pytest.importorskip("distributed")

from lam_ref.cli import main  # noqa: E402
from lam_ref.distributed import ShardError, corpus_greedy, resolve_edges, write_shards  # noqa: E402
from lam_ref.distributed.cluster import ClusterSpec, wait_with_progress  # noqa: E402
from lam_ref.distributed.trajectories import digests_from_report, input_files  # noqa: E402
from lam_ref.geometry import delta_sq, sq_dist  # noqa: E402
from lam_ref.substitution import oracle, substitute  # noqa: E402
from lam_ref.text.loaders import shared_data_dir  # noqa: E402

from .datagen import outcome, swe_agent_traj  # noqa: E402

pytestmark = pytest.mark.dask
SHARED = shared_data_dir()


@pytest.fixture(scope="module")
def client():
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=False, dashboard_address=":0") as c:
        with distributed.Client(c) as cl:
            yield cl


@pytest.fixture()
def inproc(monkeypatch):
    """CLI runs in this test use an in-process cluster (workers are threads)."""
    monkeypatch.setenv("LAM_REF_DASK_PROCESSES", "0")
    monkeypatch.setenv("LAM_REF_DASK_TIMEOUT", "2")


def _clustered(seed: int, n: int, d: int, centres: int, noise: float, copies: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    base = rng.normal(size=(centres, d))
    e = base[rng.integers(0, centres, n)] + rng.normal(scale=noise, size=(n, d))
    if copies:
        e[rng.integers(0, n, copies)] = e[rng.integers(0, n, copies)]
    return (e / np.linalg.norm(e, axis=1, keepdims=True)).astype(np.float32)


def _same(res, ref, what: str) -> None:
    assert np.array_equal(res.pi, ref.pi), f"{what}: π differs at rows {np.flatnonzero(res.pi != ref.pi)[:10]}"
    assert np.array_equal(res.distances, ref.distances), f"{what}: merge distances differ"
    assert res.map_digest == ref.map_digest and res.deletion_digest == ref.deletion_digest, f"{what}: digests differ"


@pytest.mark.claim("DEF1")
@pytest.mark.parametrize("seed,tile,shard_rows", [(0, 1000, 300), (1, 97, 1000), (2, 256, 37), (3, 5000, 5000)])
def test_exact_tiles_equal_serial_exhaustive(tmp_path, client, seed, tile, shard_rows):
    """Tile pairs (a, b <= a) + one resolve equal Algorithm 2 exhaustive (= the oracle), for tile sizes
    that divide N or not, shards that do not line up with tiles, and one tile holding everything."""
    e = _clustered(seed, 1000, 24, 100, 0.12, copies=60)
    shards = write_shards(e, tmp_path, shard_rows)
    for t in (0.9, 0.97):
        res = corpus_greedy(client, shards, t, tile=tile)
        ref = substitute(e, t, exhaustive=True)
        assert 0 < ref.kept_count < e.shape[0], f"the data must merge some rows and keep some (kept {ref.kept_count})"
        _same(res, ref, f"seed {seed} tile {tile} t {t}")


@pytest.mark.claim("DEF1")
def test_exact_equals_the_oracle_itself(tmp_path, client):
    e = _clustered(7, 400, 16, 40, 0.15, copies=30)
    res = corpus_greedy(client, write_shards(e, tmp_path, 64), 0.93, tile=50)
    _same(res, oracle(e, 0.93), "oracle")


def _on_delta_pairs() -> tuple[np.ndarray, float]:
    """Rows where several pairs lie exactly on δ (``sq == δ²`` in float64): axis vectors and their
    mixtures, with a threshold whose ``2 - 2t`` equals their squared distance exactly."""
    d = 8
    rows = []
    for k in range(6):
        v = np.zeros(d, np.float32)
        v[k % d] = 1.0
        rows.append(v)
        w = np.zeros(d, np.float32)
        w[(k + 1) % d] = 1.0
        rows.append(w)
    e = np.stack(rows * 3)
    sq = sq_dist(e[0], e[1])  # 2.0 exactly (orthogonal unit vectors)
    t = 0.0
    assert delta_sq(t) == sq, "the constructed pair must lie exactly on δ"
    return e, t


@pytest.mark.claim("DEF1")
def test_pairs_exactly_on_delta_merge_as_in_serial(tmp_path, client):
    e, t = _on_delta_pairs()
    ref = substitute(e, t, exhaustive=True)
    assert (ref.distances == math.sqrt(2.0)).any(), "some merge must be exactly at δ (inclusive rule)"
    for tile in (1, 5, 64):
        _same(corpus_greedy(client, write_shards(e, tmp_path / str(tile), 4), t, tile=tile), ref, f"on δ, tile {tile}")


@pytest.mark.claim("DEF1")
def test_duplicated_tiles_fold_and_match(tmp_path, client):
    """A whole tile repeated (and a row repeated many times): copies are folded onto their first
    occurrence, the result is still the serial one, and the edge list stays small."""
    block = _clustered(11, 128, 12, 20, 0.1)
    e = np.concatenate([block, block, block[:64], np.repeat(block[:1], 200, axis=0), block])
    ref = substitute(e, 0.95, exhaustive=True)
    res = corpus_greedy(client, write_shards(e, tmp_path, 100), 0.95, tile=128)
    _same(res, ref, "duplicated tiles")
    assert res.unique_rows == 128, f"every copy is folded onto one of the 128 distinct rows (got {res.unique_rows})"
    folded_edges = res.edges
    assert folded_edges < 128 * 127 // 2, f"edges only among distinct rows, not among copies (got {folded_edges})"


@pytest.mark.claim("BAND")
@pytest.mark.parametrize("tile,split,parts", [(300, 4096, 1), (128, 40, 3)])
def test_banded_equals_serial_banded(tmp_path, client, tile, split, parts):
    """Band keys once, shuffle by (band, key), each pair in its lowest shared band, large buckets
    split into block tasks (``split`` rows): equal to ``substitute`` banded, not to a capped variant."""
    e = _clustered(5, 800, 32, 80, 0.1, copies=40)
    for t, r, rel in ((0.95, 4, 0.2), (0.9, 2, 0.5)):
        ref = substitute(e, t, r=r, rel=rel)
        ex = substitute(e, t, exhaustive=True)
        res = corpus_greedy(client, write_shards(e, tmp_path / f"{t}", 333), t, mode="banded", tile=tile,
                            split=split, parts=parts, settings=ref_settings(r, rel))
        _same(res, ref, f"banded t={t} r={r} rel={rel} tile={tile} split={split}")
        assert res.kept_count >= ex.kept_count, "banded is sound: it never merges more than the oracle"


def ref_settings(r, rel):
    from lam_ref.bands import BandSettings

    return BandSettings(r=r, rel=rel)


@pytest.mark.claim("DEF1")
@pytest.mark.parametrize("workers", [1, 3])
def test_worker_count_does_not_change_the_result(tmp_path, workers):
    e = _clustered(9, 600, 16, 40, 0.12, copies=30)
    ref = substitute(e, 0.95, exhaustive=True)
    with distributed.LocalCluster(n_workers=workers, threads_per_worker=1, processes=False, dashboard_address=":0") as c:
        with distributed.Client(c) as cl:
            _same(corpus_greedy(cl, write_shards(e, tmp_path, 200), 0.95, tile=150), ref, f"{workers} workers")
            _same(corpus_greedy(cl, write_shards(e, tmp_path / "b", 200), 0.95, tile=150, mode="banded", split=3),
                  substitute(e, 0.95), f"{workers} workers, banded")


def test_resolve_is_the_ordered_greedy_not_connected_components():
    """0–1 and 1–2 within δ, 0–2 not: 1 merges into 0; 2's only partner 1 was deleted, so 2 is
    retained (connected components would merge all three)."""
    pi = resolve_edges(4, [(np.array([1, 2]), np.array([0, 1])), (np.array([3, 3]), np.array([2, 0]))])
    assert pi.tolist() == [0, 0, 2, 0], f"row 3 takes its smallest retained partner (0), got {pi.tolist()}"


def test_resolver_memory_below_twice_the_edge_list(tmp_path, client):
    e = _clustered(3, 3000, 16, 30, 0.2)
    res = corpus_greedy(client, write_shards(e, tmp_path, 1000), 0.9, tile=500)
    assert res.edges > 10_000, f"a dense case: many within-δ pairs ({res.edges})"
    assert res.resolver_peak_bytes < 2 * res.edge_list_bytes, \
        f"resolver peak {res.resolver_peak_bytes} B vs edge list {res.edge_list_bytes} B"


def test_corrupt_or_missing_shard_is_detected(tmp_path, client):
    e = _clustered(1, 300, 8, 30, 0.1)
    shards = write_shards(e, tmp_path, 100)
    victim = tmp_path / shards.files[1]
    data = bytearray(victim.read_bytes())
    data[-5] ^= 0x01  # one bit of one float
    victim.write_bytes(bytes(data))
    with pytest.raises(ShardError, match=r"rows-000001\.npy.*corrupt: checksum"):
        corpus_greedy(client, shards, 0.95, tile=64)
    victim.unlink()
    with pytest.raises(ShardError, match=r"rows-000001\.npy.*cannot be read"):
        corpus_greedy(client, shards, 0.95, tile=64)


# ----------------------------------------------------------------------------------------------
# the CLI


def _run(capsys, *argv: str) -> tuple[int, str, str]:
    rc = main(list(argv))
    cap = capsys.readouterr()
    return rc, cap.out, cap.err


def _corpus(tmp_path: Path, n: int = 12) -> Path:
    d = tmp_path / "runs"
    d.mkdir()
    for i in range(n):
        (d / f"t{i:02d}.traj").write_text(json.dumps(swe_agent_traj(i % 3, tail=f"\nextra {i % 2}")))
    return d


def _strip(report: dict) -> list[dict]:
    return outcome(report["trajectories"])


@pytest.mark.usefixtures("inproc")
def test_compact_workers_equals_serial_with_an_unreadable_file(tmp_path, capsys):
    """Per-trajectory scope: the same trajectories, totals and digests as the serial command; an
    unreadable file among many is listed as a failure (exit 1) and the others complete."""
    d = _corpus(tmp_path)
    (d / "t05.traj").write_bytes(b"\xff\xfe not json")
    ser, par = tmp_path / "s.json", tmp_path / "p.json"
    rc_s, _, _ = _run(capsys, "compact", str(d), "--encoder", "hash", "--json", str(ser), "--no-progress")
    rc_p, out, err = _run(capsys, "compact", str(d), "--encoder", "hash", "--json", str(par), "--workers", "2",
                          "--no-progress")
    assert rc_s == rc_p == 1, f"one failed file: exit 1 in both (serial {rc_s}, dask {rc_p}): {err}"
    assert "t05.traj" in err and "failed" in err, f"the failure names the file: {err}"
    a, b = json.loads(ser.read_text()), json.loads(par.read_text())
    assert _strip(a) == _strip(b) and len(b["trajectories"]) == 11, "the other 11 files give the serial results"
    assert outcome(a["total"]) == outcome(b["total"]), "totals (token-weighted removal, digests over global ids) are equal"
    files = [p for p, _ in input_files([str(d)], None)[0]]
    fd, cd = digests_from_report(a, files)
    assert b["distributed"]["file_digests"] == fd and b["distributed"]["corpus_digest"] == cd, \
        "per-file and corpus digests equal those computed from the serial report"
    assert cd in out, "the corpus digest is printed"


@pytest.mark.skipif(SHARED is None, reason="../shared/data/swe-agent-trajectories not found (set LAM_SHARED_DATA)")
@pytest.mark.usefixtures("inproc")
def test_real_trajectories_both_scopes_equal_serial(tmp_path, capsys):
    """The shared SWE-agent trajectories: per-trajectory digests equal the serial command's, and the
    corpus scope (one greedy over all windows of all files, exhaustive) equals ``substitute`` over
    the concatenated windows in input order."""
    from lam_ref.text.chunking import get_tokenizer
    from lam_ref.text.encoders import get_encoder
    from lam_ref.text.loaders import load_all
    from lam_ref.text.pipeline import CompactionConfig, encode_chunks

    ser, par, cor = tmp_path / "s.json", tmp_path / "p.json", tmp_path / "c.json"
    assert _run(capsys, "compact", str(SHARED), "--encoder", "hash", "--json", str(ser), "--no-progress")[0] == 0
    assert _run(capsys, "compact", str(SHARED), "--encoder", "hash", "--json", str(par), "--workers", "2",
                "--no-progress")[0] == 0
    a, b = json.loads(ser.read_text()), json.loads(par.read_text())
    assert outcome(a["total"]) == outcome(b["total"]) and _strip(a) == _strip(b), "per-trajectory scope equals serial on real data"
    rc, _, err = _run(capsys, "compact", str(SHARED), "--encoder", "hash", "--scope", "corpus", "--exhaustive",
                      "--tile", "50", "--workers", "2", "--json", str(cor), "--no-progress")
    assert rc == 0, err
    c = json.loads(cor.read_text())
    cfg = CompactionConfig()
    enc, tok = get_encoder("hash"), get_tokenizer(cfg.tokenizer)
    e = np.concatenate([encode_chunks([(i, t.records[i].turn, t.records[i].text) for i in t.observation_indices],
                                      enc, tok).embeddings for t in load_all([str(SHARED)])])
    ref = substitute(e, 0.95, exhaustive=True)
    assert c["total"]["n"] == e.shape[0] and c["total"]["map_digest"] == ref.map_digest, \
        f"corpus scope: {c['total']['map_digest']} vs serial {ref.map_digest}"
    assert c["total"]["kept"] < sum(t["kept_chunks"] for t in a["trajectories"]), \
        "a corpus-wide greedy merges across trajectories too"


@pytest.mark.usefixtures("inproc")
def test_substitute_workers_equals_serial(tmp_path, capsys):
    e = _clustered(4, 800, 16, 50, 0.12, copies=30)
    x = tmp_path / "x.npy"
    np.save(x, e)
    for mode in ([], ["--exhaustive"]):
        s, p = tmp_path / "s.json", tmp_path / "p.json"
        assert _run(capsys, "substitute", str(x), "--json", str(s), *mode)[0] == 0
        rc, out, err = _run(capsys, "substitute", str(x), "--json", str(p), "--workers", "2", "--tile", "100", *mode)
        assert rc == 0, err
        a, b = json.loads(s.read_text()), json.loads(p.read_text())
        assert (a["map_digest"], a["deletion_digest"], a["kept"], a["delta_hat"]) == \
               (b["map_digest"], b["deletion_digest"], b["kept"], b["delta_hat"]), f"{mode or 'banded'}: {a} vs {b}"


@pytest.mark.usefixtures("inproc")
def test_resume_skips_finished_files_and_refuses_other_settings(tmp_path, capsys):
    d = _corpus(tmp_path, 6)
    run = tmp_path / "run"
    j1, j2 = tmp_path / "1.json", tmp_path / "2.json"
    assert _run(capsys, "compact", str(d), "--encoder", "hash", "--workers", "1", "--resume", str(run),
                "--json", str(j1), "--no-progress")[0] == 0
    stamps = {p.name: p.stat().st_mtime_ns for p in (run / "files").iterdir()}
    rc, out, _ = _run(capsys, "compact", str(d), "--encoder", "hash", "--workers", "1", "--resume", str(run),
                      "--json", str(j2), "--no-progress")
    assert rc == 0 and "6 resumed, 0 computed" in out, f"a finished run is not recomputed: {out}"
    assert {p.name: p.stat().st_mtime_ns for p in (run / "files").iterdir()} == stamps, "no output rewritten"
    a, b = json.loads(j1.read_text()), json.loads(j2.read_text())
    assert a["distributed"]["corpus_digest"] == b["distributed"]["corpus_digest"] and outcome(a["total"]) == outcome(b["total"])
    rc, out, err = _run(capsys, "compact", str(d), "--encoder", "hash", "-t", "0.9", "--workers", "1",
                        "--resume", str(run), "--no-progress")
    assert rc == 2 and err.count("\n") == 1, f"one line, exit 2: {err!r}"
    assert "other settings" in err and "threshold" in err and "0.95" in err and "0.9" in err, err
    (d / "t00.traj").write_text(json.dumps(swe_agent_traj(0, tail="\nextra 1")) + " ")
    rc, _, err = _run(capsys, "compact", str(d), "--encoder", "hash", "--workers", "1", "--resume", str(run),
                      "--no-progress")
    assert rc == 2 and "inputs" in err and "t00.traj" in err, f"a changed input is named: {err!r}"


@pytest.mark.usefixtures("inproc")
def test_corpus_scope_resume_recomputes_a_corrupt_shard(tmp_path, capsys):
    d = _corpus(tmp_path, 5)
    run = tmp_path / "run"
    j1, j2 = tmp_path / "1.json", tmp_path / "2.json"
    args = ["compact", str(d), "--encoder", "hash", "--scope", "corpus", "--workers", "1", "--resume", str(run),
            "--no-progress"]
    assert _run(capsys, *args, "--json", str(j1))[0] == 0
    shard = sorted((run / "shards").glob("*.npy"))[2]
    data = bytearray(shard.read_bytes())
    data[-5] ^= 0x01  # one bit of one float
    shard.write_bytes(bytes(data))
    rc, out, err = _run(capsys, *args, "--json", str(j2))
    assert rc == 0 and "recomputing" in err and shard.name in err and "corrupt" in err, err
    assert "4 files resumed, 1 encoded" in out, out
    assert json.loads(j1.read_text())["total"]["map_digest"] == json.loads(j2.read_text())["total"]["map_digest"]


@pytest.mark.parametrize("argv,needle", [
    (["--workers", "0"], "--workers must be a positive integer"),
    (["--workers", "-3"], "--workers must be a positive integer"),
    (["--scheduler", "not an address"], "--scheduler must be an address"),
    (["--scheduler", "tcp://127.0.0.1:9"], "--scheduler 'tcp://127.0.0.1:9' cannot be reached"),
    (["--workers", "2", "--scheduler", "tcp://127.0.0.1:9"], "not both"),
    (["--workers", "1", "--tile", "0", "--scope", "corpus"], "--tile must be a positive integer"),
])
@pytest.mark.usefixtures("inproc")
def test_bad_cluster_arguments_one_line_exit_2(tmp_path, capsys, argv, needle):
    d = _corpus(tmp_path, 2)
    rc, _, err = _run(capsys, "compact", str(d), "--encoder", "hash", "--no-progress", *argv)
    assert rc == 2, f"exit 2 for {argv}: {err!r}"
    lines = [ln for ln in err.splitlines() if ln.startswith("lam-ref compact: error")]
    assert len(lines) == 1 and needle in lines[0], f"one line naming the problem for {argv}: {err!r}"


def test_resume_dir_that_is_not_a_run_folder_is_refused(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("LAM_REF_DASK_PROCESSES", "0")
    d = _corpus(tmp_path, 2)
    other = tmp_path / "other"
    other.mkdir()
    (other / "precious.txt").write_text("x")
    rc, _, err = _run(capsys, "compact", str(d), "--encoder", "hash", "--resume", str(other), "--no-progress")
    assert rc == 2 and "not a lam-ref run folder" in err, err
    assert os.listdir(other) == ["precious.txt"], "nothing written into a foreign folder"


_CLUSTER_CHILD = """
import sys
from distributed import LocalCluster
with LocalCluster(n_workers=1, threads_per_worker=1, processes=False, protocol="tcp",
                  host="127.0.0.1", dashboard_address=":0") as c:
    print(c.scheduler_address, flush=True)
    sys.stdin.read()  # until the test closes our stdin
"""


def test_scheduler_address_runs_on_that_cluster(tmp_path, capsys, monkeypatch):
    """``--scheduler tcp://...`` connects to an existing cluster and gives the serial results.

    The cluster lives in a child process, as a user's does. This test hung twice on CI, once with
    the cluster in this process and once in the child: the cause was neither, but the command's
    wait tracking its futures on this module's fixture client, the process's current one (see
    test_waiting_follows_the_given_client_not_the_current_one)."""
    import subprocess
    import sys

    monkeypatch.setenv("LAM_REF_DASK_TIMEOUT", "20")
    d = _corpus(tmp_path, 4)
    ser, par = tmp_path / "s.json", tmp_path / "p.json"
    assert _run(capsys, "compact", str(d), "--encoder", "hash", "--json", str(ser), "--no-progress")[0] == 0
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(Path(__file__).resolve().parents[1]),
                                                        os.environ.get("PYTHONPATH", "")])}
    log = tmp_path / "cluster.log"  # a file, not a pipe nobody reads: the child can never block on it
    with log.open("w") as err_file:
        child = subprocess.Popen([sys.executable, "-c", _CLUSTER_CHILD], stdin=subprocess.PIPE,
                                 stdout=subprocess.PIPE, stderr=err_file, text=True, env=env)
    try:
        address = child.stdout.readline().strip()
        assert address.startswith("tcp://127.0.0.1:"), \
            f"the child cluster did not start: {address!r} {log.read_text() if child.poll() is not None else ''}"
        rc, out, err = _run(capsys, "compact", str(d), "--encoder", "hash", "--json", str(par),
                            "--scheduler", address, "--no-progress")
        assert rc == 0, err
        a, b = json.loads(ser.read_text()), json.loads(par.read_text())
        assert outcome(a["total"]) == outcome(b["total"]), "the remote cluster's run equals the serial one"
        assert b["distributed"]["scheduler"] == address and f"scheduler {address}" in out, \
            f"the report and the table name the cluster used: {out}"
    finally:
        child.stdin.close()
        try:
            child.wait(timeout=60)
        except subprocess.TimeoutExpired:
            child.kill()
            child.wait()


def _square(x: int) -> int:
    return x * x


def _corpus_greedy_waiting(ours, tmp_path):
    e = _clustered(11, 120, 8, 12, 0.1, copies=10)
    res = corpus_greedy(ours, write_shards(e, tmp_path, 50), 0.95, tile=40)
    ref = substitute(e, 0.95, exhaustive=True)
    _same(res, ref, "corpus greedy on its own client")


def test_the_command_client_leaves_the_current_client_current():
    """``cluster_client`` (every ``--workers``/``--scheduler`` command) does not make its client the
    process's default: a caller's own client stays the one their ``dask.compute`` calls use."""
    from lam_ref.distributed.cluster import cluster_client

    with distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=False, dashboard_address=":0") as theirs_c:
        theirs = distributed.Client(theirs_c)  # the default client, as a notebook's `client = Client()` is
        token = distributed.client._current_client.set(None)  # this module's fixture client steps aside
        try:
            assert distributed.client.default_client() is theirs, "the caller's client is the default"
            with cluster_client(ClusterSpec(1, processes=False), quiet=True) as ours:
                assert ours is not theirs, "the command has a client of its own"
                assert distributed.client.default_client() is theirs, \
                    f"the caller's client must stay the default while the command runs, got {distributed.client.default_client()}"
            assert distributed.client.default_client() is theirs, "and after it"
        finally:
            distributed.client._current_client.reset(token)
            theirs.close()


def _futures_waiting(ours, spec, show):
    futs = ours.map(_square, range(5), pure=False)
    got = sorted(r for _, r in wait_with_progress(ours, futs, spec, show=show, desc="squares"))
    assert got == [x * x for x in range(5)], f"the results of the client's own futures: {got}"


@pytest.mark.parametrize("case", ["local-bar", "scheduler-progress", "corpus-greedy"])
def test_waiting_follows_the_given_client_not_the_current_one(tmp_path, case):
    """The futures of the client lam_ref was given are tracked on that client's loop and scheduler,
    not on the process's current client (a caller's own ``with Client(...)``: a notebook, a
    fixture). That client's event loop is held busy here: waiting through it would never end (a CI
    run hung for 15 minutes this way, with this module's fixture client current)."""
    import threading

    with distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=False, dashboard_address=":0",
                                  protocol="tcp", host="127.0.0.1") as theirs_c, distributed.Client(theirs_c) as theirs, \
            distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=False, dashboard_address=":0",
                                     protocol="tcp", host="127.0.0.1") as ours_c, \
            distributed.Client(ours_c, set_as_default=False) as ours:
        assert distributed.client.default_client() is theirs, "the caller's client is the current one"
        assert theirs.loop is not ours.loop, "the two clients run on two event loops"
        spec = ClusterSpec(scheduler=ours.scheduler.address) if case == "scheduler-progress" else ClusterSpec(1)
        gate, errors = threading.Event(), []

        def wait_for_ours():
            try:
                if case == "corpus-greedy":
                    _corpus_greedy_waiting(ours, tmp_path)
                else:
                    _futures_waiting(ours, spec, show=True)
            except BaseException as exc:  # noqa: BLE001 - reported by the assertion below
                errors.append(exc)

        theirs.loop.add_callback(gate.wait, 120)  # the caller's loop is busy for the whole wait
        try:
            waiter = threading.Thread(target=wait_for_ours, daemon=True)
            waiter.start()
            waiter.join(60)
            assert not waiter.is_alive(), "waiting on our client's futures went through the current client's (busy) loop"
        finally:
            gate.set()
        assert not errors, f"the wait failed: {errors[0]!r}"


@pytest.mark.usefixtures("inproc")
def test_residual_files_equal_the_serial_ones_and_restore(tmp_path, capsys):
    """``--residual-dir`` with ``--workers``: the same file names (a repeated id gets ``~2``) and
    bytes as the serial command, and ``lam-ref restore`` gives the originals back."""
    d = _corpus(tmp_path, 3)
    ser, par = tmp_path / "rs", tmp_path / "rp"
    # the folder twice: every id twice, the second copy named ~2
    assert _run(capsys, "compact", str(d), str(d), "--encoder", "hash", "--residual-dir", str(ser), "--mkdir",
                "--no-progress")[0] == 0
    assert _run(capsys, "compact", str(d), str(d), "--encoder", "hash", "--residual-dir", str(par), "--mkdir", "--workers", "2",
                "--no-progress")[0] == 0
    names = sorted(p.name for p in ser.iterdir())
    assert names == sorted(p.name for p in par.iterdir()) and len(names) == 12, f"same names: {names}"
    assert "t00~2.audit.json" in names, f"a repeated id is kept apart: {names}"
    for name in names:
        assert (ser / name).read_bytes() == (par / name).read_bytes(), f"{name} differs from the serial output"
    rc, _, err = _run(capsys, "restore", str(par))
    assert rc == 0, f"the distributed run's audit stores restore: {err}"


@pytest.mark.usefixtures("inproc")
def test_corpus_scope_residual_files_restore_and_follow_the_corpus_map(tmp_path, capsys):
    """``--scope corpus --residual-dir``: every trajectory gets a residual and an audit store built
    from the corpus map (stubs name global window ids; representatives may lie in earlier
    trajectories); ``lam-ref restore`` gives every original back; the first trajectory, whose rows
    only ever see its own earlier rows, gets the serial command's files byte for byte; a resumed
    run writes the same files without recomputing them."""
    import re

    d = _corpus(tmp_path, 5)
    (d / "t03.traj").write_bytes(b"\xff\xfe not json")  # a failed file: listed, the others complete
    rc_dir, ser_dir, run = tmp_path / "rc", tmp_path / "rs", tmp_path / "run"
    args = ["compact", str(d), "--encoder", "hash", "--scope", "corpus", "--exhaustive", "--workers", "2",
            "--mkdir", "--check", "--no-progress", "--resume", str(run)]
    rc, out, err = _run(capsys, *args, "--residual-dir", str(rc_dir), "--json", str(tmp_path / "c.json"))
    assert rc == 1 and "t03.traj" in err and "check failed" not in err, f"one failed file, no check problem: {err}"
    c = json.loads((tmp_path / "c.json").read_text())
    trajs = c["trajectories"]
    assert sum(t["merged_into_other_trajectories"] for t in trajs) > 0, "precondition: merges across trajectories"
    assert sorted(p.name for p in rc_dir.iterdir()) == sorted(f"t{i:02d}{s}" for i in (0, 1, 2, 4)
                                                              for s in (".residual.jsonl", ".audit.json")), \
        "one residual and one audit store per loaded trajectory, named as the serial command names them"
    for t in trajs:
        text = "\n".join(json.loads(ln)["text"] for ln in (rc_dir / f"{t['residual']}.residual.jsonl").read_text().splitlines())
        stubs = [(int(a), int(b)) for a, b in re.findall(r"\[LAM:L1 (\d+)=(\d+) d=", text)]
        assert len(stubs) == t["chunks"] - t["kept_chunks"], f"{t['id']}: one L1 stub per dropped window: {stubs}"
        assert all(t["first_row"] <= a < t["first_row"] + t["chunks"] and b < a for a, b in stubs), \
            f"{t['id']}: stubs name global ids of its own windows and earlier representatives: {stubs}"
    assert c["residual_total"]["tokens_residual_net"] < c["residual_total"]["tokens_original"], "tokens are removed"
    rc, _, err = _run(capsys, "restore", str(rc_dir))
    assert rc == 0, f"every corpus-scope residual restores from its own audit store: {err}"
    assert _run(capsys, "compact", str(d / "t00.traj"), "--encoder", "hash", "--exhaustive", "--driver", "batch",
                "--residual-dir", str(ser_dir), "--mkdir", "--no-progress")[0] == 0
    for name in ("t00.residual.jsonl", "t00.audit.json"):
        assert (rc_dir / name).read_bytes() == (ser_dir / name).read_bytes(), f"{name}: the serial command's bytes"
    stamps = {p.name: p.stat().st_mtime_ns for p in (run / "residuals").iterdir()}
    again = tmp_path / "again"
    rc, out, err = _run(capsys, *args, "--residual-dir", str(again))
    assert rc == 1 and "5 files resumed, 0 encoded" in out, f"resumed: {out}"
    assert {p.name: p.stat().st_mtime_ns for p in (run / "residuals").iterdir()} == stamps, "no residual task rerun"
    for p in rc_dir.iterdir():
        assert (again / p.name).read_bytes() == p.read_bytes(), f"{p.name}: the resumed run writes the same bytes"
