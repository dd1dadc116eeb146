"""Benchmark of Algorithm 2 and Algorithm 1 (spec §5, §6). Not a test: it reports.

Measured in one process, on the same data:
* exhaustive verification throughput (verified pairs per second) at D = 384 and 768, N = 20,000;
* wall-time ratios banded / exhaustive and naive-loop / exhaustive (the naive loop is the
  pure-Python pair loop of the SPEC §5 definition, timed on a prefix because it is ~10^4× slower);
* banded mode's share of pairs verified and whether its π equals the exhaustive (= oracle) π;
* median latency of one online ``admit`` of a single arrival with ~1,000 retained chunks (D = 384);
* peak traced memory of exhaustive mode and bytes per retained chunk of an online session.

Run: ``.venv/bin/python benchmarks/bench_substitution.py [--n 20000] [--json out.json]``.
"""

from __future__ import annotations

import argparse
import json
import platform
import statistics
import sys
import time
import tracemalloc

import numpy as np

from lam_ref import OnlineSession, band_recall, substitute
from lam_ref.geometry import sq_dist


def clustered(rng: np.random.Generator, n: int, d: int, dup: float = 0.15) -> np.ndarray:
    """Unit rows, ``dup·n`` of them noisy copies (distance 0.03..0.30 < δ(0.95) = 0.316) of others."""
    base = rng.standard_normal((n, d))
    base /= np.linalg.norm(base, axis=1, keepdims=True)
    k = int(n * dup)
    src = rng.integers(0, n - k, size=k)
    noise = rng.standard_normal((k, d))
    noise -= np.einsum("ij,ij->i", noise, base[src])[:, None] * base[src]
    noise /= np.linalg.norm(noise, axis=1, keepdims=True)
    dist = rng.uniform(0.03, 0.30, size=k)
    # point at chord distance `dist` from base[src]: cos = 1 - dist²/2
    c = 1 - dist**2 / 2
    base[n - k :] = c[:, None] * base[src] + np.sqrt(1 - c**2)[:, None] * noise
    return base[rng.permutation(n)].astype(np.float32)


def naive_loop(e: np.ndarray, t: float) -> np.ndarray:
    d2 = 2.0 - 2.0 * t
    kept: list[int] = []
    pi = np.arange(e.shape[0])
    for i in range(e.shape[0]):
        for y in kept:
            if sq_dist(e[i], e[y]) <= d2:
                pi[i] = y
                break
        else:
            kept.append(i)
    return pi


def bench_dim(n: int, d: int, t: float, naive_n: int, rng: np.random.Generator) -> dict:
    e = clustered(rng, n, d)
    tracemalloc.start()
    ex = substitute(e, t, exhaustive=True)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    ba = substitute(e, t)
    rec = band_recall(e, t)
    prefix = e[:naive_n]
    t0 = time.perf_counter()
    pi_naive = naive_loop(prefix, t)
    naive_s = time.perf_counter() - t0
    ex_prefix = substitute(prefix, t, exhaustive=True)
    assert np.array_equal(pi_naive, ex_prefix.pi), "naive loop and exhaustive disagree"
    return {
        "n": n,
        "dim": d,
        "t": t,
        "kept": ex.kept_count,
        "exhaustive_s": ex.wall_time_s,
        "exhaustive_pairs_verified": ex.pairs_verified,
        "exhaustive_pairs_per_s": ex.pairs_verified / ex.wall_time_s,
        "exhaustive_peak_traced_bytes": peak,
        "input_bytes": e.nbytes,
        "banded_s": ba.wall_time_s,
        "banded_pairs_verified": ba.pairs_verified,
        "banded_share_of_all_pairs": ba.pairs_verified / ba.total_pairs,
        "banded_equals_oracle": bool(np.array_equal(ba.pi, ex.pi)),
        "band_recall": rec.recall,
        "band_candidate_rate_all_pairs": rec.candidate_rate,
        "ratio_banded_over_exhaustive": ba.wall_time_s / ex.wall_time_s,
        "naive_prefix_n": naive_n,
        "naive_prefix_s": naive_s,
        "exhaustive_prefix_s": ex_prefix.wall_time_s,
        "ratio_naive_over_exhaustive_on_prefix": naive_s / ex_prefix.wall_time_s,
        "delta_hat": ex.delta_hat,
        "deletion_digest": ex.deletion_digest,
    }


