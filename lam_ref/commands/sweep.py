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
import base64
import functools
import sys
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

import numpy as np

from .. import evidence as E
from .. import metrics as M
from ..distributed.files import map_files
from ..evidence import cached_gold, gold_digest, gold_key, load_gold  # noqa: F401  (re-exported: their former home)
from ..geometry import LamValueError, delta_from_t, validate_threshold
from ..metrics import validate_taus  # noqa: F401  (re-exported: its former home)
from ..tables import pct, plural
from ..text.encoders import get_encoder
from ..text.loaders import LoadFailure
from ..text.pipeline import CompactionConfig, Encoded, compact_trajectory
from ..text.records import Trajectory
from ..text.reuse import EncodingCache
from ._common import (
    EmbeddingSaver,
    RunProgress,
    add_device,
    add_encoder,
    add_format,
    add_json,
    add_l0_stubs,
    add_mkdir,
    add_progress,
    add_reuse,
    add_save_embeddings,
    l0_net_positive,
    plan_trajectory_files,
    planned_trajectories,
    refuse_outputs_in_inputs,
    reuse_line,
    table,
    validate_batch_size,
    validate_json_dest,
    validate_output_file,
    write_json,
)
from ._compact_report import parse_layers
from ._dask import (
    add_cluster_options,
    backend_setting,
    file_run,
    prepare_backend,
    refuse_serial_only,
    wants_cluster,
)

QUERY_ROLES = ("action", "assistant")

#: What each trajectory set of the report covers (written into the JSON as ``sets``).
SET_NOTES = {
    "all": "every loaded trajectory: rows[].trajectories, keep, recall_at_k, evidence_hit, removal_net, "
           "removal_gross, merge_distances, delta_hat, mean_delta_hat_over_delta",
    "gold": "trajectories with a gold patch: rows[].evidence.gold_set; evidence line counts "
            "(a trajectory without a witnessed line adds none)",
    "evidence": "trajectories with >= 1 witnessed evidence line (Table 14): rows[].evidence "
                "(removal_net, removal_gross, exact and relaxed retention) and ecr (eq. 8)",
}


# ----------------------------------------------------------------------------------------------
# retrieval after substitution for QA evidence (App. F.2; LoCoMo)


def _qa_items(traj: Trajectory) -> list[tuple[str, list[int]]]:
    """``(question, evidence record indices)`` of a LoCoMo trajectory's QA items (loader ``meta["qa"]``)."""
    qa = traj.meta.get("qa") if isinstance(traj.meta, dict) else None
    out = []
    for item in qa if isinstance(qa, list) else []:
        q = item.get("question") if isinstance(item, dict) else None
        if isinstance(q, str) and q.strip():
            ev = item.get("evidence_records") or []
            out.append((q, [int(i) for i in ev]))
    return out


def _qa_targets(enc: Encoded, qa: list[tuple[str, list[int]]]) -> list[list[int]]:
    """Per QA item, the ids of the chunks cut from its evidence records (chunk → record: ``Chunk.record``)."""
    by_rec: dict[int, list[int]] = {}
    for c in enc.chunks:
        by_rec.setdefault(c.record, []).append(c.id)
    return [[c for r in ev for c in by_rec.get(r, [])] for _, ev in qa]


# ----------------------------------------------------------------------------------------------
# arguments


