"""``lam-ref compare``: LAM and its peers on the same trajectories, the same tokenizer, the same
encoder and the same evidence criterion (paper §3.1–3.2, Figure 3, Tables 14 and 17, App. D, F.8;
SPEC §12, §16).

Methods (``--methods``, default ``lam,l0,masking,semdedup,gem,lre``; ``l1`` is also accepted) and
their operating points:

========== ============ ==========================================================
method     parameter    default operating points
========== ============ ==========================================================
lam, l1    ``--t``      0.99 0.95 0.90 (cosine threshold, L1 → L0 resp. L1 alone)
l0         none         one point
masking    ``--k``      10 5 3 (observations kept at the end; the first is never masked)
semdedup   ``--eps``    0.01 0.05 0.10 (drop cos > 1 - eps), ``--seeds`` 5
gem        ``--tau``    0.80 0.90 0.95 (coverage target; K = 16, δ = 0.05)
lre        ``--budget`` 2048 1024 512 (tokens of evictable history)
========== ============ ==========================================================

Every chunk is chunked and encoded **once** (shared by ``lam``, ``l1`` and ``semdedup`` at every
operating point); GEM encodes each eligible trajectory's blocks and task once (shared by its
operating points). The output states the encoder calls by kind. Per method and operating point
the report gives net and gross removal (whole-text cl100k counts over observation records),
evidence retained with ``--gold`` (exact, App. F.3), ``ECR@τ`` per method (eq. 8, Table 17
layout; ``ρ`` and retention over the trajectories with at least one witnessed evidence line,
as ``lam-ref sweep``), deletion-set stability across seeds (SemDeDup: mean pairwise Jaccard and
the share of the union deleted under every seed, App. D; deterministic methods: 1 by
construction), prefix-stability, and wall time. SemDeDup's row at each ``eps`` pools its seeds:
mean removal, evidence lines summed over seeds (its ``ECR@τ`` uses that pooled retention), and the
min–max range over seeds in the JSON and as error bars in the plot.

Every argument is checked before anything is encoded; an unknown method, an operating point out
of range (``k < 0``, ``eps ∉ (0, 1)``, ``τ ∉ (0, 1]``, ``budget < 0``, ``t ∉ [-1, 1]``), or a
gold file that matches no loaded trajectory is one line naming the argument, exit 2.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Any

from .. import evidence as E
from .. import metrics as M
from .._io import write_json
from ..evidence import gold_key, load_gold
from ..geometry import LamValueError, validate_threshold
from ..metrics import validate_taus
from ..peers import METHODS
from ..peers import gem as G
from ..peers import lre as R
from ..peers import semdedup as S
from ..peers.compare import (
    CHUNK_METHODS,
    DEFAULT_METHODS,
    DEFAULT_OPS,
    DEFAULT_TAUS,
    LAM_METHODS,
    ComparePlan,
    CountingEncoder,
    best_and_ecr,
    compare_methods,
    plot,
    row_json,
)
from ..peers.masking import validate_k
from ..tables import pct, plural, table
from ..text.loaders import LoadFailure
from ..text.records import Trajectory
from ._lines import config_line, reuse_line
from ._options import (
    add_gold,
    add_json,
    add_mkdir,
    add_trajectory_run_options,
    compaction_config,
    run_encoder,
)
from ._paths import reads, svg_beside, validate_output_file, writes
from ._progress import RunProgress
from ._trajectories import loaded_trajectories, plan_trajectory_files

#: The example each ``--help`` shows (``lam_ref.cli`` collects them from every command module).
EXAMPLES = {
    "compare": "lam-ref compare runs/ --gold gold.json --json compare.json --plot compare.png",
}


def register(sub: argparse._SubParsersAction) -> argparse.ArgumentParser:
    p = sub.add_parser("compare", help="LAM against masking, SemDeDup, GEM and LRE (Table 17, Figure 3)")
    reads(p.add_argument("paths", nargs="+", metavar="PATH", help="trajectory files or directories"), "paths")
    p.add_argument("--methods", default=DEFAULT_METHODS, help=f"comma-separated (default {DEFAULT_METHODS}; also l1)")
    p.add_argument("--t", type=float, nargs="+", default=DEFAULT_OPS["t"], help="lam/l1 thresholds (default 0.99 0.95 0.90)")
    p.add_argument("--k", type=int, nargs="+", default=DEFAULT_OPS["k"], help="masking: observations kept (default 10 5 3)")
    p.add_argument("--eps", type=float, nargs="+", default=DEFAULT_OPS["eps"], help="SemDeDup eps in (0, 1) (default 0.01 0.05 0.10)")
    p.add_argument("--tau", type=float, nargs="+", default=DEFAULT_OPS["tau"], help="GEM coverage target in (0, 1] (default 0.80 0.90 0.95)")
    p.add_argument("--budget", type=int, nargs="+", default=DEFAULT_OPS["budget"], help="LRE budget in tokens (default 2048 1024 512)")
    p.add_argument("--seeds", type=int, default=5, help="SemDeDup k-means seeds 0..N-1 (default 5)")
    p.add_argument("--semdedup-scope", choices=("corpus", "trajectory"), default="corpus",
                   help="cluster all trajectories together (default, Table 17) or each on its own (App. F.8)")
    p.add_argument("--per-cluster", type=int, default=S.DEFAULT_PER_CLUSTER,
                   help="SemDeDup chunks per cluster, k = round(n / this) (default 50; App. D)")
    p.add_argument("--semdedup-k", type=int, help="SemDeDup k-means clusters (overrides --per-cluster; at most n)")
    p.add_argument("--semdedup-keep", choices=S.KEEP, default=S.DEFAULT_KEEP,
                   help="which near-duplicate survives: hard = farthest from the centroid (default, the official), "
                        "easy, random, earliest (arrival order, ours)")
    p.add_argument("--gem-min-blocks", type=int, default=16, help="GEM leaves shorter histories unchanged (default 16)")
    reads(p.add_argument("--lre-weights", metavar="PATH", help="LRE weights file (default: the shipped lre_weights.json)"))
    add_trajectory_run_options(p)
    add_gold(p)
    p.add_argument("--taus", nargs="+", default=DEFAULT_TAUS, help="retention floors of ECR@τ (default 1.0 0.999 0.99 0.95)")
    add_json(p)
    writes(p.add_argument("--plot", metavar="OUT.png", help="removal-vs-evidence plot (PNG, and SVG next to it); needs --gold"),
           also=svg_beside)
    add_mkdir(p)
    p.set_defaults(func=run)
    return p


def _int(v: Any, name: str, lo: int) -> int:
    if isinstance(v, bool) or not isinstance(v, int) or v < lo:
        raise LamValueError(f"{name} must be an integer >= {lo}, got {v!r}")
    return v


def validate_args(args: argparse.Namespace) -> ComparePlan:
    """Check every argument that needs no file (errors name the argument and the value)."""
    methods = [m.strip().lower() for m in str(args.methods).split(",") if m.strip()]
    if not methods:
        raise LamValueError(f"--methods must name at least one of {', '.join(METHODS)}, got {args.methods!r}")
    for m in methods:
        if m not in METHODS:
            raise LamValueError(f"--methods: unknown method {m!r} (known: {', '.join(METHODS)})")
    methods = list(dict.fromkeys(methods))
    ops = {
        "t": [validate_threshold(t, "--t") for t in dict.fromkeys(args.t)],
        "k": [validate_k(k, "--k") for k in dict.fromkeys(args.k)],
        "eps": [S.validate_eps(e, "--eps") for e in dict.fromkeys(args.eps)],
        "tau": [G.validate_tau(t, "--tau") for t in dict.fromkeys(args.tau)],
        "budget": [R.validate_budget(b, "--budget") for b in dict.fromkeys(args.budget)],
    }
    taus = validate_taus(args.taus)
    seeds = _int(args.seeds, "--seeds", 1)
    per_cluster = _int(args.per_cluster, "--per-cluster", 1)
    if args.semdedup_k is not None:
        _int(args.semdedup_k, "--semdedup-k", 1)
    gem_min_blocks = _int(args.gem_min_blocks, "--gem-min-blocks", 0)
    _int(args.batch_size, "--batch-size", 1)
    config = compaction_config(args, l2_rel_eb=None)
    if args.json and args.json != "-":
        validate_output_file(args.json, "--json", mkdir=getattr(args, "mkdir", False))
    if args.plot:
        if Path(args.plot).suffix.lower() != ".png":
            raise LamValueError(f"--plot must name a .png file (the .svg is written next to it), got {args.plot!r}")
        if not args.gold:
            raise LamValueError(f"--plot {args.plot!r} needs --gold (the plot's y axis is evidence retained)")
        validate_output_file(args.plot, "--plot", mkdir=getattr(args, "mkdir", False))
    return ComparePlan(methods, ops, taus, seeds, config, gem_min_blocks=gem_min_blocks,
                       semdedup_scope=args.semdedup_scope, per_cluster=per_cluster, semdedup_k=args.semdedup_k,
                       semdedup_keep=args.semdedup_keep)


# ----------------------------------------------------------------------------------------------
# the run


def run(args: argparse.Namespace) -> int:
    plan = validate_args(args)
    plan_trajectory_files(args.paths, args.format)  # a missing or empty input: exit 2 before any work
    t_start = time.perf_counter()
    failures: list[LoadFailure] = []
    trajs: list[Trajectory] = list(loaded_trajectories(args.paths, args.format, "compare", failures))
    gold = None
    lines: dict[str, list[str]] = {}
    if args.gold:
        gold = load_gold(args.gold)
        for t in trajs:
            key = gold_key(t, gold)
            if key is not None:
                lines[t.id] = E.evidence_lines(gold[key])
        if not lines:
            raise LamValueError(f"--gold {args.gold!r} matches no loaded trajectory ({len(gold)} ids; ids are "
                                "matched by trajectory id, its last path component, or without ':sample')")
    model = R.load_model(args.lre_weights) if "lre" in plan.methods else None
    needs_encoder = bool(CHUNK_METHODS & set(plan.methods)) or "gem" in plan.methods
    if not trajs:
        print("lam-ref compare: no trajectories found", file=sys.stderr)
        return 1
    encoder = CountingEncoder(run_encoder(args)) if needs_encoder else None
    progress = RunProgress(len(trajs), enabled=not args.no_progress, desc="compare", unit="trajectory")
    try:
        done = compare_methods(trajs, plan, encoder=encoder, lines=lines if gold is not None else None, lre_model=model,
                               on_trajectory=lambda: progress.advance(trajectories=1), on_batch=progress.encoding,
                               on_windows=lambda n: progress.note(windows=n))
    finally:
        progress.close()
    encode_s, reuse = done.encode_s, done.reuse
    total_s = time.perf_counter() - t_start

    with_gold = gold is not None
    rows_json = [row_json(r, with_gold) for r in done.rows]
    best, ecr = best_and_ecr(rows_json, plan, with_gold)
    counts = dict(encoder.counts) if encoder is not None else {}
    out = sys.stderr if args.json == "-" else sys.stdout
    print(table(*_table(rows_json, with_gold)), file=out)
    if with_gold:
        print(file=out)
        print(table(*_ecr_table(plan, best, ecr)), file=out)
    ev_n = len({t.id for t in trajs if t.id in lines and lines[t.id] and any(
        ln in t.records[i].text for ln in lines[t.id] for i in t.observation_indices)}) if with_gold else 0
    enc_line = ", ".join(f"{v} {k.replace('_', ' ')}" for k, v in counts.items()) or "none"
    print(f"\n{plural(len(trajs))}; encoder {encoder.name if encoder else '—'}: {sum(counts.values())} texts encoded "
          f"({enc_line}; each distinct chunk text once) in {encode_s:.1f} s; total {total_s:.1f} s"
          + (f"; evidence over {plural(ev_n)} with witnessed lines ({len(lines)} gold-matched)" if with_gold else ""),
          file=out)
    if LAM_METHODS & set(plan.methods):
        print("lam/l1/l0 " + config_line(plan.config, per_row=True), file=out)
    if CHUNK_METHODS & set(plan.methods):
        print(reuse_line({"windows_encoded": reuse.encoded, "windows_reused": reuse.reused}, reuse.enabled), file=out)
    report = {
        "trajectories": len(trajs),
        "methods": plan.methods,
        "encoder": encoder.describe() if encoder else None,
        "encode_counts": counts,
        "config": plan.config.to_json(),
        "encoding": {"windows_encoded": reuse.encoded, "windows_reused": reuse.reused,
                     "reuse": plan.config.to_json()["reuse"]},
        "encode_s": encode_s,
        "total_s": total_s,
        "semdedup": {"scope": args.semdedup_scope, "seeds": plan.seeds, "per_cluster": args.per_cluster,
                     "k": args.semdedup_k, "keep": args.semdedup_keep},
        "gem": {"k": 16, "delta": 0.05, "min_blocks": args.gem_min_blocks},
        "rows": rows_json,
        "best": best,
        "ecr": ecr if with_gold else None,
        "ecr_over": "trajectories with >= 1 witnessed evidence line" if with_gold else None,
        "evidence_trajectories": ev_n if with_gold else None,
        "gold_unmatched": sorted(set(gold) - {gold_key(t, gold) for t in trajs}) if gold is not None else None,
        "failures": [f.to_json() for f in failures],
    }
    if args.json:
        write_json(report, args.json)
    if args.plot:
        plot(rows_json, args.plot)
    return 1 if failures else 0


# ----------------------------------------------------------------------------------------------
# output


def _table(rows_json: list[dict[str, Any]], with_gold: bool) -> tuple[list[list[Any]], list[str]]:
    header = ["method", "operating point", "prefix-stable", "removed (net)", "gross", "deleted units", "stability",
              "wall s"]
    if with_gold:
        header[5:5] = ["removed (ev. set)", "evidence", "lost", "intact"]
    out = []
    for r in rows_json:
        st = r["stability"]
        stab = "1 (deterministic)" if st.get("deterministic") else (
            f"J={st['pairwise_jaccard']:.3f} (min {st['min_pairwise_jaccard']:.3f}), shared={st['shared_of_union']:.3f}")
        cells: list[Any] = [r["method"], r["label"], "yes" if r["prefix_stable"] else "no", pct(r["removal_net"]),
                            pct(r["removal_gross"]), f"{r['deleted_units']:g}", stab, f"{r['wall_s']:.2f}"]
        if with_gold:
            ev = r["evidence"]
            cells[5:5] = [pct(ev["removal_net"]), pct(ev["micro"], 3), "—" if ev["micro"] is None else ev["lost"],
                          pct(ev["macro_intact"], 1)]
        out.append(cells)
    return out, header


def _ecr_table(plan: ComparePlan, best: dict[str, float | None], ecr: dict[str, dict[str, float | None]]) -> tuple[list[list[Any]], list[str]]:
    header = ["method", "best (unconstrained)"] + [f"ECR@{s}" for s in plan.taus]
    return [[m, pct(best[m])] + [M.format_ecr(ecr[m][s]) for s in plan.taus] for m in plan.methods], header
