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
from collections.abc import Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from pathlib import Path
from typing import Any

import numpy as np

from .. import evidence as E
from .. import metrics as M
from ..evidence import gold_key, load_gold
from ..geometry import LamValueError, validate_threshold
from ..metrics import validate_taus
from ..peers import METHODS
from ..peers import gem as G
from ..peers import lre as R
from ..peers import semdedup as S
from ..peers.base import PeerResult, step_units
from ..peers.lam import run_lam
from ..peers.masking import mask, validate_k
from ..tables import pct, plural
from ..text.chunking import get_tokenizer
from ..text.encoders import Encoder, get_encoder
from ..text.loaders import LoadFailure
from ..text.pipeline import CompactionConfig, Encoded, encode_chunks
from ..text.records import Trajectory
from ..text.reuse import EncodingCache
from ._common import (
    RunProgress,
    add_device,
    add_encoder,
    add_format,
    add_json,
    add_layer_options,
    add_progress,
    compaction_config,
    config_line,
    loaded_trajectories,
    plan_trajectory_files,
    pyplot,
    refuse_outputs_in_inputs,
    reuse_line,
    table,
    validate_output_file,
    write_json,
)

DEFAULT_METHODS = "lam,l0,masking,semdedup,gem,lre"
DEFAULT_OPS: dict[str, list[Any]] = {"t": [0.99, 0.95, 0.90], "k": [10, 5, 3], "eps": [0.01, 0.05, 0.10],
                                     "tau": [0.80, 0.90, 0.95], "budget": [2048, 1024, 512]}
DEFAULT_TAUS = ["1.0", "0.999", "0.99", "0.95"]
CHUNK_METHODS = frozenset({"lam", "l1", "semdedup"})
LAM_METHODS = frozenset({"lam", "l1", "l0"})


class CountingEncoder(Encoder):
    """An encoder that counts the texts it is given, by kind (the report's encode count)."""

    def __init__(self, inner: Encoder) -> None:
        self.inner = inner
        self.name, self.dim, self.max_tokens = inner.name, inner.dim, inner.max_tokens
        self.device, self.kind = inner.device, inner.kind
        self.counts: dict[str, int] = {}
        self.current = "chunks"

    def _encode(self, texts: list[str], batch_size: int, progress: bool) -> np.ndarray:
        self.counts[self.current] = self.counts.get(self.current, 0) + len(texts)
        return self.inner.encode(texts, batch_size=batch_size, progress=progress)

    def token_lengths(self, texts: Sequence[str]) -> list[int] | None:
        return self.inner.token_lengths(texts)

    def describe(self) -> dict[str, Any]:
        return self.inner.describe()


def register(sub: argparse._SubParsersAction) -> argparse.ArgumentParser:
    p = sub.add_parser("compare", help="LAM against masking, SemDeDup, GEM and LRE (Table 17, Figure 3)")
    p.add_argument("paths", nargs="+", metavar="PATH", help="trajectory files or directories")
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
    p.add_argument("--lre-weights", metavar="PATH", help="LRE weights file (default: the shipped lre_weights.json)")
    add_encoder(p)
    add_device(p)
    add_layer_options(p)
    add_format(p)
    p.add_argument("--gold", metavar="PATCHES", help="gold patches (the formats of lam-ref sweep --gold)")
    p.add_argument("--taus", nargs="+", default=DEFAULT_TAUS, help="retention floors of ECR@τ (default 1.0 0.999 0.99 0.95)")
    add_json(p)
    p.add_argument("--plot", metavar="OUT.png", help="removal-vs-evidence plot (PNG, and SVG next to it); needs --gold")
    add_progress(p)
    p.set_defaults(func=run)
    return p


@dataclass(frozen=True)
class Plan:
    """The validated arguments; ``config``: LAM's layer settings, the object ``lam-ref compact``
    builds from the same options (its threshold and layers are set per row)."""

    methods: list[str]
    ops: dict[str, list[Any]]
    taus: dict[str, Fraction]
    seeds: int
    config: CompactionConfig


def _int(v: Any, name: str, lo: int) -> int:
    if isinstance(v, bool) or not isinstance(v, int) or v < lo:
        raise LamValueError(f"{name} must be an integer >= {lo}, got {v!r}")
    return v


