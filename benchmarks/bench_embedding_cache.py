"""Benchmark: the on-disk embedding cache (spec §4.6; issue 37 §3), a second run against the first.
It reports; it does not test.

The shared SWE-agent trajectories (read in place; ``--max-trajectories``, default 8) are compacted
as ``lam-ref compact`` does (its default config, the run's own distinct-text reuse on, the
``auto`` backend), in one process, twice per round over one fresh cache folder: the first run finds
it empty (encodes every distinct window and writes it), the second reads every row. The encoder is
loaded and warmed up before the first round, so neither run pays for loading. The script reports
per run the median and range of end-to-end windows/s over ``--repeat`` rounds, the ratio second /
first (median of the per-round ratios), the cache's counters, and whether every deletion and map
digest of the second run equals the first's.

Run: ``.venv/bin/python benchmarks/bench_embedding_cache.py [--repeat 3] [--max-trajectories 8] [--json OUT]``.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")


def run_once(trajs, encoder) -> tuple[float, int, list[tuple[str, str]]]:
    """One compaction of every trajectory, as ``compact`` runs it: (seconds, windows, digests)."""
    from lam_ref.text.pipeline import CompactionConfig, compact_trajectory
    from lam_ref.text.reuse import EncodingCache

    config = CompactionConfig()
    reuse = EncodingCache()
    t0 = time.perf_counter()
    results = [compact_trajectory(t, encoder, config, reuse=reuse) for t in trajs]
    wall = time.perf_counter() - t0
    return wall, sum(r.chunks for r in results), [(r.deletion_digest, r.map_digest) for r in results]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--repeat", type=int, default=3, help="rounds, each a first and a second run (default 3)")
    ap.add_argument("--max-trajectories", type=int, default=8, help="the first N shared trajectories (0: all)")
    ap.add_argument("--encoder", default="all-MiniLM-L6-v2")
    ap.add_argument("--encoder-backend", default="auto")
    ap.add_argument("--json", metavar="OUT")
    args = ap.parse_args(argv)
    from lam_ref.text.embedding_cache import DiskCachedEncoder, EmbeddingCache
    from lam_ref.text.encoders import get_encoder
    from lam_ref.text.loaders import load_all, shared_data_dir

    data = shared_data_dir()
    if data is None:
        print("bench_embedding_cache: ../shared/data is absent; nothing to measure", file=sys.stderr)
        return 0
    trajs = load_all([str(data)])
    if args.max_trajectories:
        trajs = trajs[: args.max_trajectories]
    inner = get_encoder(args.encoder, None, args.encoder_backend)
    inner.encode(["warm up", "a second text to warm up the batches"])
    rates: dict[str, list[float]] = {"first": [], "second": []}
    ratios: list[float] = []
    counters: dict[str, dict] = {}
    equal = True
    windows = 0
    for _ in range(args.repeat):
        with tempfile.TemporaryDirectory(prefix="lam-emb-cache-") as folder:
            got = {}
            for name in ("first", "second"):
                enc = DiskCachedEncoder(inner, EmbeddingCache(Path(folder)))
                wall, windows, dig = run_once(trajs, enc)
                rates[name].append(windows / wall)
                counters[name] = enc.cache.describe() | {"folder": "(temporary)"}
                got[name] = dig
            ratios.append(rates["second"][-1] / rates["first"][-1])
            equal = equal and got["first"] == got["second"]
    med = {k: statistics.median(v) for k, v in rates.items()}
    report = {
        "encoder": inner.describe(), "machine": platform.platform(), "processor": platform.processor(),
        "cpus": os.cpu_count(), "trajectories": len(trajs), "windows": windows, "repeat": args.repeat,
        "windows_per_s": {k: {"median": med[k], "min": min(v), "max": max(v)} for k, v in rates.items()},
        "ratio_second_over_first": {"median": statistics.median(ratios), "per_round": ratios},
        "cache": counters, "digests_equal": equal,
        "command": "python benchmarks/bench_embedding_cache.py " + " ".join(argv if argv is not None else sys.argv[1:]),
    }
    print(f"{report['trajectories']} trajectories, {windows} windows, encoder {inner.name} "
          f"({inner.backend_choice or inner.backend})")
    for k in ("first", "second"):
        w = report["windows_per_s"][k]
        c = counters[k]
        print(f"  {k:>6} run: {w['median']:.2f} windows/s (range {w['min']:.2f}-{w['max']:.2f}); "
              f"cache {c['hits']} read, {c['written']} written")
    print(f"  second / first: {report['ratio_second_over_first']['median']:.1f}x "
          f"(rounds: {', '.join(f'{r:.1f}' for r in ratios)}); digests equal: {equal}")
    if args.json:
        Path(args.json).parent.mkdir(parents=True, exist_ok=True)
        Path(args.json).write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    return 0 if equal else 1


if __name__ == "__main__":
    raise SystemExit(main())
