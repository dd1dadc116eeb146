"""``lam-ref pairs``: every pair of observation windows within δ, per trajectory or across a pooled
corpus (the paper's near-duplicate control on LoCoMo, App. K: 2 pairs at cosine >= 0.95 among
17,296,021 with bge-base; SPEC §1, §2).

Windows are made and encoded exactly as ``lam-ref compact`` makes them (512-token cl100k windows of
the observation records, SPEC §3, §4). A pair ``(i, j)`` is within δ iff the merge rule of SPEC §2
holds: ``sum((e_i - e_j)**2) <= 2 - 2t`` in float64, inclusive. Without ``--pool`` only pairs inside
one trajectory count (LAM never matches across trajectories); with ``--pool`` every pair of the
corpus counts, within and across trajectories, and the report splits the two. The closest pairs are
listed with their texts. Exit status: 0, 1 when some inputs failed, 2 for a usage error.
"""

from __future__ import annotations

import argparse
import heapq
import sys
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..geometry import LamValueError, delta_from_t, delta_sq, sq_dist_rows, validate_threshold
from ..tables import plural
from ..text.chunking import get_tokenizer
from ..text.encoders import get_encoder
from ..text.loaders import LoadFailure
from ..text.pipeline import encode_chunks
from ..text.reuse import EncodingCache
from ._common import (
    EmbeddingSaver,
    RunProgress,
    add_device,
    add_encoder,
    add_format,
    add_json,
    add_mkdir,
    add_progress,
    add_reuse,
    add_save_embeddings,
    add_threshold,
    add_window,
    plan_trajectory_files,
    planned_trajectories,
    printable,
    refuse_outputs_in_inputs,
    reuse_line,
    table,
    validate_batch_size,
    validate_json_dest,
    validate_output_file,
    write_json,
)

#: Rows of the Gram matrix computed at once (memory: BLOCK × N float64).
BLOCK = 1024
#: Pairs whose approximate squared distance is this close to δ² are decided by the exact rule.
EXACT_MARGIN = 1e-6


@dataclass
class PairCount:
    """Pairs of windows looked at and found within δ, split by where they lie."""

    pairs_within_trajectories: int = 0
    pairs_across_trajectories: int = 0
    near_within: int = 0
    near_across: int = 0

    def to_json(self) -> dict[str, int]:
        return {
            "pairs_within_trajectories": self.pairs_within_trajectories,
            "pairs_across_trajectories": self.pairs_across_trajectories,
            "near_within": self.near_within,
            "near_across": self.near_across,
            "pairs_total": self.pairs_within_trajectories + self.pairs_across_trajectories,
            "near_total": self.near_within + self.near_across,
        }


