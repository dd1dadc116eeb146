"""``lam-ref sweep``: merge-threshold sweep over real trajectories (paper Table 3, Table 11,
Tables 14 and 17; SPEC §12).

Each trajectory is loaded, chunked and encoded **once**; every threshold then reruns only L1 and
L0 on the cached embeddings (one trajectory in memory at a time). Every argument is validated
before the encoder loads (errors are :class:`~lam_ref.geometry.LamValueError` naming the
argument and the value). Rows, one per threshold:

* over **all** loaded trajectories: ``t``, ``δ``, mean ``δ̂/δ`` over trajectories with a merge,
  keep (retained-window fraction), recall@k of retrieval after substitution (App. F.2), net and
  gross token removal, the token-weighted median/p99 merge distance (Table 11);
* with ``--gold``: evidence retention, exact (App. F.3) and relaxed (App. F.4; micro, lines lost,
  intact trajectories), and ``ECR@τ`` over the swept thresholds (eq. 8, Table 17). Evidence and
  ``ρ`` of each operating point are over **the same set**, the trajectories with at least one
  witnessed evidence line (Table 14: 598 of the 600 gold-matched trajectories; its removal column,
  22.47% at ``cos >= 0.95``, is over those 598, against 22.50% over all 600 in Table 15). The
  removal over all trajectories with a gold patch is reported too (``evidence.gold_set``).
  ``ECR@τ`` uses exact retention and exact rational ``τ`` (:func:`lam_ref.metrics.ecr_at`).
* over the trajectories with LoCoMo QA items: ``qa_evidence``, the evidence turns their questions
  name that the residual still holds verbatim (:func:`lam_ref.evidence.qa_evidence_retention`,
  pooled; ``lam-ref compact`` reports the same per trajectory and in its TOTAL).

Recall@k queries (App. F.2) are the trajectory's own action/assistant texts; a trajectory with
none but with LoCoMo QA items (``meta["qa"]``) uses the QA questions instead. For QA items the
sweep also reports an **evidence hit rate**: the share of questions (with at least one chunk of an
evidence dialogue turn) for which some evidence chunk is in the top-k of the full index, and after
substitution (top-k over the kept chunks, each deleted chunk standing for its representative
``π``; :func:`lam_ref.metrics.evidence_hits_at_k`). All other metric arithmetic is :mod:`lam_ref.metrics`.

``--gold`` takes a JSON object ``{id: patch}``, a JSON object or array of SWE-bench style records
``{"instance_id": str, "patch": str, ...}``, a JSONL file of such records, or a directory of
``<id>.patch`` / ``<id>.diff`` files; the gold patches and the evidence arithmetic are
:mod:`lam_ref.evidence` (formats and matching in its docstring).
"""

from __future__ import annotations

import argparse
import functools
import sys
from typing import Any

from .. import metrics as M
from .._io import write_json
from ..distributed.files import map_files
from ..evidence import gold_digest, load_gold
from ..geometry import LamValueError, validate_threshold
from ..metrics import validate_taus
from ..sweep import (
    SET_NOTES,
    Sweep,
    SweepPlan,
    contribution_from_json,
    measure_trajectory,
    sweep_file,
)
from ..tables import pct, plural, table
from ..text.encoders import get_encoder
from ..text.loaders import LoadFailure
from ..text.reuse import EncodingCache
from ._compact_report import evidence_cell, parse_layers
from ._dask import (
    add_cluster_options,
    backend_setting,
    file_run,
    prepare_backend,
    refuse_serial_only,
    wants_cluster,
)
from ._embeddings import EmbeddingSaver
from ._lines import backend_note, reuse_line
from ._options import (
    add_gold,
    add_json,
    add_mkdir,
    add_save_embeddings,
    add_trajectory_run_options,
    compaction_config,
    run_encoder,
)
from ._paths import reads, validate_json_dest, validate_output_file
from ._progress import RunProgress
from ._trajectories import plan_trajectory_files, planned_trajectories

