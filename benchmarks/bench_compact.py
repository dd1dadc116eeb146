"""Benchmark of trajectory compaction (paper Table 13: encoding is 99.989 % of
compaction cost). Not a test: it reports.

1. **Stage costs**, one process: the shared SWE-agent trajectories (or, without
   ``../shared/data``, the demo agent's trajectory) compacted with the real encoder, L1 then L0
   plus the per-layer extras (L1 alone, L0 alone). Everything except encoding — loading,
   tokenizing/chunking, L1 (OnlineSession), residual building, L0, whole-text token counts, the L2 storage report, the
   audit store — is compared with encoding time. Target: <= 2 % of encoding.
2. **Memory while streaming** (``--memory N``, default 500): a temporary directory holds ``N``
   trajectory files (copies of the shared ones, cycled). Child processes report their peak RSS
   (``ru_maxrss``): (a) the encoder loaded and used on one short text, (b) compacting the largest
   single trajectory, (c) compacting the directory of ``N`` through ``lam-ref compact``'s streaming
   path. Target: (c) <= 2 × (b) (the largest trajectory plus the model).

Run: ``.venv/bin/python benchmarks/bench_compact.py [--encoder all-MiniLM-L6-v2] [--memory 500]
[--memory-encoder NAME] [--json benchmarks/results/compact.json]``.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

SHARED = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "swe-agent-trajectories"


def _peak_rss_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0  # Linux: KiB


def child(mode: str, target: str, encoder_name: str) -> None:
    """Run one memory measurement in this (fresh) process and print a JSON line."""
    from lam_ref.text.encoders import get_encoder
    from lam_ref.text.pipeline import CompactionConfig, compact_paths, result_summary
    from lam_ref.text.residuals import result_problems

    enc = get_encoder(encoder_name)
    enc.encode(["warm up the model"])
    out = {"mode": mode, "trajectories": 0, "chunks": 0, "failures": 0, "problems": 0}
    if mode != "model":
        t0 = time.perf_counter()
        for res in compact_paths([target], enc, CompactionConfig()):
            if not hasattr(res, "trajectory"):
                out["failures"] += 1
                continue
            out["trajectories"] += 1
            out["chunks"] += res.chunks
            out["problems"] += len(result_problems(res))
            result_summary(res)  # what the CLI keeps per trajectory
        out["seconds"] = time.perf_counter() - t0
    out["peak_rss_mib"] = _peak_rss_mib()
    print(json.dumps(out))


def _run_child(mode: str, target: str, encoder_name: str) -> dict:
    env = dict(os.environ, HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1", TOKENIZERS_PARALLELISM="false")
    proc = subprocess.run([sys.executable, __file__, "--child", mode, target, "--encoder", encoder_name],
                          capture_output=True, text=True, env=env, check=False)
    if proc.returncode != 0:
        raise RuntimeError(f"child {mode} failed:\n{proc.stderr[-3000:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def stage_costs(encoder_name: str) -> dict:
    from lam_ref.codec import DEFAULT_REL_EB
    from lam_ref.text.encoders import get_encoder
    from lam_ref.text.loaders import LoadFailure, iter_trajectories
    from lam_ref.text.pipeline import CompactionConfig, compact_trajectory

    config = CompactionConfig(l2_rel_eb=DEFAULT_REL_EB, l0_net_positive=True)  # as `lam-ref compact` runs: L1, L0, L2 report
    if SHARED.is_dir():
        paths, source = [SHARED], f"shared SWE-agent trajectories ({SHARED})"
    else:
        from lam_ref import demo

        tmp = Path(tempfile.mkdtemp(prefix="lam_bench_"))
        paths = [demo.run_agent(demo.make_project(tmp), tmp / "demo_agent.traj.json")]
        source = "the demo agent's trajectory (../shared/data not found)"
    t0 = time.perf_counter()
    enc = get_encoder(encoder_name)
    load_model_s = time.perf_counter() - t0
    sums: dict[str, float] = {}
    load_s = 0.0
    n_traj = chunks = tokens = 0
    it = iter(iter_trajectories(paths))
    while True:
        t0 = time.perf_counter()
        item = next(it, None)
        load_s += time.perf_counter() - t0
        if item is None:
            break
        if isinstance(item, LoadFailure):
            continue
        res = compact_trajectory(item, enc, config)
        n_traj += 1
        chunks += res.chunks
        tokens += res.tokens_original
        for k, v in res.timings.items():
            sums[k] = sums.get(k, 0.0) + v
    other = {k: v for k, v in sums.items() if k not in ("encode", "total")}
    other["load"] = load_s
    other_s = sum(other.values())
    return {
        "source": source,
        "encoder": enc.describe(),
        "trajectories": n_traj,
        "chunks": chunks,
        "observation_tokens": tokens,
        "model_load_s": load_model_s,
        "encode_s": sums.get("encode", 0.0),
        "other_s": other_s,
        "other_breakdown_s": other,
        "other_over_encode": other_s / sums["encode"] if sums.get("encode") else None,
        "encode_share": sums.get("encode", 0.0) / (sums.get("encode", 0.0) + other_s),
    }


def _observation_bytes(path: Path) -> int:
    """Size of a trajectory's observation text (how "largest" is chosen)."""
    from lam_ref.text.loaders import load_file

    return sum(len(r.text.encode("utf-8")) for t in load_file(path) for r in t.records if r.is_observation)