def register(sub: argparse._SubParsersAction) -> argparse.ArgumentParser:
    p = sub.add_parser("sweep", help="merge-threshold sweep over trajectories (Table 3, 11, 14, 17)",
                       description="Merge-threshold sweep over trajectories. "
                                   "Exit status: 0 ok, 1 some inputs failed, 2 usage error or unusable input.")
    p.add_argument("paths", nargs="+", metavar="PATH", help="trajectory files or directories")
    p.add_argument("--thresholds", "-t", type=float, nargs="+", default=[0.99, 0.98, 0.96, 0.95, 0.90],
                   help="cosine thresholds in [-1, 1] (default: Table 3's 0.99 0.98 0.96 0.95 0.90)")
    add_encoder(p)
    p.add_argument("--layers", default="l1,l0", help="layer order (default l1,l0)")
    add_format(p)
    p.add_argument("--gold", metavar="PATH",
                   help="gold patches: JSON {id: patch}, JSON/JSONL records {instance_id, patch}, or a directory")
    p.add_argument("--taus", type=str, nargs="+", default=["1.0", "0.999", "0.99", "0.95"],
                   help="retention floors τ in [0, 1] for ECR@τ, exact (0.999 or 999/1000; default 1.0 0.999 0.99 0.95)")
    p.add_argument("--recall-k", type=int, default=10,
                   help="k of recall@k and of the QA evidence hit rate (default 10; 0 to skip)")
    add_l0_stubs(p)
    add_reuse(p)
    add_device(p)
    add_json(p, "rows")
    add_mkdir(p)
    add_save_embeddings(p)
    add_progress(p)
    add_cluster_options(p, tile=False)
    p.set_defaults(func=run)
    return p


@dataclass(frozen=True)
class _Plan:
    """The validated arguments of one sweep."""

    layers: tuple[str, ...]
    configs: list[CompactionConfig]
    taus: dict[str, Fraction]
    recall_k: int
    gold: dict[str, str] | None
    files: list = field(default_factory=list)


def validate_args(args: argparse.Namespace) -> _Plan:
    """Check every argument before anything is encoded; errors name the argument and the value."""
    thresholds = list(dict.fromkeys(validate_threshold(t, "--thresholds") for t in args.thresholds))
    taus = validate_taus(args.taus)
    if isinstance(args.recall_k, bool) or not isinstance(args.recall_k, int) or args.recall_k < 0:
        raise LamValueError(f"--recall-k must be an integer >= 0 (0 skips retrieval), got {args.recall_k!r}")
    validate_batch_size(args.batch_size)
    net_positive = l0_net_positive(args)
    try:
        layers = parse_layers(args.layers)
        configs = [CompactionConfig(threshold=t, layers=layers, batch_size=args.batch_size, per_layer=False,
                                    l0_net_positive=net_positive, reuse=not getattr(args, "no_reuse", False))
                   for t in thresholds]
    except LamValueError as exc:
        raise LamValueError(f"--layers must be l1,l0, l0,l1, l1 or l0, got {args.layers!r} ({exc})") from exc
    files = plan_trajectory_files(args.paths, args.format, "sweep")
    emb = getattr(args, "save_embeddings", None)
    refuse_outputs_in_inputs(args.paths, [("--json", args.json), ("--save-embeddings", emb),
                                          ("--save-embeddings (its .ids.json)",
                                           str(EmbeddingSaver(emb).ids_path) if emb else None)])
    mkdir = getattr(args, "mkdir", False)
    validate_json_dest(args.json, mkdir=mkdir)
    if getattr(args, "save_embeddings", None):
        validate_output_file(args.save_embeddings, "--save-embeddings", mkdir=mkdir)
        if "l1" not in layers:
            raise LamValueError(f"--save-embeddings needs layer l1 (no windows are encoded with --layers {args.layers})")
    gold = load_gold(args.gold) if args.gold else None
    return _Plan(layers, configs, taus, args.recall_k, gold, files)


# ----------------------------------------------------------------------------------------------
# accumulation


@dataclass
class _Acc:
    """Per-threshold accumulators over trajectories (sums, never averages of ratios)."""

    t: float
    tokens: list[tuple[int, int, int]] = field(default_factory=list)  # (original, net, gross) per trajectory
    chunks: int = 0
    kept: int = 0
    ratio: list[float] = field(default_factory=list)
    delta_hat: float = 0.0
    dist: list[np.ndarray] = field(default_factory=list)
    wts: list[np.ndarray] = field(default_factory=list)
    recall: list[np.ndarray] = field(default_factory=list)
    hit_n: int = 0
    hit_full: int = 0
    hit_sub: int = 0
    exact: list[E.EvidenceResult] = field(default_factory=list)  # one per gold trajectory
    relaxed: list[E.EvidenceResult] = field(default_factory=list)