#: The example each ``--help`` shows (``lam_ref.cli`` collects them from every command module).
EXAMPLES = {
    "sweep": "lam-ref sweep runs/ -t 0.90 0.95 0.99 --json sweep.json",
}


def register(sub: argparse._SubParsersAction) -> argparse.ArgumentParser:
    p = sub.add_parser("sweep", help="merge-threshold sweep over trajectories (Table 3, 11, 14, 17)",
                       description="Merge-threshold sweep over trajectories. "
                                   "Exit status: 0 ok, 1 some inputs failed, 2 usage error or unusable input.")
    reads(p.add_argument("paths", nargs="+", metavar="PATH", help="trajectory files or directories"), "paths")
    p.add_argument("--thresholds", "-t", type=float, nargs="+", default=[0.99, 0.98, 0.96, 0.95, 0.90],
                   help="cosine thresholds in [-1, 1] (default: Table 3's 0.99 0.98 0.96 0.95 0.90)")
    p.add_argument("--layers", default="l1,l0", help="layer order (default l1,l0)")
    add_gold(p)
    p.add_argument("--taus", type=str, nargs="+", default=["1.0", "0.999", "0.99", "0.95"],
                   help="retention floors τ in [0, 1] for ECR@τ, exact (0.999 or 999/1000; default 1.0 0.999 0.99 0.95)")
    p.add_argument("--recall-k", type=int, default=10,
                   help="k of recall@k and of the QA evidence hit rate (default 10; 0 to skip)")
    add_trajectory_run_options(p)
    add_json(p, "rows")
    add_mkdir(p)
    add_save_embeddings(p)
    add_cluster_options(p, tile=False)
    p.set_defaults(func=run)
    return p


def validate_args(args: argparse.Namespace) -> SweepPlan:
    """Check every argument before anything is encoded; errors name the argument and the value."""
    thresholds = list(dict.fromkeys(validate_threshold(t, "--thresholds") for t in args.thresholds))
    taus = validate_taus(args.taus)
    if isinstance(args.recall_k, bool) or not isinstance(args.recall_k, int) or args.recall_k < 0:
        raise LamValueError(f"--recall-k must be an integer >= 0 (0 skips retrieval), got {args.recall_k!r}")
    try:
        layers = parse_layers(args.layers)
    except LamValueError as exc:
        raise LamValueError(f"--layers must be l1,l0, l0,l1, l1 or l0, got {args.layers!r} ({exc})") from exc
    compaction_config(args)  # the shared options alone: an error names the option (--batch-size, --window, ...)
    try:
        configs = [compaction_config(args, threshold=t, layers=layers, per_layer=False) for t in thresholds]
    except LamValueError as exc:
        raise LamValueError(f"--layers must be l1,l0, l0,l1, l1 or l0, got {args.layers!r} ({exc})") from exc
    files = plan_trajectory_files(args.paths, args.format, "sweep")
    mkdir = getattr(args, "mkdir", False)
    validate_json_dest(args.json, mkdir=mkdir)
    if getattr(args, "save_embeddings", None):
        validate_output_file(args.save_embeddings, "--save-embeddings", mkdir=mkdir)
        if "l1" not in layers:
            raise LamValueError(f"--save-embeddings needs layer l1 (no windows are encoded with --layers {args.layers})")
    gold = load_gold(args.gold) if args.gold else None
    return SweepPlan(layers, configs, taus, args.recall_k, gold, files)


def run(args: argparse.Namespace) -> int:
    plan = validate_args(args)
    if wants_cluster(args):  # Dask: --workers / --scheduler / --resume (docs/scale.md)
        refuse_serial_only(args, [("--save-embeddings", getattr(args, "save_embeddings", None)),
                                  ("--embedding-cache", args.embedding_cache)])
        return _run_dask(args, plan)
    encoder = run_encoder(args)
    sweep = Sweep(plan)
    failures: list[LoadFailure] = []
    saver = EmbeddingSaver(args.save_embeddings) if getattr(args, "save_embeddings", None) else None
    progress = RunProgress(len(plan.files), enabled=not args.no_progress, desc="sweep")
    reuse = EncodingCache(enabled=not args.no_reuse)  # one per run (SPEC §4.4)
    for item in planned_trajectories(plan.files, args.format, "sweep", failures, progress,
                                     evidence_warnings=True):  # qa_evidence (and the hit rate) use them
        c = measure_trajectory(item, encoder, plan, args.batch_size, plan.gold, reuse, progress.encoding)
        progress.note(windows=c["windows"], trajectories=1)
        if saver is not None and c["orig"] is not None:
            saver.add(item.id, c["orig"])
        sweep.add(c)
    progress.close()
    if saver is not None:
        saver.save()
    return report(args, sweep, encoder.describe(), [f.to_json() for f in failures],
                  embeddings=saver.describe() if saver is not None else None)