def validate_args(args: argparse.Namespace) -> Plan:
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
    _int(args.per_cluster, "--per-cluster", 1)
    if args.semdedup_k is not None:
        _int(args.semdedup_k, "--semdedup-k", 1)
    _int(args.gem_min_blocks, "--gem-min-blocks", 0)
    _int(args.batch_size, "--batch-size", 1)
    config = compaction_config(args, l2_rel_eb=None)
    if args.json and args.json != "-":
        validate_output_file(args.json, "--json")
    if args.plot:
        if Path(args.plot).suffix.lower() != ".png":
            raise LamValueError(f"--plot must name a .png file (the .svg is written next to it), got {args.plot!r}")
        if not args.gold:
            raise LamValueError(f"--plot {args.plot!r} needs --gold (the plot's y axis is evidence retained)")
        validate_output_file(args.plot, "--plot")
    return Plan(methods, ops, taus, seeds, config)


# ----------------------------------------------------------------------------------------------
# accumulation


def _label(method: str, op: dict[str, Any]) -> str:
    return ", ".join(f"{k}={v}" for k, v in op.items()) if op else "—"


@dataclass
class Row:
    """One method at one operating point, over all trajectories (SemDeDup: pooled over seeds)."""

    method: str
    op: dict[str, Any]
    prefix_stable: bool = True
    tokens: list[tuple[int, int, int]] = field(default_factory=list)  # per (trajectory, seed)
    evidence: list[E.EvidenceResult] = field(default_factory=list)
    ev_tokens: list[tuple[int, int, int]] = field(default_factory=list)
    deleted_units: int = 0
    placeholders: int = 0
    wall_s: float = 0.0
    per_seed: dict[int, dict[str, Any]] = field(default_factory=dict)
    deletion_sets: dict[int, set[Any]] = field(default_factory=dict)

    def add(self, res: PeerResult, lines: list[str] | None, seed: int = 0) -> None:
        t = (res.tokens_original, res.tokens_residual_net, res.tokens_residual_gross)
        self.prefix_stable = self.prefix_stable and res.prefix_stable
        self.tokens.append(t)
        self.deleted_units += len(res.deleted_units)
        self.placeholders += res.placeholders
        self.wall_s += res.wall_s
        self.deletion_sets.setdefault(seed, set()).update((res.trajectory.id, u) for u in res.deleted_units)
        ps = self.per_seed.setdefault(seed, {"tokens": [], "ev_tokens": [], "evidence": []})
        ps["tokens"].append(t)
        if lines is not None:
            ev = E.evidence_retention(lines, [res.trajectory.records[i].text for i in res.trajectory.observation_indices],
                                      res.observation_residuals())
            self.evidence.append(ev)
            ps["evidence"].append(ev)
            if ev.witnessed:
                self.ev_tokens.append(t)
                ps["ev_tokens"].append(t)


def _row_json(row: Row, with_gold: bool) -> dict[str, Any]:
    seeds = sorted(row.per_seed)
    n = len(seeds)
    per = {s: M.removal_of_counts(row.per_seed[s]["tokens"]) for s in seeds}
    nets = [r.net for r in per.values() if r is not None]
    out: dict[str, Any] = {
        "method": row.method,
        "operating_point": row.op,
        "label": _label(row.method, row.op),
        "prefix_stable": row.prefix_stable,
        "seeds": n,
        "removal_net": float(np.mean(nets)) if nets else None,
        "removal_gross": float(np.mean([r.gross for r in per.values() if r is not None])) if nets else None,
        "removal_net_range": [min(nets), max(nets)] if nets else None,
        "deleted_units": row.deleted_units / max(n, 1),
        "placeholders": row.placeholders / max(n, 1),
        "wall_s": row.wall_s,
    }
    if n > 1:
        out["stability"] = S.seed_agreement([row.deletion_sets.get(s, set()) for s in seeds])
    else:
        out["stability"] = {"seeds": 1, "pairwise_jaccard": 1.0, "deterministic": True}
    if with_gold:
        summ = E.summarize_evidence(row.evidence)
        ev_rem = [M.removal_of_counts(row.per_seed[s]["ev_tokens"]) for s in seeds]
        ev_nets = [r.net for r in ev_rem if r is not None]
        micro_seed = [float(E.summarize_evidence(row.per_seed[s]["evidence"]).micro) for s in seeds]
        out["evidence"] = {
            **summ.to_json(),
            "micro": float(summ.micro) if summ.witnessed else None,
            "macro_intact": float(summ.macro_intact) if summ.witnessed else None,
            "micro_range": [min(micro_seed), max(micro_seed)] if summ.witnessed else None,
            "removal_net": float(np.mean(ev_nets)) if ev_nets else None,
            "removal_net_range": [min(ev_nets), max(ev_nets)] if ev_nets else None,
            "over": "trajectories with >= 1 witnessed evidence line (counts summed over seeds)",
        }
    return out


