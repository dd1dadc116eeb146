"""Benchmark of the Dask runs (docs/scale.md). Not a test: it reports, and checks equality.

1. **Per-trajectory scope, 1 vs 2 workers**: the shared SWE-agent trajectories listed repeatedly
   (``--files`` paths, default 220 = the 22 files 10 times; no file is copied) compacted by
   ``lam-ref compact`` (a) serially (torch may use every core), (b) ``--workers 1`` and (c)
   ``--workers 2`` (one thread per worker). Each run is a child process whose process tree is
   sampled for resident memory every 0.2 s (peak per process). Reports wall time, files/s,
   the speedup (b)/(c) and checks that the three corpus digests are equal.
2. **Corpus scope, exact, synthetic**: ``--n`` rows (default 50,000) at D = 384 in clusters of
   near-duplicates with some exact copies; ``substitute(..., exhaustive=True)`` (equal to the
   oracle, tested) against :func:`lam_ref.distributed.corpus_greedy` on a ``LocalCluster`` of
   ``--workers`` processes: equality of π and distances, wall times, tile pairs per second, the
   resolver's traced peak against the edge list.
3. **Constants for the projection**: encoding tokens/s from the serial run's per-trajectory
   timings, and within-δ pairs per window over the shared corpus (corpus scope, exact).

Run: ``.venv/bin/python benchmarks/bench_distributed.py [--encoder all-MiniLM-L6-v2] [--files 220]
[--n 50000] [--workers 2] [--skip-trajectories] [--skip-corpus] [--json benchmarks/results/distributed.json]``.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from lam_ref.text.loaders import shared_data_dir  # noqa: E402

ENV = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "false"}


def _load() -> str:
    try:
        return " ".join(f"{x:.2f}" for x in os.getloadavg())
    except OSError:
        return "n/a"


def run_sampled(cmd: list[str]) -> dict:
    """Run ``cmd``; sample the RSS of its process tree every 0.2 s; return wall time and peaks."""
    import psutil

    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, env=ENV, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    peaks: dict[int, tuple[str, int]] = {}
    stop = threading.Event()

    def sample() -> None:
        root = psutil.Process(proc.pid)
        while not stop.is_set():
            try:
                procs = [root] + root.children(recursive=True)
            except psutil.Error:
                break
            for p in procs:
                try:
                    rss = p.memory_info().rss
                    role = "client" if p.pid == proc.pid else ("tracker" if "resource_tracker" in " ".join(p.cmdline()) else "worker")
                except psutil.Error:
                    continue
                if rss > peaks.get(p.pid, ("", 0))[1]:
                    peaks[p.pid] = (role, rss)
            time.sleep(0.2)

    th = threading.Thread(target=sample, daemon=True)
    th.start()
    out, err = proc.communicate()
    stop.set()
    th.join()
    wall = time.perf_counter() - t0
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(cmd[:6])} ... failed ({proc.returncode}): {err[-2000:]}")
    workers = sorted(r for role, r in peaks.values() if role == "worker")
    client = max((r for role, r in peaks.values() if role == "client"), default=0)
    return {"wall_s": wall, "peak_rss_client_mb": client / 2**20,
            "peak_rss_workers_mb": [w / 2**20 for w in workers]}


def bench_trajectories(encoder: str, nfiles: int, workers: int) -> dict:
    from lam_ref.distributed.trajectories import digests_from_report

    shared = shared_data_dir()
    if shared is None:
        raise SystemExit("../shared/data/swe-agent-trajectories not found (set LAM_SHARED_DATA)")
    files = sorted(str(p) for p in shared.rglob("*.traj"))
    paths = [files[k % len(files)] for k in range(nfiles)]
    out: dict = {"files": len(paths), "distinct_files": len(files), "encoder": encoder}
    with tempfile.TemporaryDirectory(prefix="lam-ref-bench-") as tmp:
        base = [sys.executable, "-m", "lam_ref.cli", "compact", *paths, "--encoder", encoder, "--no-progress", "--no-l2"]
        runs = {"serial": [], "workers_1": ["--workers", "1"], f"workers_{workers}": ["--workers", str(workers)]}
        digests = {}
        for name, extra in runs.items():
            js = Path(tmp) / f"{name}.json"
            print(f"[trajectories] {name}: {len(paths)} files, load {_load()}", file=sys.stderr, flush=True)
            res = run_sampled(base + extra + ["--json", str(js)])
            rep = json.loads(js.read_text())
            if name == "serial":
                digests[name] = digests_from_report(rep, paths)[1]
                enc = sum(t["timings_s"].get("encode", 0.0) for t in rep["trajectories"])
                out["encode_s_serial"] = enc
                out["tokens_original"] = rep["total"]["tokens_original"]
                out["windows"] = rep["total"]["chunks"]
                out["encode_tokens_per_s_serial"] = rep["total"]["tokens_original"] / enc if enc else None
            else:
                digests[name] = rep["distributed"]["corpus_digest"]
            res["files_per_s"] = len(paths) / res["wall_s"]
            res["load_after"] = _load()
            out[name] = res
            print(f"  {res['wall_s']:.1f} s, workers' peak RSS {[round(x) for x in res['peak_rss_workers_mb']]} MB",
                  file=sys.stderr, flush=True)
    out["corpus_digests"] = digests
    out["digests_equal"] = len(set(digests.values())) == 1
    out["speedup_2_vs_1"] = out["workers_1"]["wall_s"] / out[f"workers_{workers}"]["wall_s"]
    out["parallel_efficiency"] = out["speedup_2_vs_1"] / workers
    out["dask_vs_serial"] = out["serial"]["wall_s"] / out[f"workers_{workers}"]["wall_s"]
    return out


def synthetic(n: int, d: int, seed: int = 0) -> np.ndarray:
    """Clusters of 20 near-duplicates on average (noise of norm ~0.15 around a centre: members are
    within δ(0.95) of each other) plus 5 % exact copies."""
    rng = np.random.default_rng(seed)
    centres = rng.normal(size=(n // 20, d))
    centres /= np.linalg.norm(centres, axis=1, keepdims=True)
    e = centres[rng.integers(0, centres.shape[0], n)] + rng.normal(scale=0.15 / np.sqrt(d), size=(n, d))
    copies = rng.integers(0, n, n // 20)
    e[copies] = e[rng.integers(0, n, copies.size)]
    return (e / np.linalg.norm(e, axis=1, keepdims=True)).astype(np.float32)


def bench_corpus(n: int, d: int, workers: int, tile: int, t: float) -> dict:
    from distributed import Client, LocalCluster

    from lam_ref.distributed import corpus_greedy, write_shards
    from lam_ref.substitution import substitute

    e = synthetic(n, d)
    print(f"[corpus] serial exhaustive N={n}, load {_load()}", file=sys.stderr, flush=True)
    t0 = time.perf_counter()
    ref = substitute(e, t, exhaustive=True)
    serial_s = time.perf_counter() - t0
    with tempfile.TemporaryDirectory(prefix="lam-ref-bench-") as tmp:
        shards = write_shards(e, tmp, tile)
        with LocalCluster(n_workers=workers, threads_per_worker=1, processes=True, dashboard_address=":0") as c, Client(c) as cl:
            print(f"[corpus] dask {workers} workers, load {_load()}", file=sys.stderr, flush=True)
            res = corpus_greedy(cl, shards, t, tile=tile)
    equal = bool(np.array_equal(res.pi, ref.pi) and np.array_equal(res.distances, ref.distances))
    u = res.unique_rows
    return {
        "n": n, "dim": d, "t": t, "tile": tile, "workers": workers, "equal_to_serial": equal,
        "kept": res.kept_count, "unique_rows": u, "edges": res.edges, "edges_per_row": res.edges / n,
        "candidates": res.candidates, "tasks": res.tasks, "serial_exhaustive_s": serial_s, "dask_s": res.wall_time_s,
        "tile_pairs_per_s": (u * (u - 1) / 2) / res.wall_time_s,
        "resolver_peak_bytes": res.resolver_peak_bytes, "edge_list_bytes": res.edge_list_bytes,
        "resolver_over_edge_list": res.resolver_peak_bytes / res.edge_list_bytes if res.edges else None,
        "map_digest": res.map_digest, "serial_map_digest": ref.map_digest, "load_after": _load(),
    }


def bench_shared_edges(encoder: str, t: float) -> dict:
    """Within-δ pairs per window over all windows of the shared trajectories (corpus scope, exact)."""
    from distributed import Client, LocalCluster

    from lam_ref.distributed import corpus_greedy, write_shards
    from lam_ref.text.chunking import get_tokenizer
    from lam_ref.text.encoders import get_encoder
    from lam_ref.text.loaders import load_all
    from lam_ref.text.pipeline import CompactionConfig, encode_chunks

    shared = shared_data_dir()
    if shared is None:
        raise SystemExit("../shared/data/swe-agent-trajectories not found (set LAM_SHARED_DATA)")
    cfg = CompactionConfig()
    enc, tok = get_encoder(encoder), get_tokenizer(cfg.tokenizer)
    t0 = time.perf_counter()
    blocks, tokens = [], 0
    for tr in load_all([str(shared)]):
        x = encode_chunks([(i, tr.records[i].turn, tr.records[i].text) for i in tr.observation_indices], enc, tok)
        blocks.append(x.embeddings)
        tokens += sum(c.tokens for c in x.chunks)
    enc_s = time.perf_counter() - t0
    e = np.concatenate(blocks)
    with tempfile.TemporaryDirectory(prefix="lam-ref-bench-") as tmp:
        with LocalCluster(n_workers=1, threads_per_worker=1, processes=False, dashboard_address=":0") as c, Client(c) as cl:
            res = corpus_greedy(cl, write_shards(e, tmp, 1024), t, tile=1024)
    return {"windows": int(e.shape[0]), "window_tokens": tokens, "tokens_per_window": tokens / e.shape[0],
            "encode_s": enc_s, "encode_tokens_per_s": tokens / enc_s, "unique_rows": res.unique_rows,
            "edges": res.edges, "edges_per_row": res.edges / e.shape[0], "edges_per_unique_row": res.edges / res.unique_rows,
            "kept": res.kept_count}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--encoder", default="all-MiniLM-L6-v2")
    ap.add_argument("--files", type=int, default=220)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--n", type=int, default=50_000)
    ap.add_argument("--dim", type=int, default=384)
    ap.add_argument("--tile", type=int, default=4096)
    ap.add_argument("--threshold", type=float, default=0.95)
    ap.add_argument("--skip-trajectories", action="store_true")
    ap.add_argument("--skip-corpus", action="store_true")
    ap.add_argument("--skip-shared", action="store_true")
    ap.add_argument("--json", default=None)
    args = ap.parse_args()
    out = {"machine": {"cpus": os.cpu_count(), "platform": platform.platform(), "python": platform.python_version(),
                       "load_at_start": _load()},
           "command": " ".join(["python", "benchmarks/bench_distributed.py", *sys.argv[1:]])}
    if not args.skip_shared:
        out["shared_edges"] = bench_shared_edges(args.encoder, args.threshold)
        print(json.dumps(out["shared_edges"], indent=1), file=sys.stderr, flush=True)
    if not args.skip_corpus:
        out["corpus_exact"] = bench_corpus(args.n, args.dim, args.workers, args.tile, args.threshold)
        print(json.dumps(out["corpus_exact"], indent=1), file=sys.stderr, flush=True)
    if not args.skip_trajectories:
        out["trajectories"] = bench_trajectories(args.encoder, args.files, args.workers)
    out["machine"]["load_at_end"] = _load()
    text = json.dumps(out, indent=2)
    print(text)
    if args.json:
        Path(args.json).write_text(text + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
