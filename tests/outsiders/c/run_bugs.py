"""Build the C outsider's bug builds (``-DBUG=n``) and record which the conformance suite catches.

Each build runs, one after the other (the machine's cores are shared), through
``lam-ref conform --impl exec:BINARY --json REPORT`` and
``python -m lam_ref.conformance.vectors --impl exec:BINARY``, each under a timeout. A bug is
*caught* when a check fails or a vector fails. The careful build (``BUG=0``) runs first and must
pass both, otherwise the record would measure a false alarm, not the bugs.

Usage: ``python tests/outsiders/c/run_bugs.py [--bugs 1,2,5-9] [--thorough] [--out results.json]``.
The JSON lists, per bug: ``caught``, ``checks_failed`` (check ids), ``vectors_failed``
(``file vector id [flags]``), the exit codes and the wall time.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[2]
SOURCE = HERE / "lam.c"
FLAGS = ["-O2", "-std=c11", "-Wall", "-Wextra"]
VECTOR_LINE = re.compile(r"^\s+(\S+\.json) vector (\d+) \[([^\]]*)\]")


def build(bug: int, out_dir: Path) -> Path:
    """Compile lam.c with -DBUG=bug (0: the careful build) into out_dir; raise on a compiler error."""
    exe = out_dir / f"lam_bug{bug}"
    cmd = ["gcc", *FLAGS, f"-DBUG={bug}", "-o", str(exe), str(SOURCE), "-lm"]
    done = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"gcc failed for BUG={bug}: {done.stderr.strip()[:500]}")
    return exe


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = str(ROOT) + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    env.setdefault("HYPOTHESIS_PROFILE", "ci")
    env.setdefault("HF_HUB_OFFLINE", "1")
    env.setdefault("TOKENIZERS_PARALLELISM", "false")
    return env


def run_conform(exe: Path, work: Path, thorough: bool, timeout: float, k: str | None = None) -> dict:
    """Run the conformance checks on exe over exec; return the failed check ids and the exit code."""
    report = work / f"{exe.name}.report.json"
    cmd = [sys.executable, "-m", "lam_ref.cli", "conform", "--impl", f"exec:{exe}", "--json", str(report), "-q",
           "--check-timeout", "240"]
    if thorough:
        cmd.append("--thorough")
    if k:
        cmd += ["-k", k]
    try:
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=_env(), cwd=work, check=False)
        rc, tail = done.returncode, (done.stdout + done.stderr)[-2000:]
    except subprocess.TimeoutExpired:
        rc, tail = 124, "timed out"
    failed: list[str] = []
    passed = 0
    if report.exists():
        data = json.loads(report.read_text())
        failed = [t["id"] for t in data["tests"] if t["outcome"] == "failed"]
        passed = sum(1 for t in data["tests"] if t["outcome"] == "passed")
    return {"rc": rc, "failed": failed, "passed": passed, "tail": tail if rc not in (0, 1) else ""}


def run_vectors(exe: Path, work: Path, thorough: bool, timeout: float) -> dict:
    """Run every vector of the claimed profiles on exe over exec; return the failed vectors."""
    cmd = [sys.executable, "-m", "lam_ref.conformance.vectors", "--impl", f"exec:{exe}"]
    if thorough:
        cmd.append("--thorough")
    try:
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=_env(), cwd=work, check=False)
        rc, out = done.returncode, done.stdout + done.stderr
    except subprocess.TimeoutExpired:
        rc, out = 124, "timed out"
    failed = [f"{m.group(1)} {m.group(2)} [{m.group(3)}]" for m in map(VECTOR_LINE.match, out.splitlines()) if m]
    return {"rc": rc, "failed": failed, "tail": out[-2000:] if rc not in (0, 1) else ""}


def parse_bugs(spec: str) -> list[int]:
    """'1,3,5-7' -> [1, 3, 5, 6, 7]."""
    out: list[int] = []
    for part in spec.split(","):
        if "-" in part:
            a, b = part.split("-")
            out += range(int(a), int(b) + 1)
        elif part:
            out.append(int(part))
    return out


def measure(bug: int, tmp: Path, thorough: bool, timeout: float) -> dict:
    """Build one variant and run the checks and the vectors on it."""
    start = time.monotonic()
    exe = build(bug, tmp)
    conform = run_conform(exe, tmp, thorough, timeout)
    vectors = run_vectors(exe, tmp, thorough, timeout)
    caught = bool(conform["failed"] or vectors["failed"] or conform["rc"] != 0 or vectors["rc"] != 0)
    return {
        "bug": bug,
        "caught": caught,
        "checks_failed": conform["failed"],
        "vectors_failed": vectors["failed"],
        "conform_rc": conform["rc"],
        "vectors_rc": vectors["rc"],
        "checks_passed": conform["passed"],
        "notes": (conform["tail"] + vectors["tail"]).strip()[-1500:],
        "wall_s": round(time.monotonic() - start, 1),
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--bugs", default="1-40", help="bug numbers, e.g. 1,3,5-9 (default 1-40)")
    ap.add_argument("--thorough", action="store_true", help="the suite's --thorough run (25x examples)")
    ap.add_argument("--timeout", type=float, default=600.0, help="seconds per command (default 600)")
    ap.add_argument("--out", type=Path, default=None, help="write the JSON record here")
    ap.add_argument("--skip-careful", action="store_true", help="do not re-measure the careful build first")
    args = ap.parse_args(argv)
    if shutil.which("gcc") is None:
        print("run_bugs: error: gcc not found", file=sys.stderr)
        return 2
    results = []
    with tempfile.TemporaryDirectory(prefix="lam-c-bugs-") as tmp_name:
        tmp = Path(tmp_name)
        careful = {"caught": False, "skipped": True} if args.skip_careful else measure(0, tmp, args.thorough, args.timeout)
        print(f"careful build: {'FALSE ALARM' if careful['caught'] else 'passes'} "
              f"{careful.get('checks_failed', [])} {careful.get('vectors_failed', [])}", flush=True)
        for bug in parse_bugs(args.bugs):
            r = measure(bug, tmp, args.thorough, args.timeout)
            results.append(r)
            what = ", ".join(r["checks_failed"] + r["vectors_failed"][:3]) or r["notes"][-200:]
            print(f"BUG={bug}: {'caught' if r['caught'] else 'MISSED'} ({r['wall_s']} s) {what}", flush=True)
    caught = sum(r["caught"] for r in results)
    record = {
        "source": "tests/outsiders/c/lam.c",
        "thorough": args.thorough,
        "careful": careful,
        "bugs": results,
        "caught": caught,
        "total": len(results),
        "kill_rate": round(caught / len(results), 4) if results else None,
    }
    text = json.dumps(record, indent=1)
    if args.out:
        args.out.write_text(text + "\n")
    print(f"caught {caught} of {len(results)}; careful build {'fails' if careful['caught'] else 'passes'}")
    return 1 if careful["caught"] else 0


if __name__ == "__main__":
    sys.exit(main())
