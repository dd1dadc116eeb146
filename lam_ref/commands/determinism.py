"""``lam-ref determinism probe|compare|weights``: determinism reports across batch sizes, threads,
precisions and machines, and their comparison (paper App. D; claim ``STAB``; docs/determinism.md)."""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from .. import determinism as det
from .._io import write_json
from ..determinism.encoder import run_precision
from ..determinism.report import repeated_reports
from ..geometry import LamValueError
from ..tables import plural, table
from ._dask import add_cluster_options, probe_steps
from ._options import add_mkdir, add_trajectory_run_options, compaction_config
from ._paths import reads, validate_output_dir, validate_output_file, writes
from ._progress import RunProgress


def _add_probe_options(p: argparse.ArgumentParser, *, device: bool) -> None:
    """The probe's options (``probe`` and ``matrix``; docs/determinism.md's option table): the run
    options every trajectory command takes (:func:`add_trajectory_run_options`: the same windows as
    ``compact`` by default), and the probe's own (batch sizes, thresholds, precision, ...)."""
    add_trajectory_run_options(p, batch_size=False, device=False, measures_encoder=True)
    p.add_argument("--batch-sizes", default=",".join(map(str, det.DEFAULT_BATCH_SIZES)),
                    help="comma-separated encoding batch sizes (default 8,16,32,64,128,256)")
    p.add_argument("--thresholds", default=",".join(map(str, det.DEFAULT_THRESHOLDS)),
                    help="comma-separated cosine thresholds (default 0.99,0.95)")
    p.add_argument("--dtype", default="float32", help="encoder precision: float32 (default), bfloat16, float16")
    p.add_argument("--threads", default=None,
                   help="torch CPU threads, ONNX Runtime's too with --encoder-backend onnx (default: torch's choice)")
    if device:
        p.add_argument("--device", default="cpu", help="cpu (default) or cuda (encoder, greedy rule, codec)")
    p.add_argument("--layers", default="l1,l2", help="l1 (decisions, margins) and/or l2 (codec digests); default l1,l2")
    p.add_argument("--jitter", default=None, metavar="GAMMA",
                    help="a stated pairwise-cosine jitter; decisions with margin <= 4*GAMMA are at risk "
                         f"(default: the larger of the jitter measured across the batch sizes and {det.MACHINE_JITTER:g}, "
                         "the jitter between machines and CPU kernels)")
    p.add_argument("--reference-batch-size", default=None, help="jitter is relative to it (default 64)")
    p.add_argument("--scope", default="trajectory", help="trajectory (default: matching within a trajectory) or corpus")

#: The example each ``--help`` shows (``lam_ref.cli`` collects them from every command module).
EXAMPLES = {
    "determinism": "lam-ref determinism compare here.json there.json",
    "determinism probe": "lam-ref determinism probe runs/ --json probe.json --batch-sizes 1,32",
    "determinism compare": "lam-ref determinism compare here.json there.json --json agreement.json",
    "determinism matrix": "lam-ref determinism matrix runs/ --batch-sizes 8,64,256 --out matrix/",
    "determinism weights": "lam-ref determinism weights --out minilm-fp16 --dtype float16",
}