def report(args: argparse.Namespace, sweep: Sweep, encoder: dict[str, Any], failures: list[dict[str, str]], *,
           embeddings: Any = None, extra: dict[str, Any] | None = None) -> int:
    """Print the table and write the JSON report of a finished fold (serial or Dask); the exit status."""
    plan, k, gold, n_traj = sweep.plan, sweep.plan.recall_k, sweep.plan.gold, sweep.n_traj
    gold_idx, ev_idx, gold_used = sweep.gold_idx, sweep.ev_idx, sweep.gold_used
    rows_json = sweep.rows()
    ecr = sweep.ecr(rows_json)
    out = sys.stderr if args.json == "-" else sys.stdout
    if rows_json:
        header, rows = _table(rows_json, k, gold is not None)
        print(table(rows, header), file=out)
        print(f"encoder {encoder['name']}{backend_note(encoder)}, layers {'->'.join(x.upper() for x in plan.layers)}, {plural(n_traj)}", file=out)
        print(reuse_line(sweep.encoding, plan.configs[0].reuse), file=out)
        if any(r.get("evidence_hit") for r in rows_json):
            hit = next(r["evidence_hit"] for r in rows_json if r.get("evidence_hit"))
            print(f"QA evidence hit@{k} over {hit['questions']} questions with evidence: full index, and kept "
                  "chunks with each deleted chunk standing for its representative", file=out)
    if gold is not None:
        print(f"evidence over the {plural(len(ev_idx))} with witnessed evidence "
              f"({len(gold_idx)} with a gold patch, {n_traj} loaded); "
              "ECR@τ (max net removal over that set with exact micro retention >= τ): "
              + ", ".join(f"τ={s}: {M.format_ecr(v)}" for s, v in ecr.items()), file=out)
        if n_traj > len(gold_idx):
            print(f"lam-ref sweep: {plural(n_traj - len(gold_idx))} without a gold patch "
                  "(not in the evidence columns or ECR@τ)", file=sys.stderr)
        unused = sorted(set(gold) - gold_used)
        if unused:
            print(f"lam-ref sweep: {len(unused)} gold id(s) match no trajectory (ids are matched by trajectory id, "
                  f"its last path component, or without ':sample'): "
                  + ", ".join(repr(x) for x in unused[:5]) + (" ..." if len(unused) > 5 else ""), file=sys.stderr)
    if args.json:
        write_json({
            "encoder": encoder,
            "layers": list(plan.layers),
            "rows": rows_json,
            "ecr": ecr,
            "ecr_over": "evidence",
            "sets": {
                "all": {"trajectories": n_traj, "covers": SET_NOTES["all"]},
                "gold": {"trajectories": len(gold_idx) if gold is not None else None, "covers": SET_NOTES["gold"]},
                "evidence": {"trajectories": len(ev_idx) if gold is not None else None,
                             "covers": SET_NOTES["evidence"]},
            },
            "recall_queries": sweep.query_counts,
            "encoding": {**sweep.encoding, "reuse": plan.configs[0].to_json()["reuse"] if plan.configs else None},
            "gold_unmatched": sorted(set(gold) - gold_used) if gold is not None else None,
            "failures": failures,
            "embeddings": embeddings,
        } | (extra or {}), args.json)
    if n_traj == 0 and not failures:
        print("lam-ref sweep: no trajectories found", file=sys.stderr)
        return 1
    return 1 if failures else 0