def measure_trajectory(item: Trajectory, encoder: Any, plan: _Plan, batch_size: int,
                       gold: dict[str, str] | None, reuse: EncodingCache | None = None,
                       on_batch: Any = None) -> dict[str, Any]:
    """One trajectory's contribution to every row of the sweep (the serial inner loop; the Dask
    run calls it per file on the workers, :mod:`lam_ref.distributed`): per threshold, token
    counts, kept windows, merge distances, recall and QA hits, evidence results; and whether the
    trajectory has a gold patch and witnessed evidence. :meth:`_Sweep.add` folds it in. ``reuse``:
    the run's window embeddings by text digest (SPEC §4.4; ``None``: within this trajectory)."""
    layers, k = plan.layers, plan.recall_k
    if reuse is None:
        reuse = EncodingCache(enabled=plan.configs[0].reuse if plan.configs else True)
    cache: dict[str, Encoded] = {}
    queries, source, qa, qa_emb = None, None, [], None
    if k > 0:
        qa = _qa_items(item)
        qtexts = [r.text for r in item.records if r.role in QUERY_ROLES and r.text.strip()]
        source = "action" if qtexts else "qa" if qa else None
        if not qtexts:
            qtexts = [q for q, _ in qa]
        queries = encoder.encode(qtexts, batch_size=batch_size) if qtexts else None
        if qa:
            qa_emb = queries if source == "qa" else encoder.encode([q for q, _ in qa], batch_size=batch_size)
    key = gold_key(item, gold) if gold is not None else None
    patch = gold[key] if gold is not None and key is not None else None
    lines = E.evidence_lines(patch) if patch is not None else None
    out: dict[str, Any] = {"gold_key": key, "has_gold": patch is not None, "witnessed": False, "queries": None,
                           "windows": 0, "encoded": 0, "reused": 0, "rows": []}
    for cfg in plan.configs:
        first = not out["rows"]
        res = compact_trajectory(item, encoder, cfg, cache=cache, reuse=reuse, on_batch=on_batch)
        out["encoded"] += res.windows_encoded
        out["reused"] += res.windows_reused
        if first:
            out["windows"] = res.chunks
            out["orig"] = cache.get("orig")  # for --save-embeddings (serial only; not serialised)
        ids = res.deleted_ids
        row: dict[str, Any] = {
            "tokens": [res.tokens_original, res.tokens_residual_net, res.tokens_residual_gross],
            "chunks": res.chunks, "kept": res.kept_chunks,
            "ratio": res.delta_hat / cfg.delta if res.chunks and res.kept_chunks < res.chunks and cfg.delta > 0
            else None,  # t = 1: δ = 0, no ratio
            "delta_hat": res.delta_hat, "dist": res.distances[ids], "wts": res.chunk_tokens[ids],
            "recall": None, "hit": None, "exact": None, "relaxed": None,
        }
        enc = cache.get("orig" if layers[0] == "l1" else "l0")
        if enc is not None and res.chunks:
            if queries is not None and source is not None:
                row["recall"] = M.recall_at_k_per_query(enc.embeddings, queries, res.pi, k)
                if first:
                    out["queries"] = [source, int(queries.shape[0])]
            if qa_emb is not None:
                targets = _qa_targets(enc, qa)
                full, sub = M.evidence_hits_at_k(enc.embeddings, qa_emb, res.pi, k, targets)
                row["hit"] = [sum(1 for t in targets if t), int(full.sum()), int(sub.sum())]
        if lines is not None:
            originals = [item.records[i].text for i in item.observation_indices]
            residuals = res.observation_residuals()
            row["exact"] = E.evidence_retention(lines, originals, residuals)
            row["relaxed"] = E.evidence_retention(lines, originals, residuals, relaxed=True)
            if first and row["exact"].witnessed:  # witnessing depends on the originals only
                out["witnessed"] = True
        out["rows"].append(row)
    return out