# ----------------------------------------------------------------------------------------------
# the run


def run(args: argparse.Namespace) -> int:
    plan = validate_args(args)
    refuse_outputs_in_inputs(args.paths, [("--json", args.json), ("--plot", args.plot)])  # D1
    plan_trajectory_files(args.paths, args.format)  # a missing or empty input: exit 2 before any work
    t_start = time.perf_counter()
    failures: list[LoadFailure] = []
    trajs: list[Trajectory] = list(loaded_trajectories(args.paths, args.format, "compare", failures, show_warnings=False))
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
    encoder = CountingEncoder(get_encoder(args.encoder, args.device, args.encoder_backend)) if needs_encoder else None
    tok = get_tokenizer()
    gem_cfgs = {tau: G.GemConfig(tau=tau, min_blocks=args.gem_min_blocks) for tau in plan.ops["tau"]}
    rows: dict[tuple[str, str], Row] = {}

    def row(method: str, op: dict[str, Any]) -> Row:
        key = (method, _label(method, op))
        if key not in rows:
            rows[key] = Row(method, op)
        return rows[key]

    def timed(fn, *a, **kw) -> PeerResult:
        t0 = time.perf_counter()
        res = fn(*a, **kw)
        res.wall_s = time.perf_counter() - t0
        return res

    encoded: list[Encoded | None] = []
    encode_s = 0.0
    reuse = EncodingCache(enabled=plan.config.reuse)  # one per run (SPEC §4.4)
    progress = RunProgress(len(trajs), enabled=not args.no_progress, desc="compare", unit="trajectory")

    def advancing(items: list[Trajectory]):
        for item in items:
            yield item
            progress.advance(trajectories=1)

    for t in advancing(trajs):
        ln = lines.get(t.id) if gold is not None else None
        enc = None
        if CHUNK_METHODS & set(plan.methods):
            assert encoder is not None
            encoder.current = "chunks"
            t0 = time.perf_counter()
            items = [(i, t.records[i].turn, t.records[i].text) for i in t.observation_indices]
            enc = encode_chunks(items, encoder, tok, window=plan.config.window, batch_size=plan.config.batch_size,
                                fit=plan.config.fit_window, reuse=reuse, on_batch=progress.encoding)
            progress.note(windows=len(enc.chunks))
            encode_s += time.perf_counter() - t0
        encoded.append(enc)
        for method in plan.methods:
            if method in ("lam", "l1"):
                for th in plan.ops["t"]:
                    row(method, {"t": th}).add(timed(run_lam, method, t, encoder, threshold=th,
                                                     cache={"orig": enc}, config=plan.config), ln)
            elif method == "l0":
                row("l0", {}).add(timed(run_lam, "l0", t, None, config=plan.config), ln)
            elif method == "masking":
                for k in plan.ops["k"]:
                    row("masking", {"k": k}).add(timed(mask, t, k, tok), ln)
            elif method == "lre":
                for b in plan.ops["budget"]:
                    row("lre", {"budget": b}).add(timed(R.lre, t, b, tok, model=model), ln)
            elif method == "gem":
                _, units, _ = step_units(t)
                vectors = None
                if G.protocol_problem(t, units) is None and len(units) >= args.gem_min_blocks:
                    assert encoder is not None
                    encoder.current = "gem_blocks"
                    t0 = time.perf_counter()
                    vectors = G.gem_vectors(t, encoder, batch_size=args.batch_size)
                    encode_s += time.perf_counter() - t0
                for tau, cfg in gem_cfgs.items():
                    row("gem", {"tau": tau}).add(timed(G.gem, t, tok, cfg, vectors=vectors), ln)
    progress.close()
    if "semdedup" in plan.methods:
        _semdedup(trajs, encoded, plan, args, tok, lines if gold is not None else None, row)
    total_s = time.perf_counter() - t_start

    with_gold = gold is not None
    rows_json = [_row_json(r, with_gold) for r in rows.values()]
    ecr: dict[str, dict[str, float | None]] = {}
    best: dict[str, float | None] = {}
    for method in plan.methods:
        mine = [r for r in rows_json if r["method"] == method]
        best[method] = max((r["removal_net"] for r in mine if r["removal_net"] is not None), default=None)
        if with_gold:
            pts = [M.OperatingPoint(r["label"], r["evidence"]["removal_net"], r["evidence"]["kept"],
                                    r["evidence"]["witnessed"]) for r in mine if r["evidence"]["removal_net"] is not None]
            ecr[method] = {s: M.ecr_at(pts, tau) for s, tau in plan.taus.items()} if pts else {s: None for s in plan.taus}
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