def _run_dask(args: argparse.Namespace, plan: SweepPlan) -> int:
    """``lam-ref sweep --workers N | --scheduler ADDRESS | --resume DIR`` (docs/scale.md): one Dask
    task per input file (:func:`sweep_file`, the serial :func:`measure_trajectory` on each of its
    trajectories) through the per-file run of :func:`~lam_ref.commands._dask.file_run`
    (:mod:`lam_ref.distributed.files`); it folds the contributions in input order with the serial
    fold and writes the serial report."""
    import dataclasses

    from ..distributed.cluster import ClusterSpec

    spec = ClusterSpec(args.workers, args.scheduler)
    prepare_backend(args)
    gold_sha = gold_digest(plan.gold) if plan.gold is not None else None
    cfg = {k: v for k, v in plan.configs[0].to_json().items() if k not in ("threshold", "delta")}
    settings = {"command": "sweep", "thresholds": [c.threshold for c in plan.configs], "config": cfg,
                "recall_k": plan.recall_k, "encoder": args.encoder, "device": args.device, "format": args.format,
                "gold_sha256": gold_sha, **backend_setting(args)}
    with file_run(args, "sweep", settings) as run:
        fn = functools.partial(sweep_file, fmt=args.format, encoder_name=args.encoder, device=args.device,
                               backend=args.encoder_backend,
                               plan=dataclasses.replace(plan, gold=None, files=[]), batch_size=args.batch_size,
                               gold_path=args.gold, gold_sha256=gold_sha, run_dir=run.run_dir)
        errors = map_files(run, spec, fn, show=not args.no_progress, desc="sweep")
        sweep, encoder = Sweep(plan), None
        for _k, _path, rec in run.records(errors):
            if rec is not None:
                encoder = encoder or rec["encoder"]
                for c in rec["contributions"]:
                    sweep.add(contribution_from_json(c))
    if encoder is None:  # no file gave an output: describe the encoder as the serial command does
        encoder = get_encoder(args.encoder, args.device, args.encoder_backend).describe()
    rc = report(args, sweep, encoder, run.failures, extra={"distributed": run.describe(spec)})
    print(f"{len(run.files)} files ({run.where(spec)})", file=run.out)
    return rc


def _table(rows_json: list[dict[str, Any]], k: int, with_gold: bool) -> tuple[list[str], list[list[Any]]]:
    hits = any(r["evidence_hit"] for r in rows_json)
    qa = any(r.get("qa_evidence") for r in rows_json)
    header = ["t", "δ", "mean δ̂/δ", "keep", f"R@{k}", "removed (net)", "median d", "p99 d"]
    if hits:
        header += [f"hit@{k} full", f"hit@{k} subst"]
    if qa:
        header += ["QA evidence"]
    if with_gold:
        header += ["removed (ev. set)", "evidence", "lost", "intact", "relaxed", "relaxed lost"]
    rows = []
    for r in rows_json:
        md = r["merge_distances"]
        rec = r[f"recall_at_{k}"]
        cells: list[Any] = [
            r["t"], f"{r['delta']:.4f}", f"{r['mean_delta_hat_over_delta']:.3f}", f"{r['keep']:.3f}",
            "—" if rec is None else f"{rec:.4f}",
            pct(r["removal_net"]),
            "—" if md["median"] is None else f"{md['median']:.4f}",
            "—" if md["p99"] is None else f"{md['p99']:.4f}",
        ]
        if hits:
            h = r["evidence_hit"]
            cells += ["—", "—"] if h is None else [f"{h['full']:.4f}", f"{h['substituted']:.4f}"]
        if qa:
            cells.append(evidence_cell(r["qa_evidence"]))
        if with_gold:
            ev = r["evidence"]
            none = ev["micro"] is None
            cells += [pct(ev["removal_net"]), pct(ev["micro"], 3), "—" if none else ev["lost"],
                      pct(ev["macro_intact"], 1), pct(ev["relaxed"]["micro"], 3),
                      "—" if none else ev["relaxed"]["lost"]]
        rows.append(cells)
    return header, rows
