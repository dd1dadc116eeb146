"""Benchmark: peak memory of ``lam-ref compact`` does not grow with the number of files (issue 23 §5).
Not a test: it reports.

``compact`` streams the trajectories one at a time, so the whole-process peak RSS over a folder of
many files should be that of its largest file alone. This benchmark writes deterministic synthetic
trajectories in mini-swe-agent's ``.traj.json`` layout (observations
``<returncode>…</returncode><output>…</output>`` of source listings, logs and test output, with
repeats so that L1 and L0 have work), then runs ``lam-ref compact FOLDER --json OUT --no-progress``
under ``/usr/bin/time -v`` (whole-process "Maximum resident set size") for:

(a) the largest file alone (most observation bytes), (b) ``--files`` folders of N files each
(default 100 and 1000; the largest file is one of them).

Target: (b) with 100 files <= 1.1 × (a). Ratios are taken in the same run of this script.

Run: ``.venv/bin/python benchmarks/bench_memory.py [--encoder all-MiniLM-L6-v2] [--files 100 1000]
[--steps 40] [--json benchmarks/results/memory.json]``. Needs ``/usr/bin/time`` (GNU time).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
WORDS = ("def return class import self value error test file line assert print None True False "
         "config path result parse load save index items count update merge").split()


def _observation(rng: random.Random, kind: int, lines: int) -> str:
    if kind == 0:  # a source listing
        body = [f"{i:4d}  {'    ' * rng.randint(0, 3)}{rng.choice(WORDS)}_{rng.randint(0, 99)} = "
                f"{rng.choice(WORDS)}({rng.randint(0, 999)})" for i in range(1, lines + 1)]
    elif kind == 1:  # test output
        body = [f"tests/test_{rng.choice(WORDS)}.py::test_{rng.choice(WORDS)}_{i} "
                f"{'PASSED' if rng.random() < 0.9 else 'FAILED'}" for i in range(lines)]
    else:  # a log
        body = [f"2025-01-01 12:{i % 60:02d}:{rng.randint(0, 59):02d} INFO {rng.choice(WORDS)} "
                f"{' '.join(rng.choice(WORDS) for _ in range(rng.randint(3, 12)))}" for i in range(lines)]
    return "\n".join(body)


def make_trajectory(path: Path, seed: int, steps: int) -> int:
    """One synthetic mini-swe-agent trajectory; returns its observation bytes."""
    rng = random.Random(seed)
    messages = [{"role": "system", "content": "You are a helpful assistant that can run bash commands."},
                {"role": "user", "content": f"Fix issue #{seed}: {' '.join(rng.choice(WORDS) for _ in range(40))}"}]
    seen: list[str] = []
    size = 0
    for step in range(steps):
        if seen and rng.random() < 0.35:  # a re-read: an earlier output, sometimes edited
            out = rng.choice(seen)
            if rng.random() < 0.5:
                lines = out.split("\n")
                lines[rng.randrange(len(lines))] = _observation(rng, 2, 1)
                out = "\n".join(lines)
        else:
            out = _observation(rng, rng.randrange(3), rng.randint(10, 160))
            seen.append(out)
        messages.append({"role": "assistant", "content": f"THOUGHT: step {step}\n\n```bash\ncat file_{step}.py\n```"})
        messages.append({"role": "user", "content": f"<returncode>0</returncode>\n<output>\n{out}\n</output>"})
        size += len(out.encode("utf-8"))
    doc = {"info": {"exit_status": "Submitted", "bench": "lam_ref"}, "messages": messages, "trajectory_format": "mini-swe-agent-1"}
    path.write_text(json.dumps(doc), encoding="utf-8")
    return size


def peak_rss_mib(folder: Path, encoder: str, out_json: Path, extra: list[str] | None = None) -> tuple[float, float, dict]:
    """Whole-process peak RSS (MiB) and wall time of ``lam-ref compact folder`` under /usr/bin/time -v."""
    env = dict(os.environ, PYTHONPATH=str(ROOT), HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1",
               TOKENIZERS_PARALLELISM="false")
    cmd = ["/usr/bin/time", "-v", sys.executable, "-m", "lam_ref.cli", "compact", str(folder), "--encoder", encoder,
           "--json", str(out_json), "--no-progress", *(extra or [])]
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True)
    wall = time.perf_counter() - t0
    if proc.returncode != 0:
        raise SystemExit(f"compact failed on {folder} (exit {proc.returncode}):\n{proc.stderr[-2000:]}")
    m = re.search(r"Maximum resident set size \(kbytes\): (\d+)", proc.stderr)
    if not m:
        raise SystemExit("/usr/bin/time -v printed no 'Maximum resident set size' line")
    total = json.loads(out_json.read_text(encoding="utf-8"))["total"]
    return int(m.group(1)) / 1024.0, wall, {"chunks": total["chunks"], "trajectories": total["trajectories"]}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--encoder", default="all-MiniLM-L6-v2")
    ap.add_argument("--files", type=int, nargs="+", default=[100, 1000], help="folder sizes (default 100 1000)")
    ap.add_argument("--steps", type=int, default=40, help="steps per synthetic trajectory (default 40)")
    ap.add_argument("--json", metavar="OUT", help="write the figures as JSON")
    ap.add_argument("--compact-arg", action="append", default=[], metavar="ARG",
                    help="one more argument for every compact run (repeatable), e.g. --compact-arg=--no-reuse")
    args = ap.parse_args(argv)
    if not Path("/usr/bin/time").exists():
        raise SystemExit("needs GNU time at /usr/bin/time (apt-get install time)")
    tmp = Path(tempfile.mkdtemp(prefix="lam_mem_"))
    try:
        pool = tmp / "pool"
        pool.mkdir()
        n_max = max(args.files)
        sizes = {}
        for i in range(n_max):
            p = pool / f"task-{i:04d}.traj.json"
            sizes[p] = make_trajectory(p, i, args.steps)
        largest = max(sizes, key=sizes.get)
        one = tmp / "largest"
        one.mkdir()
        shutil.copy(largest, one / largest.name)
        base, base_s, base_info = peak_rss_mib(one, args.encoder, tmp / "one.json", args.compact_arg)
        print(f"largest file alone ({sizes[largest]} observation bytes, {base_info['chunks']} windows): "
              f"peak RSS {base:.0f} MiB, {base_s:.0f} s")
        runs = []
        for n in args.files:
            folder = tmp / f"n{n}"
            folder.mkdir()
            names = sorted(sizes, key=lambda p: p.name)[:n]
            if largest not in names:
                names[-1] = largest
            for p in names:
                os.link(p, folder / p.name)
            rss, secs, info = peak_rss_mib(folder, args.encoder, tmp / f"n{n}.json", args.compact_arg)
            ratio = rss / base
            verdict = ("met" if ratio <= 1.1 else "NOT met") if n == 100 else "reported"
            print(f"{n} files ({info['chunks']} windows): peak RSS {rss:.0f} MiB = {ratio:.3f} × the largest alone, "
                  f"{secs:.0f} s (target for 100 files <= 1.1×: {verdict})")
            runs.append({"files": n, "peak_rss_mib": rss, "ratio": ratio, "seconds": secs, **info})
        report = {"encoder": args.encoder, "steps": args.steps, "compact_args": args.compact_arg,
                  "machine": platform.platform(),
                  "cpus": os.cpu_count(), "largest": {"observation_bytes": sizes[largest], "peak_rss_mib": base,
                                                      "seconds": base_s, **base_info}, "runs": runs}
        if args.json:
            Path(args.json).write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
        return 0
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    raise SystemExit(main())
