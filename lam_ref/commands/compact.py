"""``lam-ref compact``: compact real agent trajectories (paper §2.2–2.3, Table 10; SPEC §3–8).

Streams the trajectories under ``PATH...`` one at a time (one trajectory's embeddings in memory),
prints one table row per trajectory and the totals, and optionally writes a JSON report, the
residual trajectories and their audit stores (``lam-ref restore`` turns those back into the
originals). A file that fails to load, or whose compaction fails, is reported with the file (and,
for load errors, the JSON path and the problem), and the run goes on with the other files (exit
status 1). Output paths are checked before anything is encoded.
"""

from __future__ import annotations

import argparse
import os
import re
import sys
from pathlib import Path
from typing import Any

from ..codec import DEFAULT_REL_EB
from ..distributed.cli import add_cluster_options, run_compact, wants_cluster
from ..geometry import LamValueError
from ..text.encoders import get_encoder
from ..text.loaders import LoadFailure
from ..text.pipeline import CompactionConfig, CompactionResult, compact_trajectory, result_summary, summarize
from ..text.records import TrajectoryFormatError
from ._common import (
    EmbeddingSaver,
    RunProgress,
    add_encoder,
    add_format,
    add_json,
    add_mkdir,
    add_progress,
    add_save_embeddings,
    add_threshold,
    check_batch_size,
    check_json_dest,
    check_output_dir,
    check_output_file,
    plan_trajectory_files,
    planned_trajectories,
    table,
    write_json,
    write_jsonl,
)
from .restore import AUDIT_SUFFIX, RESIDUAL_SUFFIX, restore_one

TABLE_HEADER = ["trajectory", "obs", "chunks", "kept", "tokens", "gross", "net", "L1", "L0", "δ̂", "trunc", "L2",
                "deletion"]

#: What each column of the compact table means (``lam-ref compact --help`` and the docs show it).
TABLE_LEGEND = """table columns (one row per trajectory, then TOTAL over all of them):
  trajectory  id: path relative to the folder given, suffix removed (long ids keep both ends)
  obs         observation records (the only compacted role)
  chunks      512-token cl100k windows of the observations (L1's units)
  kept        windows L1 retained (the others became L1 stubs naming their representative)
  tokens      cl100k tokens of the original observations
  gross       removal with stub lines not counted: 1 - residual/original
  net         removal with stub lines counted (what a model reads)
  L1, L0      net removal of each layer run alone on the originals
  δ̂           largest merge distance (0 if nothing merged); always <= δ = sqrt(2 - 2t)
  trunc       windows longer than the encoder's input limit / all windows
  L2          storage ratio of the retained embeddings under the L2 codec (--l2-rel-eb)
  deletion    digest of the deleted window ids (first 16 hex of SHA-256; docs: spec §10)
exit status: 0 ok, 1 some inputs failed or --check failed, 2 usage error or unusable input"""

L0_STUB_RULES = ("net-positive", "paper")


def parse_layers(text: str) -> tuple[str, ...]:
    """``"l1,l0"`` → ``("l1", "l0")`` (validated by :class:`CompactionConfig`)."""
    parts = tuple(p.strip().lower() for p in str(text).split(",") if p.strip())
    if not parts:
        raise LamValueError(f"--layers must list l1 and/or l0 separated by commas, got {text!r}")
    return parts


def _pct(x: float | None) -> str:
    return "—" if x is None else f"{100.0 * x:.2f}%"


def short_id(tid: str, width: int) -> str:
    """``tid`` in at most ``width`` characters, both ends kept (ids often differ in the middle)."""
    if len(tid) <= width:
        return tid
    head = (width - 1) // 2
    return tid[:head] + "…" + tid[-(width - 1 - head) :]