def memory(n: int, encoder_name: str) -> dict:
    files = sorted(SHARED.rglob("*.traj")) if SHARED.is_dir() else []
    if not files:
        return {"skipped": "../shared/data not found"}
    largest = max(files, key=_observation_bytes)
    tmp = Path(tempfile.mkdtemp(prefix="lam_bench_mem_"))
    try:
        for i in range(n):
            src = files[i % len(files)]
            shutil.copyfile(src, tmp / f"{i:04d}_{src.name}")
        model = _run_child("model", "-", encoder_name)
        single = _run_child("single", str(largest), encoder_name)
        many = _run_child("dir", str(tmp), encoder_name)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return {
        "encoder": encoder_name,
        "largest_file": str(largest.relative_to(SHARED)),
        "model_only_peak_mib": model["peak_rss_mib"],
        "single_peak_mib": single["peak_rss_mib"],
        "directory": {"trajectories": many["trajectories"], "chunks": many["chunks"], "seconds": many["seconds"],
                      "problems": many["problems"], "failures": many["failures"]},
        "directory_peak_mib": many["peak_rss_mib"],
        "ratio_dir_over_single": many["peak_rss_mib"] / single["peak_rss_mib"],
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--encoder", default="all-MiniLM-L6-v2")
    ap.add_argument("--memory", type=int, default=500, help="trajectories in the memory run (0: skip)")
    ap.add_argument("--memory-encoder", help="encoder of the memory run (default: --encoder)")
    ap.add_argument("--json", metavar="PATH")
    ap.add_argument("--child", nargs=2, metavar=("MODE", "TARGET"), help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.child:
        child(args.child[0], args.child[1], args.encoder)
        return 0
    out: dict = {"python": sys.version.split()[0], "machine": platform.machine(), "cpus": os.cpu_count()}
    st = stage_costs(args.encoder)
    out["stages"] = st
    print(f"compaction of {st['trajectories']} trajectories ({st['chunks']} windows, {st['observation_tokens']} "
          f"observation tokens) with {st['encoder']['name']} on {st['encoder']['device']}")
    print(f"  encoding {st['encode_s']:.2f} s; everything else {st['other_s']:.3f} s "
          f"= {100 * st['other_over_encode']:.2f}% of encoding (target <= 2%: "
          f"{'met' if st['other_over_encode'] <= 0.02 else 'NOT met'}); encoding share {100 * st['encode_share']:.3f}%")
    print("  other stages (s): " + ", ".join(f"{k} {v:.4f}" for k, v in sorted(st["other_breakdown_s"].items())))
    if args.memory > 0:
        mem = memory(args.memory, args.memory_encoder or args.encoder)
        out["memory"] = mem
        if "skipped" in mem:
            print(f"memory: skipped ({mem['skipped']})")
        else:
            ok = mem["ratio_dir_over_single"] <= 2.0
            print(f"memory ({mem['encoder']}): model only {mem['model_only_peak_mib']:.0f} MiB; largest single "
                  f"trajectory {mem['single_peak_mib']:.0f} MiB; directory of {mem['directory']['trajectories']} "
                  f"({mem['directory']['chunks']} windows, {mem['directory']['seconds']:.0f} s) "
                  f"{mem['directory_peak_mib']:.0f} MiB = {mem['ratio_dir_over_single']:.2f}× "
                  f"(target <= 2×: {'met' if ok else 'NOT met'})")
    if args.json:
        Path(args.json).parent.mkdir(parents=True, exist_ok=True)
        Path(args.json).write_text(json.dumps(out, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
