"""``lam-ref sweep``: merge-threshold sweep over real trajectories (paper Table 3, Table 11, Table 17).

Each trajectory is loaded, chunked and encoded **once**; every threshold then reruns only L1 and
L0 on the cached embeddings (one trajectory in memory at a time). Rows, one per threshold:
``t``, ``δ``, mean ``δ̂/δ`` over trajectories with a merge, keep (retained-window fraction),
recall@k of retrieval after substitution with the trajectory's own action texts as queries
(App. F.2), net token removal, the token-weighted median/p99 merge distance (Table 11) and, with
``--gold``, evidence retention (micro, lines lost, intact trajectories; App. F.3) and
``ECR@τ`` over the swept thresholds (eq. 8, Table 17). All metric arithmetic is
:mod:`lam_ref.metrics`.

``--gold`` takes a JSON object ``{id: patch}``, a JSONL file of ``{"instance_id", "patch"}``
lines (SWE-bench style) or a directory of ``<id>.patch`` / ``<id>.diff`` files; a trajectory is
matched by its id, then by the last component of its id.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

import numpy as np

from .. import metrics as M
from ..geometry import LamValueError, delta_from_t
from ..text.encoders import DEFAULT_BATCH_SIZE, DEFAULT_ENCODER, get_encoder
from ..text.loaders import FORMATS, LoadFailure
from ..text.pipeline import CompactionConfig, Encoded, compact_trajectory
from ..text.records import Trajectory
from ._common import loaded_trajectories, table, write_json
from .compact import parse_layers

QUERY_ROLES = ("action", "assistant")


def load_gold(path: str) -> dict[str, str]:
    """Gold patches by id from a JSON object, a JSONL file or a directory of .patch/.diff files."""
    p = Path(path)
    if not p.exists():
        raise LamValueError(f"--gold path {path!r} does not exist")
    out: dict[str, str] = {}
    if p.is_dir():
        for f in sorted(list(p.rglob("*.patch")) + list(p.rglob("*.diff"))):
            out[f.stem] = f.read_text(encoding="utf-8", errors="replace")
        if not out:
            raise LamValueError(f"--gold directory {path!r} holds no .patch or .diff files")
        return out
    text = p.read_text(encoding="utf-8")
    try:
        obj = json.loads(text)
    except json.JSONDecodeError:
        obj = None
    if isinstance(obj, dict):
        for k, v in obj.items():
            if not isinstance(v, str):
                raise LamValueError(f"--gold {path!r}: $.{k}: expected a patch string, got {type(v).__name__}")
            out[str(k)] = v
        return out
    for n, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            item = json.loads(line)
        except json.JSONDecodeError as exc:
            raise LamValueError(f"--gold {path!r}: line {n}: invalid JSON: {exc.msg}") from exc
        if not isinstance(item, dict) or not isinstance(item.get("instance_id"), str) or not isinstance(item.get("patch"), str):
            raise LamValueError(f"--gold {path!r}: line {n}: expected an object with string 'instance_id' and 'patch'")
        out[item["instance_id"]] = item["patch"]
    if not out:
        raise LamValueError(f"--gold {path!r} holds no patches")
    return out


def gold_for(traj: Trajectory, gold: dict[str, str]) -> str | None:
    """The gold patch of a trajectory: by id, then by the id's last path component (and without
    a LoCoMo-style ``:sample`` suffix)."""
    for key in (traj.id, traj.id.rsplit("/", 1)[-1], traj.id.split(":", 1)[0]):
        if key in gold:
            return gold[key]
    return None


def register(sub: argparse._SubParsersAction) -> argparse.ArgumentParser:
    p = sub.add_parser("sweep", help="merge-threshold sweep over trajectories (Table 3, 11, 17)")
    p.add_argument("paths", nargs="+", metavar="PATH", help="trajectory files or directories")
    p.add_argument("--thresholds", "-t", type=float, nargs="+", default=[0.99, 0.98, 0.96, 0.95, 0.90],
                   help="cosine thresholds (default: Table 3's 0.99 0.98 0.96 0.95 0.90)")
    p.add_argument("--encoder", default=DEFAULT_ENCODER, help=f"encoder (default {DEFAULT_ENCODER})")
    p.add_argument("--layers", default="l1,l0", help="layer order (default l1,l0)")
    p.add_argument("--format", choices=FORMATS, help="loader (default: detect per file)")
    p.add_argument("--gold", metavar="PATH", help="gold patches: JSON {id: patch}, JSONL, or a directory")
    p.add_argument("--taus", type=str, nargs="+", default=["1.0", "0.999", "0.99", "0.95"],
                   help="retention floors τ for ECR@τ (default 1.0 0.999 0.99 0.95)")
    p.add_argument("--recall-k", type=int, default=10, help="k of recall@k (default 10; 0 to skip)")
    p.add_argument("--device", help="encoder device")
    p.add_argument("--batch-size", type=int, default=DEFAULT_BATCH_SIZE, help="encoding batch size (default 64)")
    p.add_argument("--json", metavar="OUT", help="write rows as JSON (- for stdout)")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.set_defaults(func=run)
    return p


class _Acc:
    """Per-threshold accumulators over trajectories (sums, never averages of ratios)."""

    def __init__(self, t: float) -> None:
        self.t = t
        self.orig: list[int] = []
        self.net: list[int] = []
        self.gross: list[int] = []
        self.chunks = 0
        self.kept = 0
        self.ratio: list[float] = []
        self.delta_hat = 0.0
        self.dist: list[np.ndarray] = []
        self.wts: list[np.ndarray] = []
        self.recall: list[np.ndarray] = []
        self.evidence: list[M.EvidenceResult] = []


def run(args: argparse.Namespace) -> int:
    layers = parse_layers(args.layers)
    thresholds = list(dict.fromkeys(float(t) for t in args.thresholds))
    configs = [CompactionConfig(threshold=t, layers=layers, batch_size=args.batch_size, per_layer=False)
               for t in thresholds]
    gold = load_gold(args.gold) if args.gold else None
    encoder = get_encoder(args.encoder, args.device)
    accs = [_Acc(t) for t in thresholds]
    failures: list[LoadFailure] = []
    n_traj = 0
    unmatched = 0
    for item in loaded_trajectories(args.paths, args.format, "sweep", failures, show_warnings=False):
        n_traj += 1
        cache: dict[str, Encoded] = {}
        queries = None
        if args.recall_k > 0:
            qtexts = [r.text for r in item.records if r.role in QUERY_ROLES and r.text.strip()]
            queries = encoder.encode(qtexts, batch_size=args.batch_size) if qtexts else None
        patch = gold_for(item, gold) if gold is not None else None
        if gold is not None and patch is None:
            unmatched += 1
        for acc, cfg in zip(accs, configs):
            res = compact_trajectory(item, encoder, cfg, progress=not args.no_progress and acc is accs[0],
                                     cache=cache)
            acc.orig.append(res.tokens_original)
            acc.net.append(res.tokens_residual_net)
            acc.gross.append(res.tokens_residual_gross)
            acc.chunks += res.chunks
            acc.kept += res.kept_chunks
            if res.chunks and res.kept_chunks < res.chunks:
                acc.ratio.append(res.delta_hat / cfg.delta)
            acc.delta_hat = max(acc.delta_hat, res.delta_hat)
            ids = res.deleted_ids
            acc.dist.append(res.distances[ids])
            acc.wts.append(res.chunk_tokens[ids])
            enc = cache.get("orig" if layers[0] == "l1" else "l0")
            if queries is not None and enc is not None and res.chunks:
                acc.recall.append(M.recall_at_k_per_query(enc.embeddings, queries, res.pi, args.recall_k))
            if patch is not None:
                originals = [item.records[i].text for i in item.observation_indices]
                acc.evidence.append(M.evidence_retention(patch, originals, res.observation_residuals()))
    rows_json: list[dict[str, Any]] = []
    points: list[M.OperatingPoint] = []
    for acc in accs:
        if not acc.orig:
            continue
        rem = M.corpus_removal(acc.orig, acc.net, acc.gross)
        dist = np.concatenate(acc.dist) if acc.dist else np.zeros(0)
        wts = np.concatenate(acc.wts).astype(np.int64) if acc.wts else np.zeros(0, np.int64)
        ms = M.merge_distance_stats(dist, wts, acc.t)
        rec = float(np.concatenate(acc.recall).mean()) if acc.recall and sum(r.size for r in acc.recall) else None
        row: dict[str, Any] = {
            "t": acc.t,
            "delta": delta_from_t(acc.t),
            "mean_delta_hat_over_delta": float(np.mean(acc.ratio)) if acc.ratio else 0.0,
            "delta_hat": acc.delta_hat,
            "keep": acc.kept / acc.chunks if acc.chunks else 1.0,
            f"recall_at_{args.recall_k}": rec,
            "removal_net": rem.net,
            "removal_gross": rem.gross,
            "merge_distances": ms.to_json(),
            "trajectories": len(acc.orig),
        }
        if acc.evidence:
            ev = M.summarize_evidence(acc.evidence)
            row["evidence"] = ev.to_json()
            points.append(M.OperatingPoint(f"t={acc.t}", rem.net, ev.kept, ev.witnessed))
        rows_json.append(row)
    ecr = {tau: M.ecr_at(points, tau) for tau in args.taus} if points else {}
    out = sys.stderr if args.json == "-" else sys.stdout
    header = ["t", "δ", "mean δ̂/δ", "keep", f"R@{args.recall_k}", "removed (net)", "median d", "p99 d"]
    if gold is not None:
        header += ["evidence", "lost", "intact"]
    rows = []
    for r in rows_json:
        md = r["merge_distances"]
        cells = [
            r["t"], f"{r['delta']:.4f}", f"{r['mean_delta_hat_over_delta']:.3f}", f"{r['keep']:.3f}",
            "—" if r[f"recall_at_{args.recall_k}"] is None else f"{r[f'recall_at_{args.recall_k}']:.4f}",
            f"{100 * r['removal_net']:.2f}%",
            "—" if md["median"] is None else f"{md['median']:.4f}",
            "—" if md["p99"] is None else f"{md['p99']:.4f}",
        ]
        if gold is not None:
            ev = r.get("evidence")
            cells += ["—", "—", "—"] if ev is None else [
                f"{100 * ev['micro']:.3f}%", ev["lost"], f"{100 * ev['macro_intact']:.1f}%"]
        rows.append(cells)
    if rows:
        print(table(rows, header), file=out)
        print(f"encoder {encoder.name}, layers {'->'.join(x.upper() for x in layers)}, {n_traj} trajectories", file=out)
    if ecr:
        print("ECR@τ (max net removal with micro evidence retention >= τ): "
              + ", ".join(f"τ={tau}: {M.format_ecr(v)}" for tau, v in ecr.items()), file=out)
    if gold is not None and unmatched:
        print(f"lam-ref sweep: {unmatched} trajectories have no gold patch", file=sys.stderr)
    if args.json:
        write_json({
            "encoder": encoder.describe(),
            "layers": list(layers),
            "rows": rows_json,
            "ecr": {str(k): v for k, v in ecr.items()},
            "failures": [f.to_json() for f in failures],
        }, args.json)
    if n_traj == 0 and not failures:
        print("lam-ref sweep: no trajectories found", file=sys.stderr)
        return 1
    return 1 if failures else 0