def _array_json(a: np.ndarray) -> dict[str, Any]:
    return {"dtype": a.dtype.str, "shape": list(a.shape), "b64": base64.b64encode(np.ascontiguousarray(a).tobytes()).decode()}


def _array_from(obj: dict[str, Any]) -> np.ndarray:
    return np.frombuffer(base64.b64decode(obj["b64"]), dtype=np.dtype(obj["dtype"])).reshape(obj["shape"]).copy()


def _evidence_json(r: E.EvidenceResult | None) -> dict[str, Any] | None:
    return None if r is None else {"witnessed": list(r.witnessed), "lost": list(r.lost), "relaxed": r.relaxed}


def _evidence_from(obj: dict[str, Any] | None) -> E.EvidenceResult | None:
    return None if obj is None else E.EvidenceResult(tuple(obj["witnessed"]), tuple(obj["lost"]), obj["relaxed"])


def contribution_to_json(c: dict[str, Any]) -> dict[str, Any]:
    """A :func:`measure_trajectory` result as JSON, exactly (arrays as dtype + bytes, floats by
    ``repr``, which round-trips): a per-file output of the Dask sweep."""
    rows = []
    for r in c["rows"]:
        rows.append({**r, "dist": _array_json(r["dist"]), "wts": _array_json(r["wts"]),
                     "recall": None if r["recall"] is None else _array_json(r["recall"]),
                     "exact": _evidence_json(r["exact"]), "relaxed": _evidence_json(r["relaxed"]),
                     "delta_hat": float(r["delta_hat"]), "ratio": None if r["ratio"] is None else float(r["ratio"]),
                     "tokens": [int(x) for x in r["tokens"]], "chunks": int(r["chunks"]), "kept": int(r["kept"])})
    return {k: v for k, v in c.items() if k != "orig"} | {"rows": rows, "windows": int(c["windows"])}


def contribution_from_json(obj: dict[str, Any]) -> dict[str, Any]:
    """The inverse of :func:`contribution_to_json`."""
    rows = [{**r, "dist": _array_from(r["dist"]), "wts": _array_from(r["wts"]),
             "recall": None if r["recall"] is None else _array_from(r["recall"]),
             "exact": _evidence_from(r["exact"]), "relaxed": _evidence_from(r["relaxed"])} for r in obj["rows"]]
    return {**obj, "rows": rows}


class _Sweep:
    """The fold over trajectories in load order: one :class:`_Acc` per threshold and the sets
    (:data:`SET_NOTES`) by trajectory index."""

    def __init__(self, plan: _Plan) -> None:
        self.plan = plan
        self.accs = [_Acc(cfg.threshold) for cfg in plan.configs]
        self.n_traj = 0
        self.gold_idx: list[int] = []  # indices (load order) of trajectories with a gold patch
        self.ev_idx: list[int] = []  # ... of those with >= 1 witnessed evidence line
        self.query_counts = {"action": 0, "qa": 0}
        self.gold_used: set[str] = set()
        self.encoding = {"windows_encoded": 0, "windows_reused": 0}  # SPEC §4.4

    def add(self, c: dict[str, Any]) -> None:
        j = self.n_traj
        self.n_traj += 1
        if c["gold_key"] is not None:
            self.gold_used.add(c["gold_key"])
        if c["has_gold"]:
            self.gold_idx.append(j)
        if c["witnessed"]:
            self.ev_idx.append(j)
        if c["queries"] is not None:
            self.query_counts[c["queries"][0]] += c["queries"][1]
        self.encoding["windows_encoded"] += c.get("encoded", 0)
        self.encoding["windows_reused"] += c.get("reused", 0)
        for acc, r in zip(self.accs, c["rows"]):
            acc.tokens.append(tuple(r["tokens"]))
            acc.chunks += r["chunks"]
            acc.kept += r["kept"]
            if r["ratio"] is not None:
                acc.ratio.append(r["ratio"])
            acc.delta_hat = max(acc.delta_hat, r["delta_hat"])
            acc.dist.append(r["dist"])
            acc.wts.append(r["wts"])
            if r["recall"] is not None:
                acc.recall.append(r["recall"])
            if r["hit"] is not None:
                acc.hit_n += r["hit"][0]
                acc.hit_full += r["hit"][1]
                acc.hit_sub += r["hit"][2]
            if r["exact"] is not None:
                acc.exact.append(r["exact"])
                acc.relaxed.append(r["relaxed"])


