"""LAM beside its peers on the same trajectories, the same tokenizer, the same encoder and the same
evidence criterion (paper §3.1–3.2, Figure 3, Tables 14 and 17, App. D, F.8; SPEC §12, §16;
``lam-ref compare``): the default methods and operating points, :func:`compare_methods` (every
method at every operating point, one :class:`Row` each), the JSON rows and ``ECR@τ``
(:func:`row_json`, :func:`best_and_ecr`), the encoder wrapper that counts what each method encodes,
and the removal-against-evidence figure (:func:`plot`).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from pathlib import Path
from typing import Any

import numpy as np

from .. import evidence as E
from .. import metrics as M
from ..plots import pyplot
from ..text.chunking import get_tokenizer
from ..text.encoders import Encoder
from ..text.pipeline import CompactionConfig, Encoded, encode_chunks
from ..text.records import Trajectory
from ..text.reuse import EncodingCache
from . import gem as G
from . import lre as R
from . import semdedup as S
from .base import PeerResult, step_units
from .lam import run_lam
from .masking import mask

__all__ = ["CHUNK_METHODS", "COLORS", "DEFAULT_METHODS", "DEFAULT_OPS", "DEFAULT_TAUS", "LAM_METHODS", "ComparePlan",
           "Comparison", "CountingEncoder", "Row", "best_and_ecr", "compare_methods", "plot", "row_json", "row_label"]

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


# ----------------------------------------------------------------------------------------------
# the comparison


@dataclass(frozen=True)
class ComparePlan:
    """What to compare: the methods, their operating points (:data:`DEFAULT_OPS`' keys), the
    retention floors of ``ECR@τ``, SemDeDup's seeds, clustering scope, cluster size or count and
    survivor rule, GEM's minimum history, and ``config``: LAM's layer settings, the object ``lam-ref
    compact`` builds from the same options (its threshold and layers are set per row)."""

    methods: list[str]
    ops: dict[str, list[Any]]
    taus: dict[str, Fraction]
    seeds: int
    config: CompactionConfig
    gem_min_blocks: int = 16
    semdedup_scope: str = "corpus"
    per_cluster: int = S.DEFAULT_PER_CLUSTER
    semdedup_k: int | None = None
    semdedup_keep: str = S.DEFAULT_KEEP


@dataclass
class Comparison:
    """The rows of a comparison (one per method and operating point, in first-run order), the
    seconds spent encoding, and the run's encoding cache (windows encoded and reused, SPEC §4.4)."""

    rows: list[Row]
    encode_s: float
    reuse: EncodingCache


def compare_methods(trajs: list[Trajectory], plan: ComparePlan, *, encoder: CountingEncoder | None,
                    lines: dict[str, list[str]] | None = None, lre_model: Any = None,
                    on_trajectory: Callable[[], None] | None = None, on_batch: Callable[[int], None] | None = None,
                    on_windows: Callable[[int], None] | None = None) -> Comparison:
    """Run every method of ``plan`` at each operating point on ``trajs`` (paper §3.1–3.2, Table 17):
    each trajectory's observation windows are cut and encoded once (shared by ``lam``, ``l1`` and
    ``semdedup``), GEM encodes each eligible trajectory's blocks once, SemDeDup clusters once per
    seed and scope unit after all trajectories. ``lines``: the evidence lines of each trajectory id
    with a gold patch (``None``: no evidence columns). ``on_trajectory``, ``on_batch``,
    ``on_windows``: progress (a trajectory done, an encoder batch, the windows of a trajectory)."""
    tok = get_tokenizer()
    gem_cfgs = {tau: G.GemConfig(tau=tau, min_blocks=plan.gem_min_blocks) for tau in plan.ops["tau"]}
    rows: dict[tuple[str, str], Row] = {}
    reuse = EncodingCache(enabled=plan.config.reuse)  # one per run (SPEC §4.4)
    encode_s = 0.0

    def row(method: str, op: dict[str, Any]) -> Row:
        key = (method, row_label(method, op))
        if key not in rows:
            rows[key] = Row(method, op)
        return rows[key]

    def timed(fn, *a, **kw) -> PeerResult:
        t0 = time.perf_counter()
        res = fn(*a, **kw)
        res.wall_s = time.perf_counter() - t0
        return res

    encoded: list[Encoded | None] = []
    for t in trajs:
        ln = lines.get(t.id) if lines is not None else None
        enc = None
        if CHUNK_METHODS & set(plan.methods):
            assert encoder is not None
            encoder.current = "chunks"
            t0 = time.perf_counter()
            items = [(i, t.records[i].turn, t.records[i].text) for i in t.observation_indices]
            enc = encode_chunks(items, encoder, tok, window=plan.config.window, batch_size=plan.config.batch_size,
                                fit=plan.config.fit_window, reuse=reuse, on_batch=on_batch)
            if on_windows is not None:
                on_windows(len(enc.chunks))
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
                    row("lre", {"budget": b}).add(timed(R.lre, t, b, tok, model=lre_model), ln)
            elif method == "gem":
                _, units, _ = step_units(t)
                vectors = None
                if G.protocol_problem(t, units) is None and len(units) >= plan.gem_min_blocks:
                    assert encoder is not None
                    encoder.current = "gem_blocks"
                    t0 = time.perf_counter()
                    vectors = G.gem_vectors(t, encoder, batch_size=plan.config.batch_size)
                    encode_s += time.perf_counter() - t0
                for tau, cfg in gem_cfgs.items():
                    row("gem", {"tau": tau}).add(timed(G.gem, t, tok, cfg, vectors=vectors), ln)
        if on_trajectory is not None:
            on_trajectory()
    if "semdedup" in plan.methods:
        _semdedup(trajs, encoded, plan, tok, lines, row)
    return Comparison(list(rows.values()), encode_s, reuse)


def best_and_ecr(rows_json: list[dict[str, Any]], plan: ComparePlan,
                 with_gold: bool) -> tuple[dict[str, float | None], dict[str, dict[str, float | None]]]:
    """Per method: its best net removal over its operating points (unconstrained) and, with gold,
    ``ECR@τ`` at each floor of ``plan.taus`` (eq. 8; removal and retention over the evidence set)."""
    ecr: dict[str, dict[str, float | None]] = {}
    best: dict[str, float | None] = {}
    for method in plan.methods:
        mine = [r for r in rows_json if r["method"] == method]
        best[method] = max((r["removal_net"] for r in mine if r["removal_net"] is not None), default=None)
        if with_gold:
            pts = [M.OperatingPoint(r["label"], r["evidence"]["removal_net"], r["evidence"]["kept"],
                                    r["evidence"]["witnessed"]) for r in mine if r["evidence"]["removal_net"] is not None]
            ecr[method] = {s: M.ecr_at(pts, tau) for s, tau in plan.taus.items()} if pts else {s: None for s in plan.taus}
    return best, ecr


def row_label(method: str, op: dict[str, Any]) -> str:
    """An operating point as a label: ``t=0.95``, ``k=5``; ``—`` for none."""
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


def row_json(row: Row, with_gold: bool) -> dict[str, Any]:
    """One JSON row of the comparison (removal, evidence over the evidence set, stability across seeds)."""
    seeds = sorted(row.per_seed)
    n = len(seeds)
    per = {s: M.removal_of_counts(row.per_seed[s]["tokens"]) for s in seeds}
    nets = [r.net for r in per.values() if r is not None]
    out: dict[str, Any] = {
        "method": row.method,
        "operating_point": row.op,
        "label": row_label(row.method, row.op),
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


def _semdedup(trajs, encoded, plan: ComparePlan, tok, lines, row) -> None:
    """SemDeDup over all seeds and eps (one clustering per seed and scope unit, shared by every eps)."""
    offsets = np.cumsum([0] + [e.embeddings.shape[0] if e is not None else 0 for e in encoded])
    groups = [list(range(len(trajs)))] if plan.semdedup_scope == "corpus" else [[j] for j in range(len(trajs))]
    for seed in range(plan.seeds):
        for grp in groups:
            embs = [encoded[j].embeddings for j in grp if encoded[j] is not None]
            x = np.concatenate(embs) if embs else np.zeros((0, 1), np.float32)
            t0 = time.perf_counter()
            k = S.n_clusters_for(x.shape[0], plan.per_cluster) if plan.semdedup_k is None else min(plan.semdedup_k,
                                                                                                     x.shape[0])
            clus = S.spherical_kmeans(x, k, seed) if x.shape[0] else None
            cluster_s = time.perf_counter() - t0
            base = offsets[grp[0]]
            for eps in plan.ops["eps"]:
                t0 = time.perf_counter()
                dele = (S.semdedup_deleted(x, eps, seed, clustering=clus, keep=plan.semdedup_keep) if clus is not None
                        else np.zeros(0, np.int64))
                rule_s = time.perf_counter() - t0
                share = (cluster_s + rule_s) / len(grp)
                for j in grp:
                    enc = encoded[j]
                    lo, hi = offsets[j] - base, offsets[j + 1] - base
                    local = (dele[(dele >= lo) & (dele < hi)] - lo).tolist()
                    t0 = time.perf_counter()
                    res = S.apply_deletions(trajs[j], enc.chunks if enc is not None else [], local, tok,
                                            {"eps": eps}, extra={"seed": seed, "scope": plan.semdedup_scope})
                    res.wall_s = time.perf_counter() - t0 + share
                    row("semdedup", {"eps": eps}).add(res, lines.get(trajs[j].id) if lines is not None else None, seed)


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