def register(sub: argparse._SubParsersAction) -> argparse.ArgumentParser:
    p = sub.add_parser("determinism", help="probe decisions across batch sizes/threads/devices; compare reports")
    dsub = p.add_subparsers(dest="action", metavar="ACTION")

    pr = dsub.add_parser("probe", help="encode at several batch sizes, record digests, margins, jitter, at-risk decisions")
    reads(pr.add_argument("paths", nargs="+", metavar="PATH", help="trajectory files or directories"), "paths")
    writes(pr.add_argument("--json", metavar="OUT", help="write the report here (atomically; required)"))
    writes(pr.add_argument("--out", dest="out_deprecated", metavar="OUT", help=argparse.SUPPRESS))  # deprecated alias of --json
    add_mkdir(pr)
    _add_probe_options(pr, device=True)
    add_cluster_options(pr, resume=False, tile=False)
    pr.set_defaults(func=run_probe)

    mx = dsub.add_parser(
        "matrix", help="the probe under every CPU kernel configuration (fresh process each), then compare's verdict",
        description="Run the probe once per CPU kernel configuration this machine can emulate (OpenBLAS core types, "
                    "numpy without AVX-512, torch CPU capabilities), each in a fresh process, one report per "
                    "configuration in DIR, and end with compare's verdict over all of them. A configuration the CPU "
                    "cannot run, or an unknown name, is one row, skipped with the reason.",
        epilog="Example:\n  lam-ref determinism matrix runs/ --batch-sizes 8,64,256 "
               "--out matrix/\nexit status: 0 every digest agrees, 1 a digest differs or a probe "
               "failed, 2 bad input (nothing run)",
        formatter_class=argparse.RawDescriptionHelpFormatter)
    reads(mx.add_argument("paths", nargs="+", metavar="PATH", help="trajectory files or directories"), "paths")
    writes(mx.add_argument("--out", required=True, metavar="DIR", help="folder for <configuration>.json and matrix.json"),
           "folder")
    add_mkdir(mx)
    mx.add_argument("--configs", default=None,
                    help="comma-separated kernel configurations (default: all; lam-ref determinism matrix --list)")
    mx.add_argument("--list", action="store_true", help="only print the configurations and what runs on this CPU")
    mx.add_argument("--keep-embeddings", action="store_true", help="keep DIR/embeddings/<configuration>.npz")
    mx.add_argument("--resume", action="store_true",
                    help="reuse the reports and embeddings an interrupted run left in DIR (needs --keep-embeddings)")
    mx.add_argument("--timeout", type=float, default=None, metavar="S", help="seconds per configuration (default none)")
    _add_probe_options(mx, device=False)
    mx.set_defaults(func=run_matrix)

    cp = dsub.add_parser("compare", help="one table across reports; exit 0 if every digest agrees, 1 if not")
    reads(cp.add_argument("reports", nargs="+", metavar="REPORT.json"))
    writes(cp.add_argument("--json", metavar="OUT", help="write the comparison as JSON (- for stdout)"))
    add_mkdir(cp)
    cp.add_argument("--allow-different-inputs", action="store_true",
                    help="compare reports of different inputs (each input separately) instead of refusing")
    cp.set_defaults(func=run_compare)

    wp = dsub.add_parser("weights", help="write a copy of the encoder folder with weights stored in float16")
    writes(wp.add_argument("--out", required=True, metavar="DIR", help="new folder (must not exist)"), "folder")
    reads(wp.add_argument("--encoder", default="all-MiniLM-L6-v2", help="all-MiniLM-L6-v2 (default) or a local model folder"),
          "name-or-path")
    wp.add_argument("--dtype", default="float16", help="storage dtype: float16 (default), bfloat16, float32")
    wp.set_defaults(func=run_weights)
    p.set_defaults(func=lambda args: (p.print_help(), 2)[1])
    return p


def _split(text: str, name: str) -> list[str]:
    items = [x for x in (s.strip() for s in str(text).split(",")) if x]
    if not items:
        raise LamValueError(f"{name} must be a comma-separated list, got {text!r}")
    return items


def _float(text: str | None, name: str) -> float | None:
    if text is None:
        return None
    try:
        return float(text)
    except ValueError:
        raise LamValueError(f"{name} must be a number, got {text!r}") from None


def _int(text: str | None, name: str) -> int | None:
    if text is None:
        return None
    try:
        return int(text)
    except ValueError:
        raise LamValueError(f"{name} must be a positive integer, got {text!r}") from None


def _probe_output(args: argparse.Namespace) -> str:
    """``--json OUT`` (``--out`` is its deprecated alias); one of them, a regular file path."""
    if args.json and args.out_deprecated and args.json != args.out_deprecated:
        raise LamValueError(f"--json {args.json!r} and --out {args.out_deprecated!r}: give one (--out is the former name of --json)")
    out = args.json or args.out_deprecated
    if not out:
        raise LamValueError("--json OUT: give the report's path")
    if out == "-":
        raise LamValueError("--json -: the probe's report is written to a file; give a path")
    validate_output_file(out, "--json", mkdir=args.mkdir)
    if Path(out).exists() and not Path(out).is_file():
        raise LamValueError(f"--json {out!r} is not a regular file")
    return out


