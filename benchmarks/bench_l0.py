"""Benchmark of L0 line hashing (issue 3 target; paper §2.2 "L0", Table 15 "L0 alone (xxHash3)").

Target: L0 processes text at >= 50 % of the throughput of raw ``xxh3_64`` over the same lines,
measured in one run. Not a test: it reports. Measured in one process, best of ``--repeat``:

* ``raw hash``: ``xxh3_64_intdigest`` over the lines, already split into ``bytes`` (the strict
  baseline: no splitting, no bookkeeping);
* ``split + hash``: the records of a trajectory encoded, split on ``\\n`` and every line hashed
  (the least any line-hashing layer does with text);
* ``L0``: :func:`lam_ref.text.lines.dedup_records` — text in, residual text, stubs and audit
  patches out.

Throughput is bytes of text per second; the ratios are ``t_baseline / t_L0``. Two workloads: the
shared SWE-agent trajectories one by one (short: a few hundred lines each), and one long
trajectory (all their observations in a row, ``--long-copies`` times, lightly varied). Without
``../shared/data`` a synthetic log-like corpus is used.

Run: ``.venv/bin/python benchmarks/bench_l0.py [--repeat 7] [--json benchmarks/results/l0.json]``.
"""

from __future__ import annotations

import argparse
import json
import platform
import random
import sys
from pathlib import Path

import xxhash
from _timing import best_of

from lam_ref.text.lines import dedup_records
from lam_ref.text.loaders import LoadFailure, iter_trajectories

SHARED = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "swe-agent-trajectories"


def corpus() -> tuple[list[list[str]], str]:
    """Observation texts per trajectory, from the shared data or synthetic."""
    if SHARED.is_dir():
        out = []
        for t in iter_trajectories([SHARED]):
            if not isinstance(t, LoadFailure):
                out.append([r.text for r in t.records if r.is_observation])
        return out, f"{len(out)} shared SWE-agent trajectories"
    rng = random.Random(0)
    vocab = [f"{rng.choice(['def', 'return', 'if', 'for', 'ERROR', 'ok'])} line {i} " + "x" * rng.randint(0, 60)
             for i in range(400)]
    trajs = [["\n".join(rng.choice(vocab) for _ in range(rng.randint(5, 80))) for _ in range(15)] for _ in range(20)]
    return trajs, "20 synthetic trajectories (../shared/data not found)"


def long_trajectory(trajs: list[list[str]], copies: int) -> list[str]:
    rng = random.Random(1)
    out = []
    for c in range(copies):
        for tr in trajs:
            for text in tr:
                lines = text.split("\n")
                if lines and c:
                    lines[rng.randrange(len(lines))] += f" #{c}"  # keep later copies from being pure repeats
                out.append("\n".join(lines))
    return out


def measure(trajs: list[list[str]], repeat: int) -> dict:
    h = xxhash.xxh3_64_intdigest
    pre_split = [b"\n".join(t.encode("utf-8") for t in tr).split(b"\n") for tr in trajs]
    nbytes = sum(len(t.encode("utf-8")) for tr in trajs for t in tr)
    nlines = sum(len(x) for x in pre_split)

    def raw() -> None:
        for lines in pre_split:
            list(map(h, lines))

    def split_hash() -> None:
        for tr in trajs:
            list(map(h, b"\n".join([t.encode("utf-8") for t in tr]).split(b"\n")))

    def l0() -> None:
        for tr in trajs:
            dedup_records(tr)

    t_raw, t_split, t_l0 = best_of(raw, repeat), best_of(split_hash, repeat), best_of(l0, repeat)
    dropped = sum(r.dropped_lines for tr in trajs for r in dedup_records(tr))
    return {
        "trajectories": len(trajs),
        "lines": nlines,
        "bytes": nbytes,
        "dropped_lines": dropped,
        "raw_hash_s": t_raw,
        "split_hash_s": t_split,
        "l0_s": t_l0,
        "raw_hash_MBps": nbytes / t_raw / 1e6,
        "l0_MBps": nbytes / t_l0 / 1e6,
        "ns_per_line": {"raw_hash": 1e9 * t_raw / nlines, "split_hash": 1e9 * t_split / nlines, "l0": 1e9 * t_l0 / nlines},
        "ratio_vs_raw_hash": t_raw / t_l0,
        "ratio_vs_split_hash": t_split / t_l0,
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--repeat", type=int, default=7)
    ap.add_argument("--long-copies", type=int, default=10)
    ap.add_argument("--json", metavar="PATH")
    args = ap.parse_args(argv)
    trajs, source = corpus()
    results = {
        "per_trajectory": measure(trajs, args.repeat),
        "long_trajectory": measure([long_trajectory(trajs, args.long_copies)], max(3, args.repeat // 2)),
    }
    print(f"L0 line hashing vs raw xxh3_64 — {source}; best of {args.repeat}")
    print(f"{'workload':<16} {'lines':>8} {'MB':>6} {'raw ns/l':>9} {'split+h ns/l':>13} {'L0 ns/l':>8} "
          f"{'L0/raw':>7} {'L0/split+h':>10}")
    for name, r in results.items():
        ns = r["ns_per_line"]
        print(f"{name:<16} {r['lines']:>8} {r['bytes'] / 1e6:>6.2f} {ns['raw_hash']:>9.1f} {ns['split_hash']:>13.1f} "
              f"{ns['l0']:>8.1f} {r['ratio_vs_raw_hash']:>7.2f} {r['ratio_vs_split_hash']:>10.2f}")
    for name, r in results.items():
        ok = r["ratio_vs_raw_hash"] >= 0.5
        step = r["raw_hash_s"] / r["split_hash_s"]
        print(f"target (L0 >= 50% of raw xxh3_64 throughput), {name}: {'met' if ok else 'NOT met'} "
              f"(whole L0 {100 * r['ratio_vs_raw_hash']:.0f}% of raw; its hashing step alone, split + hash, "
              f"{100 * step:.0f}% of raw)")
    if args.json:
        out = {"source": source, "python": sys.version.split()[0], "machine": platform.machine(),
               "processor": platform.processor(), "results": results}
        Path(args.json).parent.mkdir(parents=True, exist_ok=True)
        Path(args.json).write_text(json.dumps(out, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
