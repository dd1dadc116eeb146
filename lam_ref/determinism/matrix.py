"""``lam-ref determinism matrix``: the probe under every CPU kernel configuration, in fresh processes (claim ``STAB``).

"Determinism across machines" for anyone with one box: each configuration of
:mod:`lam_ref.determinism.kernels` that this CPU can run gets a fresh process that runs
:func:`lam_ref.determinism.probing.probe` with the same options and writes
``DIR/<configuration>.json`` (a determinism report with a ``configuration`` key). Skipped
configurations (unknown, unsupported by the CPU) and those that run the kernels of an earlier one
are one row each, never a failure. The verdict over all reports is :func:`lam_ref.determinism.report.compare`'s.

Across configurations the embeddings of one batch size are compared too (issue 22, item 4): the
largest ``|Δsq|`` between the first configuration's and each other's encodings at the same batch
size, against the smallest decision margin. By the lemma (STAB), when it is below the smallest
margin no decision can differ, whatever the kernel; ``DIR/matrix.json``
(schema ``lam_ref.determinism.matrix``) records the figures.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from .. import schemas as _schemas
from .._io import write_json
from ..geometry import LamValueError
from .kernels import config_env, plan
from .margins import jitter
from .report import compare, load_report

__all__ = ["MATRIX_SCHEMA", "MATRIX_SCHEMA_VERSION", "run_matrix", "worker"]

#: The summary's schema name and version (``DIR/matrix.json``; :mod:`lam_ref.schemas`).
MATRIX_SCHEMA = "lam_ref.determinism.matrix"
MATRIX_SCHEMA_VERSION = 1


def worker(spec_path: str) -> int:
    """The child process of one configuration: probe, then the report and the embeddings (``.npz``)."""
    from .probing import probe

    spec = json.loads(Path(spec_path).read_text(encoding="utf-8"))
    embs: dict[int, np.ndarray] = {}
    report = probe(spec["paths"], embeddings_out=embs, **spec["options"])
    report["configuration"] = {"name": spec["name"], "env": spec["env"]}
    write_json(report, spec["report"])
    np.savez(spec["embeddings"], **{str(k): v for k, v in embs.items()})
    return 0


def _run_one(name: str, spec_file: Path, env: dict[str, str], timeout: float | None, say: Any,
             kernels: str) -> tuple[int, str, float]:
    """One configuration's probe in a fresh process: ``(exit status, stderr, wall seconds)``."""
    say(f"{name}: probing ({kernels})")
    t0 = time.perf_counter()
    try:
        res = subprocess.run([sys.executable, "-m", "lam_ref.determinism.matrix", "--worker", str(spec_file)],
                             env=env, capture_output=True, text=True, timeout=timeout, check=False)
        rc, err = res.returncode, res.stderr
    except subprocess.TimeoutExpired:
        rc, err = 124, f"timed out after {timeout} s"
    return rc, err, round(time.perf_counter() - t0, 1)


def _min_margin(doc: dict[str, Any]) -> float | None:
    vals = [r["margin"]["min_sq"] for r in doc["runs"] if r["margin"]["min_sq"] is not None]
    return min(vals) if vals else None


