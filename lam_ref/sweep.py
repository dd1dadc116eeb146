"""The merge-threshold sweep over real trajectories, trajectory by trajectory (paper Table 3,
Table 11, Tables 14 and 17; SPEC §12; ``lam-ref sweep``).

Each trajectory is chunked and encoded **once**; every threshold then reruns only L1 and L0 on the
cached embeddings (:func:`measure_trajectory`, one trajectory's contribution to every row).
:class:`Sweep` folds the contributions in load order into one :class:`ThresholdAcc` per threshold
(sums, never averages of ratios) and :func:`sweep_row` turns each into a JSON row; the sets each
number is over are :data:`SET_NOTES`. :func:`sweep_file` is the Dask task of one input file
(contributions serialised exactly by :func:`contribution_to_json`). Recall@k (App. F.2) uses the
trajectory's own action/assistant texts, else its LoCoMo QA questions, which also give the QA
evidence hit rate; the metric arithmetic is :mod:`lam_ref.metrics`, the evidence arithmetic
:mod:`lam_ref.evidence`.
"""

from __future__ import annotations

import base64
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

import numpy as np

from . import evidence as E
from . import metrics as M
from .evidence import cached_gold, gold_key
from .geometry import delta_from_t
from .text.encoders import get_encoder
from .text.pipeline import CompactionConfig, Encoded, compact_trajectory
from .text.records import Trajectory
from .text.reuse import EncodingCache

__all__ = ["QUERY_ROLES", "SET_NOTES", "Sweep", "SweepPlan", "ThresholdAcc", "contribution_from_json",
           "contribution_to_json", "measure_trajectory", "sweep_file", "sweep_row"]

QUERY_ROLES = ("action", "assistant")