def display_ids(ids: list[str], width: int = 44) -> list[str]:
    """Table labels for ``ids`` (one per row): each id in at most ``width`` characters (both ends
    kept); ids whose labels would coincide drop their common prefix (``…`` + the rest), widening
    only if needed; a repeated id (the same task in two folders) gets `` (2)``, `` (3)``, ..."""
    labels = {t: short_id(t, width) for t in ids}
    groups: dict[str, list[str]] = {}
    for t in dict.fromkeys(ids):
        groups.setdefault(labels[t], []).append(t)
    for group in (g for g in groups.values() if len(g) > 1):
        cut = len(os.path.commonprefix(group))
        w = width
        while True:
            forms = {t: "…" + short_id(t[cut:], w - 1) for t in group}
            if len(set(forms.values())) == len(group) or w >= max(map(len, group)):
                break
            w += 4
        labels.update(forms)
    seen: dict[str, int] = {}
    out = []
    for t in ids:
        seen[t] = seen.get(t, 0) + 1
        out.append(labels[t] if seen[t] == 1 else f"{labels[t]} ({seen[t]})")
    return out


def table_row(s: dict[str, Any], label: str | None = None, width: int = 44) -> list[Any]:
    """One row of the compact table from a per-trajectory (or total) report dict."""
    tid = label if label is not None else short_id(str(s["id"]), width)
    l2 = s.get("l2")
    return [
        tid,
        s["observation_records"],
        s["chunks"],
        s["kept_chunks"],
        s["tokens_original"],
        _pct(s["removal_gross"]),
        _pct(s["removal_net"]),
        _pct(s.get("l1_removal")),
        _pct(s.get("l0_removal")),
        f"{s['delta_hat']:.4f}",
        f"{s['truncated_windows']}/{s['chunks']}",
        "—" if not l2 or l2.get("ratio") is None else f"{l2['ratio']:.2f}×",
        s["deletion_digest"],
    ]


def safe_name(traj_id: str) -> str:
    """A file name for a trajectory id (path separators and odd characters replaced)."""
    return re.sub(r"[^A-Za-z0-9._-]+", "__", traj_id).strip("_") or "trajectory"


class ResidualWriter:
    """Writes ``<name>.residual.jsonl`` and ``<name>.audit.json`` per trajectory into one folder
    (the folder exists: the command checked or created it), and with ``native`` also
    ``<name>.native.<suffix>``, the residual in the input's own format (:mod:`lam_ref.text.native`).

    Names come from :func:`safe_name`; a name already used in this run gets ``~2``, ``~3``, ... so
    two inputs with the same id (the same task in two folders) never overwrite each other's audit
    store. :attr:`written` maps each name to its trajectory's id and source path (the JSON report
    lists it)."""

    def __init__(self, directory: str | Path, *, native: bool = False) -> None:
        self.directory = Path(directory)
        self.native = native
        self.written: dict[str, dict[str, str]] = {}

    def name_for(self, traj_id: str) -> str:
        base = safe_name(traj_id)
        name, k = base, 1
        while name in self.written:
            k += 1
            name = f"{base}~{k}"
        return name

    def write(self, res: CompactionResult) -> tuple[Path, Path]:
        name = self.name_for(res.trajectory.id)
        rpath = write_jsonl(self.directory / f"{name}{RESIDUAL_SUFFIX}", (r.to_json() for r in res.residual_records()))
        apath = res.audit.save(self.directory / f"{name}{AUDIT_SUFFIX}")
        self.written[name] = {"id": res.trajectory.id, "path": res.trajectory.path,
                              "residual": rpath.name, "audit": apath.name}
        if self.native:
            from ..text.native import write_native

            npath = write_native(self.directory / name, res.trajectory, res.residual_texts)
            self.written[name]["native"] = npath.name
        return rpath, apath


def check_result(res: CompactionResult) -> list[str]:
    """Problems found by ``--check``: ``δ̂ > δ`` (THM1), an audit round trip that fails (SPEC §8), or
    an L2 reconstruction outside its error bound (SPEC §9)."""
    problems = []
    if not res.delta_hat <= res.config.delta:
        problems.append(f"{res.trajectory.id}: δ̂ = {res.delta_hat!r} exceeds δ = {res.config.delta!r}")
    if res.l2 is not None and not res.l2.bound_holds:
        problems.append(f"{res.trajectory.id}: L2 max error {res.l2.max_abs_error!r} exceeds eb = {res.l2.eb!r}")
    try:
        restored = res.restore()
    except LamValueError as exc:
        problems.append(f"{res.trajectory.id}: audit round trip failed: {exc}")
    else:
        originals = [r.text for r in res.trajectory.records]
        if restored != originals:
            bad = next(i for i, (a, b) in enumerate(zip(restored, originals)) if a != b)
            problems.append(f"{res.trajectory.id}: audit restores record {bad} wrongly")
    return problems