def _semdedup(trajs, encoded, plan, args, tok, lines, row) -> None:
    """SemDeDup over all seeds and eps (one clustering per seed and scope unit, shared by every eps)."""
    offsets = np.cumsum([0] + [e.embeddings.shape[0] if e is not None else 0 for e in encoded])
    groups = [list(range(len(trajs)))] if args.semdedup_scope == "corpus" else [[j] for j in range(len(trajs))]
    for seed in range(plan.seeds):
        for grp in groups:
            embs = [encoded[j].embeddings for j in grp if encoded[j] is not None]
            x = np.concatenate(embs) if embs else np.zeros((0, 1), np.float32)
            t0 = time.perf_counter()
            k = S.n_clusters_for(x.shape[0], args.per_cluster) if args.semdedup_k is None else min(args.semdedup_k,
                                                                                                     x.shape[0])
            clus = S.spherical_kmeans(x, k, seed) if x.shape[0] else None
            cluster_s = time.perf_counter() - t0
            base = offsets[grp[0]]
            for eps in plan.ops["eps"]:
                t0 = time.perf_counter()
                dele = (S.semdedup_deleted(x, eps, seed, clustering=clus, keep=args.semdedup_keep) if clus is not None
                        else np.zeros(0, np.int64))
                rule_s = time.perf_counter() - t0
                share = (cluster_s + rule_s) / len(grp)
                for j in grp:
                    enc = encoded[j]
                    lo, hi = offsets[j] - base, offsets[j + 1] - base
                    local = (dele[(dele >= lo) & (dele < hi)] - lo).tolist()
                    t0 = time.perf_counter()
                    res = S.apply_deletions(trajs[j], enc.chunks if enc is not None else [], local, tok,
                                            {"eps": eps}, extra={"seed": seed, "scope": args.semdedup_scope})
                    res.wall_s = time.perf_counter() - t0 + share
                    row("semdedup", {"eps": eps}).add(res, lines.get(trajs[j].id) if lines is not None else None, seed)


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


def _ecr_table(plan: Plan, best: dict[str, float | None], ecr: dict[str, dict[str, float | None]]) -> tuple[list[list[Any]], list[str]]:
    header = ["method", "best (unconstrained)"] + [f"ECR@{s}" for s in plan.taus]
    return [[m, pct(best[m])] + [M.format_ecr(ecr[m][s]) for s in plan.taus] for m in plan.methods], header


COLORS = {"lam": "#c0392b", "l1": "#e67e22", "l0": "#8e44ad", "masking": "#7f8c8d", "semdedup": "#2980b9",
          "gem": "#27ae60", "lre": "#b7950b"}