def near_pairs(e: np.ndarray, t: float, groups: np.ndarray | None = None, pool: bool = True,
               top: int = 10, text_ids: np.ndarray | None = None) -> tuple[PairCount, list[tuple[float, int, int]]]:
    """All pairs ``i < j`` of rows of ``e`` within δ by the rule of SPEC §2, counted exactly.

    Args:
        e: unit float32 rows (N, D).
        t: cosine threshold in [-1, 1].
        groups: group (trajectory) number of each row; ``None``: one group.
        pool: count pairs across groups too (else only pairs inside a group).
        top: how many of the closest pairs to return.
        text_ids: one id per row, equal for rows of equal text; when given, pairs of equal text are
            counted but not returned among the closest (``--top-distinct``).

    Returns:
        The counts, and up to ``top`` closest pairs ``(distance, i, j)`` among the counted ones,
        closest first (ties by ``i``, then ``j``).

    Raises:
        LamValueError: a bad threshold.
    """
    t = validate_threshold(t, "--threshold")
    d2 = delta_sq(t)
    e = np.asarray(e, dtype=np.float32)
    n = e.shape[0]
    g = np.zeros(n, dtype=np.int64) if groups is None else np.asarray(groups, dtype=np.int64)
    counts = PairCount()
    _, sizes = np.unique(g, return_counts=True)
    within_total = int((sizes * (sizes - 1) // 2).sum())
    counts.pairs_within_trajectories = within_total
    counts.pairs_across_trajectories = n * (n - 1) // 2 - within_total if pool else 0
    best: list[tuple[float, int, int]] = []  # max-heap of the closest pairs via negated keys
    e64 = e.astype(np.float64)
    for a in range(0, n, BLOCK):
        b = min(n, a + BLOCK)
        approx = 2.0 - 2.0 * (e64[a:b] @ e64.T)  # rows a..b against every row
        rows, cols = np.nonzero(approx <= d2 + EXACT_MARGIN)
        rows = rows + a
        keep = cols > rows
        if not pool:
            keep &= g[rows] == g[cols]
        rows, cols = rows[keep], cols[keep]
        if rows.size == 0:
            continue
        sq = sq_dist_rows(e, rows, e[cols])  # the exact rule decides every candidate
        ok = sq <= d2
        rows, cols, sq = rows[ok], cols[ok], sq[ok]
        same = g[rows] == g[cols]
        counts.near_within += int(same.sum())
        counts.near_across += int((~same).sum())
        if top > 0:
            if text_ids is not None:
                distinct = np.flatnonzero(text_ids[rows] != text_ids[cols])
                order = distinct[np.lexsort((cols[distinct], rows[distinct], sq[distinct]))[:top]]
            else:
                order = np.lexsort((cols, rows, sq))[:top]
            for k in order.tolist():
                item = (-float(sq[k]), -int(rows[k]), -int(cols[k]))
                if len(best) < top:
                    heapq.heappush(best, item)
                elif item > best[0]:
                    heapq.heapreplace(best, item)
    closest = sorted((float(np.sqrt(-s)), -i, -j) for s, i, j in best)
    return counts, closest


def register(sub: argparse._SubParsersAction) -> argparse.ArgumentParser:
    p = sub.add_parser(
        "pairs",
        help="count window pairs within δ (per trajectory, or pooled across the corpus) and show the closest",
        description="All pairs of observation windows within δ = sqrt(2 - 2t), by the merge rule. "
                    "Exit status: 0 ok, 1 some inputs failed, 2 usage error or unusable input.",
    )
    p.add_argument("paths", nargs="+", metavar="PATH", help="trajectory files or directories")
    add_threshold(p)
    p.add_argument("--pool", action="store_true",
                   help="pool every trajectory: also count pairs across trajectories (default: within each)")
    p.add_argument("--top", type=int, default=10, help="closest pairs to list with their texts (default 10)")
    p.add_argument("--top-distinct", action="store_true",
                   help="list only pairs whose window texts differ (exact copies are still counted)")
    add_encoder(p)
    add_device(p)
    add_window(p)
    add_format(p)
    add_json(p)
    add_mkdir(p)
    add_save_embeddings(p)
    add_reuse(p)
    add_progress(p)
    p.set_defaults(func=run)
    return p


def _snippet(text: str, width: int = 100) -> str:
    one = " ".join(text.split())
    return one if len(one) <= width else one[: width - 1] + "…"


def run(args: argparse.Namespace) -> int:
    t = validate_threshold(args.threshold, "--threshold")
    validate_batch_size(args.batch_size)
    if isinstance(args.top, bool) or args.top < 0:
        raise LamValueError(f"--top must be an integer >= 0, got {args.top!r}")
    files = plan_trajectory_files(args.paths, args.format, "pairs")
    sidecar = str(EmbeddingSaver(args.save_embeddings).ids_path) if args.save_embeddings else None
    refuse_outputs_in_inputs(args.paths, [("--json", args.json), ("--save-embeddings", args.save_embeddings),
                                          ("--save-embeddings (its .ids.json)", sidecar)])
    validate_json_dest(args.json, mkdir=args.mkdir)
    if args.save_embeddings:
        validate_output_file(args.save_embeddings, "--save-embeddings", mkdir=args.mkdir)
    encoder = get_encoder(args.encoder, args.device, args.encoder_backend)
    tok = get_tokenizer()
    saver = EmbeddingSaver(args.save_embeddings or "unused.npy")
    failures: list[LoadFailure] = []
    texts: list[str] = []
    where: list[tuple[str, int, int]] = []  # (trajectory id, window id, record index)
    groups: list[int] = []
    progress = RunProgress(len(files), enabled=not args.no_progress, desc="pairs")
    reuse = EncodingCache(enabled=not args.no_reuse)  # one per run (SPEC §4.4)
    try:
        for g, item in enumerate(planned_trajectories(files, args.format, "pairs", failures, progress,
                                                      show_warnings=False)):
            its = [(i, item.records[i].turn, item.records[i].text or "") for i in item.observation_indices]
            enc = encode_chunks(its, encoder, tok, window=args.window, batch_size=args.batch_size, reuse=reuse,
                                on_batch=progress.encoding)
            saver.add(item.id, enc)
            texts.extend(c.text for c in enc.chunks)
            where.extend((item.id, c.id, c.record) for c in enc.chunks)
            groups.extend([g] * len(enc.chunks))
            progress.note(windows=len(enc.chunks), trajectories=1)
    finally:
        progress.close()
    e = saver.array()
    if args.save_embeddings:
        saver.save()
    text_ids = None
    if args.top_distinct:
        first: dict[str, int] = {}
        text_ids = np.asarray([first.setdefault(x, len(first)) for x in texts], dtype=np.int64)
    counts, closest = near_pairs(e if e.size else np.zeros((0, 1), np.float32), t,
                                 np.asarray(groups, dtype=np.int64), pool=args.pool, top=args.top,
                                 text_ids=text_ids)
    c = counts.to_json()
    out = sys.stderr if args.json == "-" else sys.stdout
    scope = "pooled corpus (within and across trajectories)" if args.pool else "within each trajectory"
    n_traj = len(set(groups))
    rows = [["within trajectories", c["pairs_within_trajectories"], c["near_within"]]]
    if args.pool:
        rows.append(["across trajectories", c["pairs_across_trajectories"], c["near_across"]])
        rows.append(["total", c["pairs_total"], c["near_total"]])
    print(f"{plural(len(texts), 'window')} in {plural(n_traj)}; encoder {encoder.name}; t={t} (δ={delta_from_t(t):.4f}); "
          f"{scope}", file=out)
    print(table(rows, ["pairs", "looked at", f"within δ (cos >= {t})"]), file=out)
    encoding = {"windows_encoded": reuse.encoded, "windows_reused": reuse.reused}
    print(reuse_line(encoding, reuse.enabled), file=out)
    listed = []
    for dist, i, j in closest:
        listed.append({"distance": dist, "cosine": 1.0 - dist * dist / 2.0,
                       "a": {"trajectory": where[i][0], "window": where[i][1], "record": where[i][2], "text": texts[i]},
                       "b": {"trajectory": where[j][0], "window": where[j][1], "record": where[j][2], "text": texts[j]}})
    if listed:
        print(f"closest {len(listed)} pair(s):", file=out)
        for k, p in enumerate(listed, 1):
            print(f"{k:>3}. d={p['distance']:.4f} cos={p['cosine']:.4f}", file=out)
            for side in ("a", "b"):
                s = p[side]
                print(f"     {printable(s['trajectory'])}#{s['window']} (record {s['record']}): "
                      f"{printable(_snippet(s['text']))}", file=out)
    if failures:
        print(f"lam-ref pairs: {len(failures)} of {len(failures) + n_traj} inputs failed", file=sys.stderr)
    if args.json:
        report: dict[str, Any] = {
            "threshold": t, "delta": delta_from_t(t), "pool": bool(args.pool), "top_distinct": bool(args.top_distinct),
            "encoder": encoder.describe(),
            "windows": len(texts), "trajectories": n_traj, "counts": c, "closest": listed,
            "encoding": {**encoding, "reuse": "distinct-texts" if reuse.enabled else "none"},
            "failures": [f.to_json() for f in failures],
        }
        if args.save_embeddings:
            report["embeddings"] = saver.describe()
        write_json(report, args.json)
    return 1 if failures else 0