def run(args: argparse.Namespace) -> int:
    plan = validate_args(args)
    if wants_cluster(args):  # Dask: --workers / --scheduler / --resume (docs/scale.md)
        refuse_serial_only(args, [("--save-embeddings", getattr(args, "save_embeddings", None))])
        return _run_dask(args, plan)
    encoder = get_encoder(args.encoder, args.device, args.encoder_backend)
    sweep = _Sweep(plan)
    failures: list[LoadFailure] = []
    saver = EmbeddingSaver(args.save_embeddings) if getattr(args, "save_embeddings", None) else None
    progress = RunProgress(len(plan.files), enabled=not args.no_progress, desc="sweep")
    reuse = EncodingCache(enabled=not args.no_reuse)  # one per run (SPEC §4.4)
    for item in planned_trajectories(plan.files, args.format, "sweep", failures, progress, show_warnings=False):
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


def report(args: argparse.Namespace, sweep: _Sweep, encoder: dict[str, Any], failures: list[dict[str, str]], *,
           embeddings: Any = None, extra: dict[str, Any] | None = None) -> int:
    """Print the table and write the JSON report of a finished fold (serial or Dask); the exit status."""
    plan, k, gold, n_traj = sweep.plan, sweep.plan.recall_k, sweep.plan.gold, sweep.n_traj
    gold_idx, ev_idx, gold_used = sweep.gold_idx, sweep.ev_idx, sweep.gold_used
    rows_json = [_row(acc, k, gold is not None, gold_idx, ev_idx) for acc in sweep.accs if acc.tokens]
    points = [M.OperatingPoint(f"t={r['t']}", r["evidence"]["removal_net"], r["evidence"]["kept"],
                               r["evidence"]["witnessed"]) for r in rows_json if ev_idx]
    ecr = {s: M.ecr_at(points, tau) for s, tau in plan.taus.items()} if gold is not None else {}
    out = sys.stderr if args.json == "-" else sys.stdout
    if rows_json:
        header, rows = _table(rows_json, k, gold is not None)
        print(table(rows, header), file=out)
        print(f"encoder {encoder['name']}, layers {'->'.join(x.upper() for x in plan.layers)}, {plural(n_traj)}", file=out)
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


def _run_dask(args: argparse.Namespace, plan: _Plan) -> int:
    """``lam-ref sweep --workers N | --scheduler ADDRESS | --resume DIR`` (docs/scale.md): one Dask
    task per input file (:func:`sweep_file`, the serial :func:`measure_trajectory` on each of its
    trajectories) through the per-file driver of :mod:`lam_ref.distributed.cli`; the driver folds
    the contributions in input order with the serial fold and writes the serial report."""
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
        sweep, encoder = _Sweep(plan), None
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


