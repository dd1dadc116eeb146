"""``lam-ref compact``: compact real agent trajectories (paper §2.2–2.3, Table 10; SPEC §3–8).

Streams the trajectories under ``PATH...`` one at a time (one trajectory's embeddings in memory),
prints one table row per trajectory and the totals, and optionally writes a JSON report, the
residual trajectories and their audit stores (``lam-ref restore`` turns those back into the
originals). A file that fails to load, or whose compaction fails, is reported with the file (and,
for load errors, the JSON path and the problem), and the run goes on with the other files (exit
status 1). Output paths are checked before anything is encoded. Where the trajectories carry
evidence (LoCoMo's QA items; gold patches with ``--gold``), the report says how much of it the
residual keeps, by the functions ``sweep`` measures with (:mod:`lam_ref.evidence`), and the run
prints the loader's warnings about LoCoMo evidence ids (issue 35 §4).
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
from typing import Any

from ..codec import DEFAULT_REL_EB
from ..distributed.trajectories import continues_run
from ..evidence import gold_key, load_gold
from ..geometry import LamValueError
from ..text.loaders import LoadFailure
from ..text.pipeline import (
    CompactionConfig,
    compact_trajectory,
    gold_evidence_json,
    result_summary,
    summarize,
)
from ..text.records import OBSERVATION, TrajectoryFormatError
from ..text.residuals import (
    ResidualWriter,
    as_written_total,
    claim_residual_dir,
    result_problems,
    written_problems,
)
from ..text.reuse import EncodingCache
from ._compact_report import (
    TABLE_LEGEND,
    finish_run,
    hashing_note,
    parse_layers,
    print_summary,
)
from ._dask import add_cluster_options, refuse_serial_only, run_compact, wants_cluster
from ._embeddings import EmbeddingSaver
from ._options import (
    add_gold,
    add_json,
    add_mkdir,
    add_save_embeddings,
    add_threshold,
    add_trajectory_run_options,
    compaction_config,
    run_encoder,
)
from ._paths import (
    reads,
    validate_json_dest,
    validate_output_dir,
    validate_output_file,
    writes,
)
from ._progress import RunProgress
from ._trajectories import plan_trajectory_files, planned_trajectories

#: The example each ``--help`` shows (``lam_ref.cli`` collects them from every command module).
EXAMPLES = {
    "compact": "lam-ref compact runs/ --residual-dir out/ --mkdir --json out/report.json --check",
}


def register(sub: argparse._SubParsersAction) -> argparse.ArgumentParser:
    p = sub.add_parser(
        "compact",
        help="compact agent trajectories (L1 near-duplicates, then L0 repeated lines)",
        description="Compact trajectories: SWE-agent .traj, mini-swe-agent .traj.json, LoCoMo, JSONL. "
                    "Exit status: 0 ok, 1 some inputs failed, 2 usage error or unusable input.",
        epilog=TABLE_LEGEND,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    reads(p.add_argument("paths", nargs="+", metavar="PATH", help="trajectory files or directories"), "paths")
    add_threshold(p)
    p.add_argument("--layers", default="l1,l0", help="layer order: l1,l0 (default), l0,l1, l1 or l0")
    add_json(p)
    writes(p.add_argument("--residual-dir", metavar="DIR", help="write <id>.residual.jsonl and <id>.audit.json here"),
           "folder")
    p.add_argument("--residual-format", choices=("jsonl", "native"), default="jsonl",
                   help="jsonl (default): <name>.residual.jsonl; native: also <name>.native.<suffix> in the "
                        "input's own format (.traj, .traj.json, LoCoMo .json, .jsonl), read back by the same loader")
    p.add_argument("--overwrite", action="store_true",
                   help="replace the residual files an earlier run left in --residual-dir (default: refused)")
    add_mkdir(p)
    add_save_embeddings(p)
    add_trajectory_run_options(p)
    add_gold(p)
    p.add_argument("--both-orders", action="store_true",
                   help="also run the other layer order (Table 12 ablation; L0->L1 encodes the L0 residual)")
    p.add_argument("--l2-rel-eb", type=float, default=DEFAULT_REL_EB, metavar="EB",
                   help=f"L2 codec relative error bound for the storage report of the retained embeddings "
                        f"(default {DEFAULT_REL_EB}, Table 20)")
    p.add_argument("--no-l2", action="store_true", help="skip the L2 storage report")
    p.add_argument("--check", action="store_true",
                   help="verify δ̂ <= δ, the audit round trip and the L2 error bound; exit 1 on failure")
    add_cluster_options(p, scope=True)
    p.set_defaults(func=run)
    return p


def run(args: argparse.Namespace) -> int:
    # everything that can be checked without the model is checked first (a bad input costs no load)
    config = compaction_config(args, threshold=args.threshold, layers=parse_layers(args.layers),
                               both_orders=args.both_orders, l2_rel_eb=None if args.no_l2 else args.l2_rel_eb)
    files = plan_trajectory_files(args.paths, args.format, "compact")
    validate_json_dest(args.json, mkdir=args.mkdir)
    if args.residual_dir:
        validate_output_dir(args.residual_dir, "--residual-dir", mkdir=args.mkdir)
    if args.save_embeddings:
        validate_output_file(args.save_embeddings, "--save-embeddings", mkdir=args.mkdir)
    if args.save_embeddings and not config.uses_encoder:
        raise LamValueError(f"--save-embeddings needs layer l1 (no windows are encoded with --layers {args.layers})")
    gold = load_gold(args.gold) if args.gold else None  # a bad --gold costs no encoder load either
    with contextlib.ExitStack() as stack:
        if args.residual_dir:  # one run at a time, and never silently over an earlier run's files (D11)
            stack.enter_context(claim_residual_dir(args.residual_dir, overwrite=args.overwrite,
                                                   resume=continues_run(getattr(args, "resume", None))))
        if wants_cluster(args):  # Dask: --workers / --scheduler / --resume / --scope corpus (docs/scale.md)
            refuse_serial_only(args, [("--gold", args.gold), ("--save-embeddings", args.save_embeddings),
                                      ("--embedding-cache", args.embedding_cache),
                                      ("--residual-format native", args.residual_format == "native")])
            return run_compact(args, config)
        return _run_serial(args, config, files, gold)


def _run_serial(args: argparse.Namespace, config: CompactionConfig, files: list, gold: dict[str, str] | None) -> int:
    encoder = run_encoder(args)
    if encoder.kind == "hashing":
        hashing_note()
    quiet = args.json == "-"
    out = sys.stderr if quiet else sys.stdout
    summaries: list[dict[str, Any]] = []
    failures: list[LoadFailure] = []
    problems: list[str] = []
    writer = ResidualWriter(args.residual_dir, native=args.residual_format == "native") if args.residual_dir else None
    saver = EmbeddingSaver(args.save_embeddings) if args.save_embeddings else None
    progress = RunProgress(len(files), enabled=not args.no_progress, desc="compact")
    reuse = EncodingCache(enabled=config.reuse)  # one per run: each distinct window text encoded once (SPEC §4.4)
    try:
        # the QA evidence compact reports (qa_evidence): the loader's warnings on its ids are said (issue 35 §4)
        for item in planned_trajectories(files, args.format, "compact", failures, progress, evidence_warnings=True):
            cache: dict[str, Any] = {}
            if not any(r.role == OBSERVATION and r.text.strip() for r in item.records):
                progress.write(f"lam-ref compact: warning: {item.id}: no observation text at all (nothing to "
                               "compact; the trajectory is kept as it is)")
            stage = "compaction"
            try:  # every step of one trajectory, its writes included (D7), fails alone
                res = compact_trajectory(item, encoder, config, cache=cache, reuse=reuse, on_batch=progress.encoding)
                stage = "writing its residual"
                apath = writer.write(res)[1] if writer is not None else None
            except (Exception, RecursionError) as exc:  # noqa: BLE001 - one trajectory must not sink a batch
                if os.environ.get("LAM_REF_DEBUG") == "1":
                    raise
                where = f" {exc.filename}:" if isinstance(exc, OSError) and exc.filename else ""
                failure = LoadFailure(TrajectoryFormatError(
                    item.path, "$", f"{stage} failed:{where} {type(exc).__name__}: {exc}"))
                failures.append(failure)
                progress.write(f"lam-ref compact: failed: {failure.error}")
                continue
            progress.note(windows=res.chunks, trajectories=1)
            if saver is not None and "orig" in cache:
                saver.add(item.id, cache["orig"])
            if args.check:
                problems.extend(result_problems(res))
                if apath is not None:
                    problems.extend(written_problems(apath, res))
            summaries.append(result_summary(res))
            if writer is not None and writer.native:  # SPEC §8.3: the removal of the file as written
                summaries[-1]["as_written"] = writer.last.get("as_written")
            key = gold_key(item, gold) if gold is not None else None
            if gold is not None and key is not None:  # --gold: the patch's evidence lines (App. F.3)
                summaries[-1]["evidence"] = gold_evidence_json(res, key, gold[key])
    finally:
        progress.close()
    if saver is not None:
        saver.save()
    total = summarize(summaries, config) if summaries else None
    if total is not None and writer is not None and writer.native:
        total["as_written"] = as_written_total([s.get("as_written") for s in summaries])
    if summaries:
        print_summary(out, summaries, total, config, encoder=encoder.describe(), l0_stubs=args.l0_stubs)
    report = {
        "config": config.to_json(),
        "encoder": encoder.describe(),
        "trajectories": [{k: v for k, v in s.items() if not k.startswith("_")} for s in summaries],
        "total": total,
        "failures": [f.to_json() for f in failures],
        "checks": {"run": bool(args.check), "problems": problems},
    }
    if gold is not None:
        report["gold_unmatched"] = sorted(set(gold) - {s["evidence"]["gold_key"] for s in summaries if s["evidence"]})
    if writer is not None:
        report["residual_files"] = writer.written
    if saver is not None:
        report["embeddings"] = saver.describe()
    return finish_run(report, args.json, done=len(summaries), failed=len(failures), problems=problems)