def run_probe(args: argparse.Namespace) -> int:
    args.out = _probe_output(args)
    steps = probe_steps(args)  # --workers/--scheduler: the steps as Dask tasks (docs/scale.md)
    try:
        report = _probe(args, steps)
    finally:
        if steps is not None:
            steps.close()
    write_json(report, args.out)
    rows = [[r["batch_size"], r["threshold"], r["dropped"], r["deletion_digest"], r["map_digest"], r["delta_hat"][:10],
             r["margin"]["min_cos"] if r["margin"]["min_cos"] is not None else "-", len(r["at_risk"]),
             "yes" if r["certified_vs_reference"] else "NO"] for r in report["runs"]]
    if rows:
        print(table(rows, ["batch", "t", "dropped", "deletion digest", "map digest", "δ̂", "min margin (cos)", "at risk",
                           "certified"]))
    j = report["jitter"]
    print(f"{plural(report['input']['chunks'], 'window')} of {plural(report['input']['trajectories'])}; encoder "
          f"{report['encoder']['name']} ({run_precision(report['encoder'].get('backend'), report['settings']['dtype'])}, "
          f"{report['settings']['device']}); windows "
          f"{det.window_label(report)} tokens; jitter vs batch "
          f"{report['settings']['reference_batch_size']}: coordinates {j['measured_coord']:.3g}, cosines "
          f"{j['measured_cos']:.3g}, |Δsq| {j['measured_sq']:.3g}; report {args.out}")
    if "distributed" in report:
        d = report["distributed"]
        where = f"scheduler {d['scheduler']}" if d["scheduler"] else f"{d['workers']} local worker(s)"
        print(f"steps ran on {where}: one task per encoding, jitter and (batch size, threshold) greedy")
    return 0


def _probe(args: argparse.Namespace, steps: object) -> dict:
    opts = _probe_kwargs(args)
    bar: list[RunProgress] = []  # drawn at the first finished step: an input error prints only its one line

    def tick(label: str, windows: int) -> None:
        if not bar:
            total = det.probing.probe_steps_total(len(opts["batch_sizes"]), len(opts["thresholds"]), opts["layers"])
            bar.append(RunProgress(total, desc="determinism probe", unit="step"))
        bar[0].advance(1, windows=windows)

    try:
        return det.probe(args.paths, device=args.device, steps=steps, **opts,
                         progress=None if steps is not None or args.no_progress else tick)
    finally:
        if bar:
            bar[0].close()


def _probe_kwargs(args: argparse.Namespace) -> dict:
    """The probe's keyword arguments from the shared options, parsed (errors name the option); the
    windows are the run's :class:`~lam_ref.text.pipeline.CompactionConfig`'s, as in ``compact``. The
    probe's decisions are Algorithm 2's exhaustive greedy, whose map every driver and candidate
    search of the config equals (SPEC §5), and it runs no L0: ``--driver``, ``--exhaustive`` and
    ``--l0-stubs`` change nothing it records."""
    config = compaction_config(args)
    return {
        "encoder": args.encoder,
        "batch_sizes": _split(args.batch_sizes, "--batch-sizes"),
        "thresholds": _split(args.thresholds, "--thresholds"),
        "dtype": args.dtype,
        "threads": _int(args.threads, "--threads"),
        "layers": _split(args.layers, "--layers"),
        "jitter_bound": _float(args.jitter, "--jitter"),
        "reference_batch_size": _int(args.reference_batch_size, "--reference-batch-size"),
        "scope": args.scope,
        "window": config.window,
        "fit_window": config.fit_window,
        "fmt": args.format,
        "backend": args.encoder_backend,
    }


