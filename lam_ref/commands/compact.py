"""``lam-ref compact``: compact real agent trajectories (paper §2.2–2.3, Table 10; SPEC §3–8).

Streams the trajectories under ``PATH...`` one at a time (one trajectory's embeddings in memory),
prints one table row per trajectory and the totals, and optionally writes a JSON report, the
residual trajectories and their audit stores. A file that fails to load is reported with the
file, the JSON path and the problem, and the run goes on with the other files (exit status 1).
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path
from typing import Any

from ..geometry import LamValueError
from ..text.encoders import DEFAULT_BATCH_SIZE, DEFAULT_ENCODER, get_encoder
from ..text.loaders import FORMATS, LoadFailure
from ..text.pipeline import CompactionConfig, CompactionResult, compact_trajectory, result_summary, summarize
from ._common import loaded_trajectories, table, write_json

TABLE_HEADER = ["trajectory", "obs", "chunks", "kept", "tokens", "gross", "net", "L1", "L0", "δ̂", "trunc", "deletion"]


def parse_layers(text: str) -> tuple[str, ...]:
    """``"l1,l0"`` → ``("l1", "l0")`` (validated by :class:`CompactionConfig`)."""
    parts = tuple(p.strip().lower() for p in str(text).split(",") if p.strip())
    if not parts:
        raise LamValueError(f"--layers must list l1 and/or l0 separated by commas, got {text!r}")
    return parts


def _pct(x: float | None) -> str:
    return "—" if x is None else f"{100.0 * x:.2f}%"


def table_row(s: dict[str, Any], width: int = 44) -> list[Any]:
    """One row of the compact table from a per-trajectory (or total) report dict."""
    tid = str(s["id"])
    if len(tid) > width:
        tid = "…" + tid[-(width - 1) :]
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
        s["deletion_digest"],
    ]


def safe_name(traj_id: str) -> str:
    """A file name for a trajectory id (path separators and odd characters replaced)."""
    return re.sub(r"[^A-Za-z0-9._-]+", "__", traj_id).strip("_") or "trajectory"


def write_residual(res: CompactionResult, directory: str | Path) -> tuple[Path, Path]:
    """``<id>.residual.jsonl`` (one record per line) and ``<id>.audit.json`` under ``directory``."""
    d = Path(directory)
    d.mkdir(parents=True, exist_ok=True)
    name = safe_name(res.trajectory.id)
    rpath = d / f"{name}.residual.jsonl"
    tmp = rpath.with_suffix(".jsonl.tmp")
    with open(tmp, "w", encoding="utf-8") as fh:
        for rec in res.residual_records():
            fh.write(json.dumps(rec.to_json(), ensure_ascii=False) + "\n")
    tmp.replace(rpath)
    apath = res.audit.save(d / f"{name}.audit.json")
    return rpath, apath


def check_result(res: CompactionResult) -> list[str]:
    """Problems found by ``--check``: ``δ̂ > δ`` (THM1) or an audit round trip that fails (SPEC §8)."""
    problems = []
    if not res.delta_hat <= res.config.delta:
        problems.append(f"{res.trajectory.id}: δ̂ = {res.delta_hat!r} exceeds δ = {res.config.delta!r}")
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


def register(sub: argparse._SubParsersAction) -> argparse.ArgumentParser:
    p = sub.add_parser(
        "compact",
        help="compact agent trajectories (L1 near-duplicates, then L0 repeated lines)",
        description="Compact trajectories: SWE-agent .traj, mini-swe-agent .traj.json, LoCoMo, JSONL.",
    )
    p.add_argument("paths", nargs="+", metavar="PATH", help="trajectory files or directories")
    p.add_argument("--threshold", "-t", type=float, default=0.95, help="cosine merge threshold t (default 0.95)")
    p.add_argument("--encoder", default=DEFAULT_ENCODER,
                   help=f"sentence-transformers name or path, or 'hash' (tests only); default {DEFAULT_ENCODER}")
    p.add_argument("--layers", default="l1,l0", help="layer order: l1,l0 (default), l0,l1, l1 or l0")
    p.add_argument("--format", choices=FORMATS, help="loader (default: detect per file)")
    p.add_argument("--json", metavar="OUT", help="write the report as JSON (- for stdout)")
    p.add_argument("--residual-dir", metavar="DIR", help="write <id>.residual.jsonl and <id>.audit.json here")
    p.add_argument("--device", help="encoder device (cpu, cuda, ...; default: the library's choice)")
    p.add_argument("--batch-size", type=int, default=DEFAULT_BATCH_SIZE, help="encoding batch size (default 64)")
    p.add_argument("--window", type=int, default=512, help="window size in cl100k tokens (default 512)")
    p.add_argument("--driver", choices=("online", "batch"), default="online",
                   help="L1 driver: Algorithm 1 turn by turn (default) or Algorithm 2")
    p.add_argument("--exhaustive", action="store_true", help="exhaustive candidate search (equals the oracle)")
    p.add_argument("--both-orders", action="store_true",
                   help="also run the other layer order (Table 12 ablation; L0->L1 encodes the L0 residual)")
    p.add_argument("--check", action="store_true", help="verify δ̂ <= δ and the audit round trip; exit 1 on failure")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.set_defaults(func=run)
    return p


def run(args: argparse.Namespace) -> int:
    config = CompactionConfig(
        threshold=args.threshold,
        layers=parse_layers(args.layers),
        window=args.window,
        batch_size=args.batch_size,
        driver=args.driver,
        exhaustive=args.exhaustive,
        both_orders=args.both_orders,
    )
    encoder = get_encoder(args.encoder, args.device)
    if encoder.kind == "hashing":
        print("lam-ref compact: note: the hashing encoder is for tests; thresholds and removal are not "
              "comparable to a real encoder's", file=sys.stderr)
    quiet = args.json == "-"
    out = sys.stderr if quiet else sys.stdout
    summaries: list[dict[str, Any]] = []
    failures: list[LoadFailure] = []
    problems: list[str] = []
    for item in loaded_trajectories(args.paths, args.format, "compact", failures):
        res = compact_trajectory(item, encoder, config, progress=not args.no_progress)
        if args.check:
            problems.extend(check_result(res))
        if args.residual_dir:
            write_residual(res, args.residual_dir)
        summaries.append(result_summary(res))
    total = summarize(summaries, config) if summaries else None
    if summaries:
        rows = [table_row(s) for s in summaries] + [table_row(total)]
        print(table(rows, TABLE_HEADER), file=out)
        print(
            f"encoder {encoder.name} (D={encoder.dim}), threshold t={config.threshold} (δ={config.delta:.4f}), "
            f"layers {total['layers']}; removal net {_pct(total['removal_net'])}, gross {_pct(total['removal_gross'])}; "
            f"map digest {total['map_digest']}",
            file=out,
        )
    if failures:
        print(f"lam-ref compact: {len(failures)} of {len(failures) + len(summaries)} inputs failed to load", file=sys.stderr)
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
        write_json(report, args.json)
    if not summaries and not failures:
        print("lam-ref compact: no trajectories found", file=sys.stderr)
        return 1
    return 1 if (failures or problems) else 0
