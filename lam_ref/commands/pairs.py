"""``lam-ref pairs``: every pair of observation windows within δ, per trajectory or across a pooled
corpus (the paper's near-duplicate control on LoCoMo, App. K: 2 pairs at cosine >= 0.95 among
17,296,021 with bge-base; SPEC §1, §2).

Windows are made and encoded exactly as ``lam-ref compact`` makes them, from the same options
(cl100k windows of the observation records of at most ``--window`` tokens, fitted to the encoder by
default; SPEC §3, §4). A pair ``(i, j)`` is within δ iff the merge rule of SPEC §2
holds: ``sum((e_i - e_j)**2) <= 2 - 2t`` in float64, inclusive. Without ``--pool`` only pairs inside
one trajectory count (LAM never matches across trajectories); with ``--pool`` every pair of the
corpus counts, within and across trajectories, and the report splits the two. The closest pairs are
listed with their texts. Exit status: 0, 1 when some inputs failed, 2 for a usage error.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

import numpy as np

from .._io import write_json
from ..geometry import LamValueError, delta_from_t, validate_threshold
from ..pairs import near_pairs
from ..tables import plural, printable, table
from ..text.chunking import get_tokenizer
from ..text.loaders import LoadFailure
from ..text.pipeline import encode_chunks
from ..text.reuse import EncodingCache
from ._embeddings import EmbeddingSaver
from ._lines import backend_note, reuse_line
from ._options import (
    add_json,
    add_mkdir,
    add_save_embeddings,
    add_threshold,
    add_trajectory_run_options,
    compaction_config,
    run_encoder,
)
from ._paths import reads, validate_json_dest, validate_output_file
from ._progress import RunProgress
from ._trajectories import plan_trajectory_files, planned_trajectories

#: The example each ``--help`` shows (``lam_ref.cli`` collects them from every command module).
EXAMPLES = {
    "pairs": "lam-ref pairs runs/ --pool -t 0.95 --top 20",
}


def register(sub: argparse._SubParsersAction) -> argparse.ArgumentParser:
    p = sub.add_parser(
        "pairs",
        help="count window pairs within δ (per trajectory, or pooled across the corpus) and show the closest",
        description="All pairs of observation windows within δ = sqrt(2 - 2t), by the merge rule. "
                    "Exit status: 0 ok, 1 some inputs failed, 2 usage error or unusable input.",
    )
    reads(p.add_argument("paths", nargs="+", metavar="PATH", help="trajectory files or directories"), "paths")
    add_threshold(p)
    p.add_argument("--pool", action="store_true",
                   help="pool every trajectory: also count pairs across trajectories (default: within each)")
    p.add_argument("--top", type=int, default=10, help="closest pairs to list with their texts (default 10)")
    p.add_argument("--top-distinct", action="store_true",
                   help="list only pairs whose window texts differ (exact copies are still counted)")
    add_trajectory_run_options(p)
    add_json(p)
    add_mkdir(p)
    add_save_embeddings(p)
    p.set_defaults(func=run)
    return p


def _snippet(text: str, width: int = 100) -> str:
    one = " ".join(text.split())
    return one if len(one) <= width else one[: width - 1] + "…"


def run(args: argparse.Namespace) -> int:
    t = validate_threshold(args.threshold, "--threshold")
    config = compaction_config(args, threshold=t)
    if isinstance(args.top, bool) or args.top < 0:
        raise LamValueError(f"--top must be an integer >= 0, got {args.top!r}")
    files = plan_trajectory_files(args.paths, args.format, "pairs")
    validate_json_dest(args.json, mkdir=args.mkdir)
    if args.save_embeddings:
        validate_output_file(args.save_embeddings, "--save-embeddings", mkdir=args.mkdir)
    encoder = run_encoder(args)
    tok = get_tokenizer(config.tokenizer)
    saver = EmbeddingSaver(args.save_embeddings or "unused.npy")
    failures: list[LoadFailure] = []
    texts: list[str] = []
    where: list[tuple[str, int, int]] = []  # (trajectory id, window id, record index)
    groups: list[int] = []
    progress = RunProgress(len(files), enabled=not args.no_progress, desc="pairs")
    reuse = EncodingCache(enabled=config.reuse)  # one per run (SPEC §4.4)
    try:
        for g, item in enumerate(planned_trajectories(files, args.format, "pairs", failures, progress)):
            its = [(i, item.records[i].turn, item.records[i].text or "") for i in item.observation_indices]
            enc = encode_chunks(its, encoder, tok, window=config.window, batch_size=config.batch_size,
                                fit=config.fit_window, reuse=reuse, on_batch=progress.encoding)
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
    print(f"{plural(len(texts), 'window')} in {plural(n_traj)}; encoder {encoder.name}{backend_note(encoder.describe())}; t={t} (δ={delta_from_t(t):.4f}); "
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