def run_matrix(args: argparse.Namespace) -> int:
    from ..determinism import kernels as _kernels
    from ..determinism.matrix import run_matrix as _run

    names = None if args.configs is None else _split(args.configs, "--configs")
    if args.list:
        for line in _kernels.plan_lines(_kernels.plan(names)):
            print(line)
        return 0
    validate_output_dir(args.out, "--out", mkdir=args.mkdir)
    opts = _probe_kwargs(args)
    # every option is checked before any process starts: a probe of nothing but the arguments
    det.probing.check_options(**opts)
    det.load_corpus(args.paths, window=opts["window"], fmt=opts["fmt"], scope=opts["scope"])
    echo = None if args.no_progress else (lambda line: print(f"lam-ref determinism matrix: {line}", file=sys.stderr, flush=True))
    t0 = time.perf_counter()
    summary = _run(args.paths, args.out, configs=names, options=opts, keep_embeddings=args.keep_embeddings,
                   timeout=args.timeout, echo=echo, resume=args.resume)
    rows = []
    for r in summary["configurations"]:
        state = {"run": "ran", "same": f"same as {r['same_as']}", "skipped": "skipped", "failed": "FAILED"}[r["status"]]
        dropped = " / ".join(f"{v}" for v in r.get("dropped", {}).values()) or "-"
        digests = " ".join(sorted({d[0] for v in r.get("digests", {}).values() for d in v})) or "-"
        rows.append([r["name"], _kernels_short(r["kernels"]), state + (f": {r['reason']}" if r["reason"] else ""), dropped,
                     digests, _g(r.get("jitter_cos")), _g(r.get("cross_sq")), _g(r.get("min_margin_sq")),
                     "-" if r["wall_s"] is None else f"{r['wall_s']:.0f}"])
    print(table(rows, ["configuration", "kernels in use", "status", "dropped", "deletion digests", "jitter γ",
                       "|Δsq| vs first", "min margin (sq)", "s"]))
    cmp = summary["comparison"]
    runs = sum(g["runs"] for g in cmp["groups"]) if cmp else 0
    ok = summary["agree"]
    print(f"verdict: {'every digest agrees' if ok else 'DIGESTS DIFFER or a probe failed'} ({plural(runs, 'run')} over "
          f"{sum(r['status'] == 'run' for r in summary['configurations'])} configurations); largest |Δsq| across kernels "
          f"{_g(summary['max_cross_sq'])} against the smallest margin {_g(summary['smallest_margin_sq'])}: "
          f"{'certified (STAB)' if summary['certified_across_kernels'] else 'NOT certified'}; "
          f"{time.perf_counter() - t0:.0f} s; {Path(args.out) / 'matrix.json'}")
    return 0 if ok else 1


def _g(x: object) -> str:
    return "-" if x is None else f"{x:.3g}"


def _kernels_short(k: dict) -> str:
    if not k:
        return "-"
    npy = "on" if any("AVX512" in t or t == "X86_V4" for t in (k.get("numpy") or [])) else "off"
    return f"{k.get('openblas') or '?'} / AVX-512 {npy} / {k.get('torch') or '-'}"


def run_compare(args: argparse.Namespace) -> int:
    if args.json and args.json != "-":
        validate_output_file(args.json, "--json", mkdir=args.mkdir)
    docs = [det.load_report(p) for p in args.reports]
    res = det.compare(docs, allow_different_inputs=args.allow_different_inputs)
    out = sys.stderr if args.json == "-" else sys.stdout
    for first, again in repeated_reports(docs):  # issue 35 §5: a report agrees with itself trivially
        print(f"lam-ref determinism compare: note: {again} is the same report as {first}; its runs are compared "
              "with themselves", file=sys.stderr)
    cols = ["report", "machine", "kernels", "device", "backend", "dtype", "threads", "batch_size", "threshold", "dropped", "deletion_digest",
            "map_digest", "at_risk"]
    print(table([[r[c] if r[c] is not None else "-" for c in cols] for r in res.rows],
                [c.replace("_", " ") for c in cols]), file=out)
    for g in res.groups:
        w = g["weights_sha256"][:12] if g["weights_sha256"] else "unknown"
        head = f"input {g['input_sha256'][:12]} weights {w} windows {g['windows']} t={g['threshold']}: {plural(g['runs'], 'run')}"
        if g["agree"]:
            print(f"{head}: one deletion digest, one map digest", file=out)
            continue
        print(f"{head}: DIGESTS DIFFER (reference {g['reference']})", file=out)
        for d in g["divergences"]:
            m = "none (no retained row before it)" if d["margin_cos"] is None else f"{d['margin_cos']:.3g} (cosine)"
            print(f"  {d['run']}: first diverging chunk {d['first_chunk']}, margin {m}, flagged at risk: "
                  f"{'yes' if d['at_risk'] else 'NO'}; {d['cascade']} later decisions differ (cascade)", file=out)
    if res.codec_mismatches:
        for c in res.codec_mismatches:
            print(f"codec bytes differ for identical embeddings at rel_eb {c['rel_eb']}: {c['a']} vs {c['b']}", file=out)
    else:
        print(f"codec: {res.codec_checked} repeated (embeddings, rel_eb) pairs, identical bytes", file=out)
    if args.json:
        write_json(res.to_json(), args.json)
    return 0 if res.agree else 1


def run_weights(args: argparse.Namespace) -> int:
    ident = det.make_weights_copy(args.out, encoder=args.encoder, dtype=args.dtype)
    size = sum(f["bytes"] for f in ident["files"])
    print(f"wrote {args.out} ({size / 2**20:.1f} MiB, weights stored as {args.dtype}); weights_sha256 {ident['weights_sha256']}")
    return 0