def sweep_file(index: int, path: str, tid: str, *, fmt: str | None, encoder_name: str, device: str | None,
               plan: _Plan, batch_size: int, gold_path: str | None, gold_sha256: str | None,
               run_dir: str, backend: str = "torch") -> dict[str, Any]:
    """The Dask task of one input file: its trajectories' contributions (:func:`measure_trajectory`,
    serialised exactly by :func:`contribution_to_json`) written to ``files/<index>.json`` in the run
    folder. The gold patches are read once per worker process and must have the digest the driver
    validated."""
    import os

    from ..distributed.trajectories import load_for_task, write_file_output

    trajs, failures = load_for_task(path, tid, fmt)
    encoder = get_encoder(encoder_name, device, backend)
    gold = cached_gold(gold_path, gold_sha256) if gold_path is not None and gold_sha256 is not None else None
    reuse = EncodingCache(enabled=plan.configs[0].reuse if plan.configs else True)  # within the file (SPEC §4.4)
    contributions = [contribution_to_json(measure_trajectory(t, encoder, plan, batch_size, gold, reuse))
                     for t in trajs]
    write_file_output(run_dir, {"index": index, "path": path, "contributions": contributions, "failures": failures,
                                "encoder": encoder.describe()})
    return {"index": index, "trajectories": len(contributions), "failed": len(failures), "pid": os.getpid()}


def _row(acc: _Acc, k: int, with_gold: bool, gold_idx: list[int], ev_idx: list[int]) -> dict[str, Any]:
    """One JSON row of the sweep (the set each number is over: :data:`SET_NOTES`)."""
    rem = M.removal_of_counts(acc.tokens)
    dist = np.concatenate(acc.dist) if acc.dist else np.zeros(0)
    wts = np.concatenate(acc.wts).astype(np.int64) if acc.wts else np.zeros(0, np.int64)
    ms = M.merge_distance_stats(dist, wts, acc.t)
    rec = float(np.concatenate(acc.recall).mean()) if sum(r.size for r in acc.recall) else None
    row: dict[str, Any] = {
        "t": acc.t,
        "delta": delta_from_t(acc.t),
        "mean_delta_hat_over_delta": float(np.mean(acc.ratio)) if acc.ratio else 0.0,
        "delta_hat": acc.delta_hat,
        "keep": acc.kept / acc.chunks if acc.chunks else 1.0,
        f"recall_at_{k}": rec,
        "evidence_hit": None if not acc.hit_n else {
            "k": k,
            "questions": acc.hit_n,
            "full_hits": acc.hit_full,
            "substituted_hits": acc.hit_sub,
            "full": acc.hit_full / acc.hit_n,
            "substituted": acc.hit_sub / acc.hit_n,
        },
        "removal_net": rem.net,
        "removal_gross": rem.gross,
        "merge_distances": ms.to_json(),
        "trajectories": len(acc.tokens),
    }
    if with_gold:
        gold_rem = M.removal_of_counts([acc.tokens[i] for i in gold_idx])
        ev_rem = M.removal_of_counts([acc.tokens[i] for i in ev_idx])
        exact, relaxed = E.summarize_evidence(acc.exact).to_json(), E.summarize_evidence(acc.relaxed).to_json()
        if not exact["witnessed"]:  # nothing to retain: no retention figure (not a vacuous 100 %)
            for d in (exact, relaxed):
                d.update(micro=None, macro_intact=None)
        row["evidence"] = {
            **exact,
            "over": "evidence",
            "removal_net": ev_rem.net if ev_idx else None,
            "removal_gross": ev_rem.gross if ev_idx else None,
            "relaxed": relaxed,
            "gold_set": {"trajectories": len(gold_idx), "removal_net": gold_rem.net if gold_idx else None,
                         "removal_gross": gold_rem.gross if gold_idx else None},
        }
    return row


def _table(rows_json: list[dict[str, Any]], k: int, with_gold: bool) -> tuple[list[str], list[list[Any]]]:
    hits = any(r["evidence_hit"] for r in rows_json)
    header = ["t", "δ", "mean δ̂/δ", "keep", f"R@{k}", "removed (net)", "median d", "p99 d"]
    if hits:
        header += [f"hit@{k} full", f"hit@{k} subst"]
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
        if with_gold:
            ev = r["evidence"]
            none = ev["micro"] is None
            cells += [pct(ev["removal_net"]), pct(ev["micro"], 3), "—" if none else ev["lost"],
                      pct(ev["macro_intact"], 1), pct(ev["relaxed"]["micro"], 3),
                      "—" if none else ev["relaxed"]["lost"]]
        rows.append(cells)
    return header, rows