def bench_online(rng: np.random.Generator, retained: int = 1000, d: int = 384, reps: int = 500) -> dict:
    """Median latency of one ``admit`` of one arrival against ~``retained`` chunks: fresh arrivals
    (retained, so the index grows from 1,000 to 1,500) and near-duplicates (merged at distance 0.1)."""
    base = clustered(rng, retained, d, dup=0.0)
    fresh = clustered(rng, reps, d, dup=0.0)
    noise = rng.standard_normal((reps, d))
    src = base[rng.integers(0, retained, size=reps)].astype(np.float64)
    noise -= np.einsum("ij,ij->i", noise, src)[:, None] * src
    noise /= np.linalg.norm(noise, axis=1, keepdims=True)
    c = 1 - 0.1**2 / 2
    dups = (c * src + np.sqrt(1 - c * c) * noise).astype(np.float32)
    out = {}
    for exhaustive in (False, True):
        mode = "exhaustive" if exhaustive else "banded"
        for kind, rows in (("duplicate", dups), ("fresh", fresh)):
            s = OnlineSession(0.95, exhaustive=exhaustive)
            s.admit(base)
            lat = []
            for k in range(reps):
                row = rows[k : k + 1]
                t0 = time.perf_counter()
                s.admit(row)
                lat.append(time.perf_counter() - t0)
            out[f"admit_median_ms_{mode}_{kind}"] = 1e3 * statistics.median(lat)
            out[f"admit_p99_ms_{mode}_{kind}"] = 1e3 * float(np.percentile(lat, 99))
    # memory per retained chunk (traced allocations while building the session)
    for exhaustive in (False, True):
        rows = clustered(rng, 4000, d, dup=0.0)
        tracemalloc.start()
        s = OnlineSession(0.95, exhaustive=exhaustive)
        s.admit(rows)
        cur, _ = tracemalloc.get_traced_memory()
        tracemalloc.stop()
        mode = "exhaustive" if exhaustive else "banded"
        out[f"session_bytes_per_retained_{mode}"] = cur / s.kept_count
    out["embedding_bytes_per_retained"] = 4 * d
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--n", type=int, default=20_000)
    ap.add_argument("--dims", type=int, nargs="+", default=[384, 768])
    ap.add_argument("--t", type=float, default=0.95)
    ap.add_argument("--naive-n", type=int, default=600)
    ap.add_argument("--seed", type=int, default=20261129)
    ap.add_argument("--json", help="write the results here")
    args = ap.parse_args(argv)
    rng = np.random.default_rng(args.seed)
    results = {
        "machine": {"platform": platform.platform(), "processor": platform.processor(), "python": sys.version.split()[0],
                    "numpy": np.__version__},
        "dims": [bench_dim(args.n, d, args.t, args.naive_n, rng) for d in args.dims],
        "online": bench_online(rng),
    }
    for r in results["dims"]:
        print(
            f"N={r['n']} D={r['dim']}: exhaustive {r['exhaustive_s']:.2f} s, {r['exhaustive_pairs_per_s'] / 1e6:.1f} M pairs/s, "
            f"peak {r['exhaustive_peak_traced_bytes'] / 2**20:.0f} MiB; banded {r['banded_s']:.2f} s "
            f"(x{r['ratio_banded_over_exhaustive']:.2f} of exhaustive), verifies {100 * r['banded_share_of_all_pairs']:.2f}% "
            f"of pairs, band recall {r['band_recall']:.4f}, equals oracle: {r['banded_equals_oracle']}; naive loop x{r['ratio_naive_over_exhaustive_on_prefix']:.0f} "
            f"of exhaustive on the first {r['naive_prefix_n']}"
        )
    o = results["online"]
    print(
        f"online admit (1 arrival, ~1000 retained, D=384), median: banded {o['admit_median_ms_banded_fresh']:.3f} ms fresh / "
        f"{o['admit_median_ms_banded_duplicate']:.3f} ms duplicate, exhaustive {o['admit_median_ms_exhaustive_fresh']:.3f} / "
        f"{o['admit_median_ms_exhaustive_duplicate']:.3f} ms; bytes per retained chunk: "
        f"{o['session_bytes_per_retained_banded']:.0f} banded, {o['session_bytes_per_retained_exhaustive']:.0f} exhaustive "
        f"(embedding alone {o['embedding_bytes_per_retained']})"
    )
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(results, fh, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