def check_written(audit_path: Path, res: CompactionResult) -> list[str]:
    """``--check`` with ``--residual-dir``: the files as written (read back, as ``lam-ref restore``
    reads them) give every original record, all fields, not just the in-memory round trip."""
    try:
        records, _ = restore_one(audit_path)
    except LamValueError as exc:
        return [f"{res.trajectory.id}: the written audit files do not restore: {exc}"]
    originals = [r.to_json() for r in res.trajectory.records]
    if records != originals:
        bad = next((i for i, (a, b) in enumerate(zip(records, originals)) if a != b), min(len(records), len(originals)))
        return [f"{res.trajectory.id}: record {bad} restored from {audit_path.name} differs from the original"]
    return []


def register(sub: argparse._SubParsersAction) -> argparse.ArgumentParser:
    p = sub.add_parser(
        "compact",
        help="compact agent trajectories (L1 near-duplicates, then L0 repeated lines)",
        description="Compact trajectories: SWE-agent .traj, mini-swe-agent .traj.json, LoCoMo, JSONL. "
                    "Exit status: 0 ok, 1 some inputs failed, 2 usage error or unusable input.",
        epilog=TABLE_LEGEND,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("paths", nargs="+", metavar="PATH", help="trajectory files or directories")
    add_threshold(p)
    add_encoder(p)
    p.add_argument("--layers", default="l1,l0", help="layer order: l1,l0 (default), l0,l1, l1 or l0")
    add_format(p)
    add_json(p)
    p.add_argument("--residual-dir", metavar="DIR", help="write <id>.residual.jsonl and <id>.audit.json here")
    p.add_argument("--residual-format", choices=("jsonl", "native"), default="jsonl",
                   help="jsonl (default): <name>.residual.jsonl; native: also <name>.native.<suffix> in the "
                        "input's own format (.traj, .traj.json, LoCoMo .json, .jsonl), read back by the same loader")
    add_mkdir(p)
    add_save_embeddings(p)
    p.add_argument("--device", help="encoder device (cpu, cuda, ...; default: the library's choice)")
    p.add_argument("--window", type=int, default=512, help="window size in cl100k tokens (default 512)")
    p.add_argument("--driver", choices=("online", "batch"), default="online",
                   help="L1 driver: Algorithm 1 turn by turn (default) or Algorithm 2")
    p.add_argument("--exhaustive", action="store_true", help="exhaustive candidate search (equals the oracle)")
    p.add_argument("--both-orders", action="store_true",
                   help="also run the other layer order (Table 12 ablation; L0->L1 encodes the L0 residual)")
    p.add_argument("--l0-stubs", choices=L0_STUB_RULES, default="net-positive",
                   help="net-positive (default): a run of repeated lines becomes a stub only when the stub is "
                        "shorter in bytes; paper: every run becomes a stub")
    p.add_argument("--l2-rel-eb", type=float, default=DEFAULT_REL_EB, metavar="EB",
                   help=f"L2 codec relative error bound for the storage report of the retained embeddings "
                        f"(default {DEFAULT_REL_EB}, Table 20)")
    p.add_argument("--no-l2", action="store_true", help="skip the L2 storage report")
    p.add_argument("--check", action="store_true",
                   help="verify δ̂ <= δ, the audit round trip and the L2 error bound; exit 1 on failure")
    add_progress(p)
    add_cluster_options(p, scope=True)
    p.set_defaults(func=run)
    return p


def run(args: argparse.Namespace) -> int:
    # everything that can be checked without the model is checked first (a bad input costs no load)
    config = CompactionConfig(
        threshold=args.threshold,
        layers=parse_layers(args.layers),
        window=args.window,
        batch_size=check_batch_size(args.batch_size),
        driver=args.driver,
        exhaustive=args.exhaustive,
        both_orders=args.both_orders,
        l2_rel_eb=None if args.no_l2 else args.l2_rel_eb,
        l0_net_positive=args.l0_stubs == "net-positive",
    )
    files = plan_trajectory_files(args.paths, args.format)
    check_json_dest(args.json, mkdir=args.mkdir)
    if args.residual_dir:
        check_output_dir(args.residual_dir, "--residual-dir", mkdir=args.mkdir)
    if args.save_embeddings:
        check_output_file(args.save_embeddings, "--save-embeddings", mkdir=args.mkdir)
    if args.save_embeddings and not config.uses_encoder:
        raise LamValueError(f"--save-embeddings needs layer l1 (no windows are encoded with --layers {args.layers})")
    if wants_cluster(args):  # Dask: --workers / --scheduler / --resume / --scope corpus (docs/scale.md)
        for flag, given in (("--save-embeddings", args.save_embeddings), ("--residual-format native", args.residual_format == "native")):
            if given:
                raise LamValueError(f"{flag} runs serially only; drop it or drop --workers/--scheduler")
        return run_compact(args, config)
    encoder = get_encoder(args.encoder, args.device)
    if encoder.kind == "hashing":
        print("lam-ref compact: note: the hashing encoder is for tests; thresholds and removal are not "
              "comparable to a real encoder's", file=sys.stderr)
    quiet = args.json == "-"
    out = sys.stderr if quiet else sys.stdout
    summaries: list[dict[str, Any]] = []
    failures: list[LoadFailure] = []
    problems: list[str] = []
    writer = ResidualWriter(args.residual_dir, native=args.residual_format == "native") if args.residual_dir else None
    saver = EmbeddingSaver(args.save_embeddings) if args.save_embeddings else None
    progress = RunProgress(len(files), enabled=not args.no_progress, desc="compact")
    try:
        for item in planned_trajectories(files, args.format, "compact", failures, progress):
            cache: dict[str, Any] = {}
            try:
                res = compact_trajectory(item, encoder, config, cache=cache)
            except Exception as exc:  # noqa: BLE001 - one trajectory must not sink a batch
                if os.environ.get("LAM_REF_DEBUG") == "1":
                    raise
                failure = LoadFailure(TrajectoryFormatError(item.path, "$", f"compaction failed: {type(exc).__name__}: {exc}"))
                failures.append(failure)
                progress.write(f"lam-ref compact: failed: {failure.error}")
                continue
            progress.note(windows=res.chunks, trajectories=1)
            if saver is not None and "orig" in cache:
                saver.add(item.id, cache["orig"])
            if args.check:
                problems.extend(check_result(res))
            if writer is not None:
                _, apath = writer.write(res)
                if args.check:
                    problems.extend(check_written(apath, res))
            summaries.append(result_summary(res))
    finally:
        progress.close()
    if saver is not None:
        saver.save()
    total = summarize(summaries, config) if summaries else None
    if summaries:
        labels = display_ids([str(s["id"]) for s in summaries])
        rows = [table_row(s, label) for s, label in zip(summaries, labels)] + [table_row(total)]
        print(table(rows, TABLE_HEADER), file=out)
        print(
            f"encoder {encoder.name} (D={encoder.dim}), threshold t={config.threshold} (δ={config.delta:.4f}), "
            f"layers {total['layers']}, L0 stubs {args.l0_stubs}; removal net {_pct(total['removal_net'])}, "
            f"gross {_pct(total['removal_gross'])}, stub cost {_pct(total.get('stub_cost'))}; "
            f"map digest {total['map_digest']}",
            file=out,
        )
        print("columns: see `lam-ref compact --help` (legend)", file=out)
    if failures:
        print(f"lam-ref compact: {len(failures)} of {len(failures) + len(summaries)} inputs failed", file=sys.stderr)
    for prob in problems:
        print(f"lam-ref compact: check failed: {prob}", file=sys.stderr)
    if args.json:
        report = {
            "config": config.to_json(),
            "encoder": encoder.describe(),
            "trajectories": [{k: v for k, v in s.items() if not k.startswith("_")} for s in summaries],
            "total": total,
            "failures": [f.to_json() for f in failures],
            "checks": {"run": bool(args.check), "problems": problems},
        }
        if writer is not None:
            report["residual_files"] = writer.written
        if saver is not None:
            report["embeddings"] = saver.describe()
        write_json(report, args.json)
    if not summaries and not failures:
        print("lam-ref compact: no trajectories found", file=sys.stderr)
        return 1
    return 1 if (failures or problems) else 0
