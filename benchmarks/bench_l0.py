"""Benchmark of L0 line hashing (spec §7; paper §2.2 "L0", Table 15 "L0 alone (xxHash3)").

Target: L0 processes text at >= 50 % of the throughput of raw ``xxh3_64`` over the same lines,
measured in one run. Not a test: it reports. Measured in one process, best of ``--repeat``:

* ``raw hash``: ``xxh3_64_intdigest`` over the lines, already split into ``bytes`` (the strict
  baseline: no splitting, no bookkeeping);
* ``split + hash``: the records of a trajectory encoded, split on ``\\n`` and every line hashed
  in Python (the least a pure-Python line-hashing layer does with text);
* ``L0 (c)`` and ``L0 (python)``: :func:`lam_ref.text.lines.dedup_records` with each backend — text
  in, residual text, stubs and audit patches out. Each timed run gets freshly copied ``str`` objects,
  so the UTF-8 form CPython caches on a non-ASCII ``str`` is never reused from an earlier run.

Throughput is bytes of text per second; the ratios are ``t_baseline / t_L0``; the target is judged
on the default backend (``c`` when the extension is built). Two workloads: the shared SWE-agent
trajectories one by one (short: a few hundred lines each), and one long trajectory (all their
observations in a row, ``--long-copies`` times, lightly varied). Without ``../shared/data`` a
synthetic log-like corpus is used.

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

from lam_ref.text.lines import BACKENDS, dedup_records
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


def _fresh(trajs: list[list[str]]) -> list[list[str]]:
    """New ``str`` objects with the same text (no cached UTF-8 form from an earlier run)."""
    return [[(t + ".")[:-1] for t in tr] for tr in trajs]


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

    def l0(backend: str):
        def run(fresh: list[list[str]]) -> None:
            for tr in fresh:
                dedup_records(tr, backend=backend)
        return run

    t_raw, t_split = best_of(raw, repeat), best_of(split_hash, repeat)
    t_l0 = {b: best_of(l0(b), repeat, setup=lambda: _fresh(trajs)) for b in BACKENDS}
    results = {b: [dedup_records(tr, backend=b) for tr in trajs] for b in BACKENDS}
    if any(results[b] != results[BACKENDS[0]] for b in BACKENDS):
        raise SystemExit("the L0 backends disagree: a bug (tests/text/test_lines.py should have caught it)")
    dropped = sum(r.dropped_lines for res in results[BACKENDS[0]] for r in res)
    return {
        "trajectories": len(trajs),
        "lines": nlines,
        "bytes": nbytes,
        "dropped_lines": dropped,
        "raw_hash_s": t_raw,
        "split_hash_s": t_split,
        "l0_s": t_l0,
        "raw_hash_MBps": nbytes / t_raw / 1e6,
        "l0_MBps": {b: nbytes / t / 1e6 for b, t in t_l0.items()},
        "ns_per_line": {"raw_hash": 1e9 * t_raw / nlines, "split_hash": 1e9 * t_split / nlines,
                        **{f"l0_{b}": 1e9 * t / nlines for b, t in t_l0.items()}},
        "ratio_vs_raw_hash": {b: t_raw / t for b, t in t_l0.items()},
        "ratio_vs_split_hash": {b: t_split / t for b, t in t_l0.items()},
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
    print(f"L0 line hashing vs raw xxh3_64 — {source}; best of {args.repeat}; backends {', '.join(BACKENDS)}")
    print(f"{'workload':<16} {'lines':>8} {'MB':>6} {'raw ns/l':>9} {'split+h ns/l':>13} "
          + " ".join(f"{'L0 ' + b + ' ns/l':>15} {'/raw':>5}" for b in BACKENDS))
    for name, r in results.items():
        ns = r["ns_per_line"]
        print(f"{name:<16} {r['lines']:>8} {r['bytes'] / 1e6:>6.2f} {ns['raw_hash']:>9.1f} {ns['split_hash']:>13.1f} "
              + " ".join(f"{ns['l0_' + b]:>15.1f} {r['ratio_vs_raw_hash'][b]:>5.2f}" for b in BACKENDS))
    default = BACKENDS[0]
    for name, r in results.items():
        ratio = r["ratio_vs_raw_hash"][default]
        print(f"target (L0 >= 50% of raw xxh3_64 throughput), {name}: {'met' if ratio >= 0.5 else 'NOT met'} "
              f"(default backend {default!r}: whole L0 at {100 * ratio:.0f}% of raw; "
              f"a Python split + hash alone is {100 * r['raw_hash_s'] / r['split_hash_s']:.0f}% of raw)")
    if args.json:
        out = {"source": source, "python": sys.version.split()[0], "machine": platform.machine(),
               "backends": list(BACKENDS),
               "processor": platform.processor(), "results": results}
        Path(args.json).parent.mkdir(parents=True, exist_ok=True)
        Path(args.json).write_text(json.dumps(out, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