#: What each trajectory set of the report covers (written into the JSON as ``sets``).
SET_NOTES = {
    "all": "every loaded trajectory: rows[].trajectories, keep, recall_at_k, evidence_hit, removal_net, "
           "removal_gross, merge_distances, delta_hat, mean_delta_hat_over_delta; rows[].qa_evidence over "
           "those of them with LoCoMo QA items",
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


@dataclass(frozen=True)
class SweepPlan:
    """The validated arguments of one sweep."""

    layers: tuple[str, ...]
    configs: list[CompactionConfig]
    taus: dict[str, Fraction]
    recall_k: int
    gold: dict[str, str] | None
    files: list = field(default_factory=list)


# ----------------------------------------------------------------------------------------------
# accumulation


@dataclass
class ThresholdAcc:
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
    qa: list[E.EvidenceResult] = field(default_factory=list)  # one per trajectory with LoCoMo QA items


def measure_trajectory(item: Trajectory, encoder: Any, plan: SweepPlan, batch_size: int,
                       gold: dict[str, str] | None, reuse: EncodingCache | None = None,
                       on_batch: Any = None) -> dict[str, Any]:
    """One trajectory's contribution to every row of the sweep (the serial inner loop; the Dask
    run calls it per file on the workers, :mod:`lam_ref.distributed`): per threshold, token
    counts, kept windows, merge distances, recall and QA hits, evidence results; and whether the
    trajectory has a gold patch and witnessed evidence. :meth:`Sweep.add` folds it in. ``reuse``:
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
            "qa": E.qa_evidence_retention(item, res.observation_residuals()),  # LoCoMo QA evidence turns kept
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
            row["exact"], row["relaxed"] = E.gold_evidence(item, res.observation_residuals(), lines)
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
                     "qa": _evidence_json(r.get("qa")),
                     "delta_hat": float(r["delta_hat"]), "ratio": None if r["ratio"] is None else float(r["ratio"]),
                     "tokens": [int(x) for x in r["tokens"]], "chunks": int(r["chunks"]), "kept": int(r["kept"])})
    return {k: v for k, v in c.items() if k != "orig"} | {"rows": rows, "windows": int(c["windows"])}


def contribution_from_json(obj: dict[str, Any]) -> dict[str, Any]:
    """The inverse of :func:`contribution_to_json`."""
    rows = [{**r, "dist": _array_from(r["dist"]), "wts": _array_from(r["wts"]),
             "recall": None if r["recall"] is None else _array_from(r["recall"]),
             "exact": _evidence_from(r["exact"]), "relaxed": _evidence_from(r["relaxed"]),
             "qa": _evidence_from(r.get("qa"))} for r in obj["rows"]]
    return {**obj, "rows": rows}


class Sweep:
    """The fold over trajectories in load order: one :class:`ThresholdAcc` per threshold and the sets
    (:data:`SET_NOTES`) by trajectory index."""

    def __init__(self, plan: SweepPlan) -> None:
        self.plan = plan
        self.accs = [ThresholdAcc(cfg.threshold) for cfg in plan.configs]
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
            if r.get("qa") is not None:
                acc.qa.append(r["qa"])


    def rows(self) -> list[dict[str, Any]]:
        """The JSON rows, one per threshold that saw a trajectory (:func:`sweep_row`)."""
        k, with_gold = self.plan.recall_k, self.plan.gold is not None
        return [sweep_row(acc, k, with_gold, self.gold_idx, self.ev_idx) for acc in self.accs if acc.tokens]

    def ecr(self, rows: list[dict[str, Any]]) -> dict[str, Any]:
        """``ECR@τ`` at each floor of the plan (eq. 8, Table 17): the largest net removal over the
        evidence set among the rows whose exact micro retention is at least τ; ``{}`` without gold."""
        if self.plan.gold is None:
            return {}
        points = [M.OperatingPoint(f"t={r['t']}", r["evidence"]["removal_net"], r["evidence"]["kept"],
                                   r["evidence"]["witnessed"]) for r in rows if self.ev_idx]
        return {s: M.ecr_at(points, tau) for s, tau in self.plan.taus.items()}


def sweep_file(index: int, path: str, tid: str, *, fmt: str | None, encoder_name: str, device: str | None,
               plan: SweepPlan, batch_size: int, gold_path: str | None, gold_sha256: str | None,
               run_dir: str, backend: str = "torch") -> dict[str, Any]:
    """The Dask task of one input file: its trajectories' contributions (:func:`measure_trajectory`,
    serialised exactly by :func:`contribution_to_json`) written to ``files/<index>.json`` in the run
    folder. The gold patches are read once per worker process and must have the digest the driver
    validated."""
    import os

    from .distributed.trajectories import load_for_task, write_file_output

    trajs, failures = load_for_task(path, tid, fmt)
    encoder = get_encoder(encoder_name, device, backend)
    gold = cached_gold(gold_path, gold_sha256) if gold_path is not None and gold_sha256 is not None else None
    reuse = EncodingCache(enabled=plan.configs[0].reuse if plan.configs else True)  # within the file (SPEC §4.4)
    contributions = [contribution_to_json(measure_trajectory(t, encoder, plan, batch_size, gold, reuse))
                     for t in trajs]
    write_file_output(run_dir, {"index": index, "path": path, "contributions": contributions, "failures": failures,
                                "encoder": encoder.describe()})
    return {"index": index, "trajectories": len(contributions), "failed": len(failures), "pid": os.getpid()}



def sweep_row(acc: ThresholdAcc, k: int, with_gold: bool, gold_idx: list[int], ev_idx: list[int]) -> dict[str, Any]:
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
        # LoCoMo QA evidence turns kept verbatim (lam_ref.evidence.qa_evidence_retention), pooled over the
        # trajectories with QA items: what compact's TOTAL reports as qa_evidence
        "qa_evidence": E.retention_json(E.summarize_evidence(acc.qa)) if acc.qa else None,
    }
    if with_gold:
        gold_rem = M.removal_of_counts([acc.tokens[i] for i in gold_idx])
        ev_rem = M.removal_of_counts([acc.tokens[i] for i in ev_idx])
        exact, relaxed = (E.retention_json(E.summarize_evidence(acc.exact)),
                          E.retention_json(E.summarize_evidence(acc.relaxed)))
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
