"""Benchmark: each distinct window text encoded once per run (spec §4.4; issue 26 §1). It reports; it
does not test.

The shared SWE-agent trajectories (read in place) are compacted in one process, with the real encoder,
in two ways: with the run's encoding cache (the default) and with ``reuse=False`` (every window
encoded, the ``--no-reuse`` baseline). The two are interleaved over ``--repeat`` rounds. The script
reports the median and range of end-to-end windows/s for both, the ratio, the windows encoded and
reused, and whether every deletion and map digest is equal.

Run: ``.venv/bin/python benchmarks/bench_reuse.py [--repeat 3] [--json benchmarks/results/reuse.json]``.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")


def run_once(trajs, encoder, reuse: bool) -> tuple[float, int, int, int, list[tuple[str, str]], float]:
    """One compaction of every trajectory: (seconds, windows, encoded, reused, digests, encode seconds)."""
    from lam_ref.text.pipeline import CompactionConfig, compact_trajectory
    from lam_ref.text.reuse import EncodingCache

    config = CompactionConfig(reuse=reuse, l0_net_positive=True)
    cache = EncodingCache(enabled=reuse)
    t0 = time.perf_counter()
    results = [compact_trajectory(t, encoder, config, reuse=cache) for t in trajs]
    wall = time.perf_counter() - t0
    return (wall, sum(r.chunks for r in results), cache.encoded, cache.reused,
            [(r.deletion_digest, r.map_digest) for r in results], sum(r.timings["encode"] for r in results))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--repeat", type=int, default=3, help="interleaved rounds (default 3)")
    ap.add_argument("--encoder", default="all-MiniLM-L6-v2")
    ap.add_argument("--json", metavar="OUT")
    args = ap.parse_args(argv)
    from lam_ref.text.encoders import get_encoder
    from lam_ref.text.loaders import load_all, shared_data_dir

    data = shared_data_dir()
    if data is None:
        print("bench_reuse: ../shared/data is absent; nothing to measure", file=sys.stderr)
        return 0
    trajs = load_all([str(data)])
    encoder = get_encoder(args.encoder)
    encoder.encode(["warm up"])
    rates: dict[str, list[float]] = {"reuse": [], "none": []}
    enc_s: dict[str, list[float]] = {"reuse": [], "none": []}
    counts: dict[str, tuple[int, int, int]] = {}
    digests: dict[str, list[tuple[str, str]]] = {}
    for _ in range(args.repeat):
        for name, flag in (("reuse", True), ("none", False)):
            wall, windows, enc, reused, dig, es = run_once(trajs, encoder, flag)
            rates[name].append(windows / wall)
            enc_s[name].append(es)
            counts[name] = (windows, enc, reused)
            digests[name] = dig
    med = {k: statistics.median(v) for k, v in rates.items()}
    report = {
        "encoder": args.encoder, "machine": platform.platform(), "processor": platform.processor(),
        "cpus": os.cpu_count(), "trajectories": len(trajs), "repeat": args.repeat,
        "windows": counts["reuse"][0], "windows_encoded": counts["reuse"][1], "windows_reused": counts["reuse"][2],
        "windows_per_s": {k: {"median": med[k], "min": min(v), "max": max(v)} for k, v in rates.items()},
        "ratio_median": med["reuse"] / med["none"],
        "encode_s_median": {k: statistics.median(v) for k, v in enc_s.items()},
        "digests_equal": digests["reuse"] == digests["none"],
        "command": "python benchmarks/bench_reuse.py " + " ".join(argv if argv is not None else sys.argv[1:]),
    }
    print(f"{report['trajectories']} trajectories, {report['windows']} windows: {report['windows_encoded']} encoded, "
          f"{report['windows_reused']} reused")
    for k in ("reuse", "none"):
        w = report["windows_per_s"][k]
        print(f"  {k:>5}: {w['median']:.2f} windows/s (range {w['min']:.2f}-{w['max']:.2f}), "
              f"encoder {report['encode_s_median'][k]:.1f} s")
    print(f"  ratio reuse/none: {report['ratio_median']:.2f}x; digests equal: {report['digests_equal']}")
    if args.json:
        Path(args.json).parent.mkdir(parents=True, exist_ok=True)
        Path(args.json).write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    return 0 if report["digests_equal"] else 1


if __name__ == "__main__":
    raise SystemExit(main())