def _label_offsets(points: list[tuple[float, float, str]], ax, fontsize: float) -> list[tuple[float, float]]:
    """Offsets (in points) for the operating-point labels so that none overprints another: labels
    of points at one height are staggered in rows wherever two would overlap along x, above the
    points, or below them at the top of the axis (evidence 100 %). ``points`` are sorted by x."""
    fig = ax.figure
    fig.canvas.draw()
    top = ax.get_ylim()[1]
    scale = fig.dpi / 72.0
    placed: dict[tuple[int, int], list[tuple[float, float]]] = {}
    out = []
    for x, y, text in points:
        px, py = ax.transData.transform((x, y))
        width = 0.62 * fontsize * len(text) * scale + 4
        level = round(py / (fontsize * scale))
        row = 0
        while any(a < px + width and px < b for a, b in placed.get((level, row), [])):
            row += 1
        placed.setdefault((level, row), []).append((px, px + width))
        out.append((2.0, -10.0 - 8.0 * row) if y >= top - 0.5 else (3.0, 3.0 + 8.0 * row))
    return out


def plot(rows_json: list[dict[str, Any]], path: str) -> tuple[Path, Path]:
    """Removal against evidence retained, one curve per method through its operating points
    (Figure 3 style; SemDeDup's seed range as error bars); PNG at ``path`` and SVG beside it.

    The x axis is the net removal over the trajectories with a witnessed evidence line (the
    table's ``removed (ev. set)`` column, the set the evidence is measured on); the evidence axis
    ends at 100 %, and the labels of points at 100 % are staggered so that none overprints another."""
    plt = pyplot("--plot")

    from .._io import atomic_write

    fig, ax = plt.subplots(figsize=(7.0, 4.6))
    labels: list[tuple[float, float, str, str]] = []
    for method in dict.fromkeys(r["method"] for r in rows_json):
        pts = sorted((r for r in rows_json if r["method"] == method and r["evidence"]["micro"] is not None
                      and r["evidence"]["removal_net"] is not None), key=lambda r: r["evidence"]["removal_net"])
        if not pts:
            continue
        x = np.array([100 * r["evidence"]["removal_net"] for r in pts])
        y = np.array([100 * r["evidence"]["micro"] for r in pts])
        accent = method == "lam"
        kw = {"color": COLORS.get(method, "black"), "marker": "o" if accent else "s", "lw": 2.2 if accent else 1.2,
              "ms": 6 if accent else 4.5, "label": method + (" (prefix-stable)" if pts[0]["prefix_stable"] else ""),
              "clip_on": False}
        if pts[0]["seeds"] > 1:
            xr = np.array([[x[i] - 100 * r["evidence"]["removal_net_range"][0],
                            100 * r["evidence"]["removal_net_range"][1] - x[i]] for i, r in enumerate(pts)]).T
            yr = np.array([[y[i] - 100 * r["evidence"]["micro_range"][0],
                            100 * r["evidence"]["micro_range"][1] - y[i]] for i, r in enumerate(pts)]).T
            ax.errorbar(x, y, xerr=np.clip(xr, 0, None), yerr=np.clip(yr, 0, None), capsize=3, **kw)
        else:
            ax.plot(x, y, **kw)
        labels += [(float(xi), float(yi), r["label"], kw["color"]) for xi, yi, r in zip(x, y, pts)]
    low = min([y for _, y, _, _ in labels], default=0.0)
    ax.set_ylim(max(0.0, low - 0.08 * (100.0 - low) - 1.0), 100.0)
    ax.set_xlim(left=0.0)
    labels.sort(key=lambda t: t[0])
    for (xi, yi, text, color), off in zip(labels, _label_offsets([(a, b, c) for a, b, c, _ in labels], ax, 6)):
        ax.annotate(text, (xi, yi), textcoords="offset points", xytext=off, fontsize=6, color=color,
                    va="bottom" if off[1] > 0 else "top")
    ax.set_xlabel("tokens removed on the evidence set, net (%): the table's 'removed (ev. set)'")
    ax.set_ylabel("evidence lines retained (%)")
    ax.set_title("Removal against evidence (up and right is better)")
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=7, loc="lower left")
    fig.tight_layout()
    png = Path(path)
    svg = png.with_suffix(".svg")
    atomic_write(png, lambda fh: fig.savefig(fh, format="png", dpi=150))
    atomic_write(svg, lambda fh: fig.savefig(fh, format="svg", metadata={"Date": None}))
    plt.close(fig)
    return png, svg