def run_matrix(paths: Sequence[str], out_dir: str | os.PathLike[str], *, configs: Sequence[str] | None = None,
               options: dict[str, Any] | None = None, keep_embeddings: bool = False, timeout: float | None = None,
               echo: Any = None, resume: bool = False) -> dict[str, Any]:
    """Probe ``paths`` once per runnable kernel configuration; the summary (also written to ``DIR/matrix.json``).

    Args:
        paths: trajectory files or folders.
        out_dir: an existing folder; gets ``<configuration>.json`` per run and ``matrix.json``.
        configs: configuration names (default every one of :data:`~lam_ref.determinism.kernels.DEFAULT_CONFIGS`).
        options: keyword arguments of :func:`~lam_ref.determinism.probing.probe` (batch sizes,
            thresholds, encoder, ...; not ``device``: the matrix varies CPU kernels).
        keep_embeddings: also keep ``DIR/embeddings/<configuration>.npz``.
        timeout: seconds per configuration (``None``: no limit).
        resume: reuse ``DIR/<configuration>.json`` and ``DIR/embeddings/<configuration>.npz`` left by
            an earlier run with ``keep_embeddings`` (same input and options; checked by the verdict).
        echo: called with each progress line (``None``: silent).

    Returns:
        The summary: ``configurations`` (one row per name, run or not), ``cross`` (jitter of each
        run's encodings against the first run's, per batch size), the verdict.
    """
    opts = dict(options or {})
    if opts.get("device", "cpu") != "cpu":
        raise LamValueError(f"device {opts['device']!r}: the matrix varies CPU kernels; run it on the cpu")
    opts.pop("device", None)
    out = Path(out_dir)
    say = echo or (lambda line: None)
    planned = plan(configs)
    tmp = tempfile.TemporaryDirectory(prefix="lam-matrix-")
    if resume and not keep_embeddings:
        raise LamValueError("--resume needs --keep-embeddings (the embeddings of earlier runs are kept only then)")
    emb_dir = out / "embeddings" if keep_embeddings else Path(tmp.name)
    emb_dir.mkdir(exist_ok=True)
    rows: list[dict[str, Any]] = []
    docs: list[dict[str, Any]] = []
    embs: dict[str, dict[int, np.ndarray]] = {}
    failed = 0
    try:
        for p in planned:
            row = p.to_json() | {"report": None, "wall_s": None}
            rows.append(row)
            if p.status != "run" or p.config is None:
                say(f"{p.name}: {'skipped' if p.status == 'skipped' else 'same kernels as ' + str(p.same_as)}: {p.reason}")
                continue
            report = out / f"{p.name}.json"
            emb = emb_dir / f"{p.name}.npz"
            spec = {"name": p.name, "env": {k: v for k, v in config_env(p.config, {}).items()}, "paths": [str(x) for x in paths],
                    "options": opts, "report": str(report), "embeddings": str(emb)}
            spec_file = Path(tmp.name) / f"{p.name}.spec.json"
            spec_file.write_text(json.dumps(spec), encoding="utf-8")
            env = config_env(p.config)
            row["env"] = spec["env"]
            resumed = resume and report.is_file() and emb.is_file()
            if resumed:
                rc, err = 0, ""
                say(f"{p.name}: kept from an earlier run ({report.name})")
            else:
                rc, err, row["wall_s"] = _run_one(p.name, spec_file, env, timeout, say, p.kernels_text())
            if rc != 0:
                last = (err.strip().splitlines() or ["no output"])[-1]
                row["status"], row["reason"] = "failed", f"the probe exited {rc}: {last}"
                failed += 1
                say(f"{p.name}: FAILED: {row['reason']}")
                continue
            doc = load_report(report)
            docs.append(doc)
            row["report"] = report.name
            with np.load(emb) as z:
                embs[p.name] = {int(k): z[k] for k in z.files}
            if not resumed:
                say(f"{p.name}: done in {row['wall_s']} s")
    finally:
        tmp.cleanup()
    cross: list[dict[str, Any]] = []
    if docs:
        ref_name = docs[0]["configuration"]["name"]
        groups = [tuple(g) for g in docs[0]["input"]["groups"]]
        for d in docs:
            name = d["configuration"]["name"]
            for bs in sorted(embs[name]):
                if bs in embs[ref_name]:
                    j = jitter(embs[ref_name][bs], embs[name][bs], groups)
                    same = bool(np.array_equal(embs[ref_name][bs], embs[name][bs]))
                    cross.append({"configuration": name, "against": ref_name, "batch_size": bs, "identical": same, **j})
    verdict = compare(docs) if docs else None
    margins = [m for m in (_min_margin(d) for d in docs) if m is not None]
    smallest = min(margins) if margins else None
    max_sq = max((c["sq"] for c in cross), default=0.0)
    by_name = {d["configuration"]["name"]: d for d in docs}
    for row in rows:
        d = by_name.get(row["name"])
        if d is None:
            continue
        row["digests"] = {str(r["threshold"]): sorted({(x["deletion_digest"], x["map_digest"]) for x in d["runs"]
                                                       if x["threshold"] == r["threshold"]}) for r in d["runs"]}
        row["dropped"] = {str(r["threshold"]): r["dropped"] for r in d["runs"]}
        row["jitter_cos"] = d["jitter"]["measured_cos"]
        row["jitter_sq"] = d["jitter"]["measured_sq"]
        row["min_margin_sq"] = _min_margin(d)
        row["cross_sq"] = max((c["sq"] for c in cross if c["configuration"] == row["name"]), default=0.0)
        row["kernels_in_report"] = d["target"]["kernels"]["openblas_coretype"], d["target"]["kernels"]["torch_cpu_capability"]
    summary = {
        "schema": MATRIX_SCHEMA,
        "schema_version": MATRIX_SCHEMA_VERSION,
        "created_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "input_sha256": docs[0]["input_sha256"] if docs else None,
        "options": {k: v for k, v in opts.items() if k != "progress"},
        "configurations": rows,
        "cross": cross,
        "max_cross_sq": max_sq,
        "max_cross_cos": max((c["cos"] for c in cross), default=0.0),
        "smallest_margin_sq": smallest,
        "certified_across_kernels": bool(smallest is None or max_sq < smallest),
        "agree": bool(verdict is not None and verdict.agree) and failed == 0,
        "failed": failed,
        "comparison": None if verdict is None else verdict.to_json(),
    }
    _schemas.validate(summary, MATRIX_SCHEMA, where=f"matrix summary {str(out / 'matrix.json')!r}")
    write_json(summary, out / "matrix.json")
    return summary


if __name__ == "__main__":  # the worker of one configuration
    if len(sys.argv) == 3 and sys.argv[1] == "--worker":
        try:
            raise SystemExit(worker(sys.argv[2]))
        except LamValueError as exc:
            print(f"lam-ref determinism matrix: error: {exc}", file=sys.stderr)
            raise SystemExit(2) from None
    print("usage: lam-ref determinism matrix PATH... --out DIR", file=sys.stderr)
    raise SystemExit(2)
