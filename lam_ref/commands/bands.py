"""``lam-ref bands``: recall of true merge pairs and candidate rate of the band index (Table 26)."""

from __future__ import annotations

import argparse

from .._io import write_json
from ..bands import band_recall
from ..tables import table
from ._embeddings import load_embeddings
from ._options import add_json, add_mkdir
from ._paths import reads, validate_input_paths, validate_json_dest

#: The example each ``--help`` shows (``lam_ref.cli`` collects them from every command module).
EXAMPLES = {
    "bands": "lam-ref bands emb.npy --threshold 0.95 --r 4 8 --rel 0.01 0.02 --normalize",
}


def register(sub: argparse._SubParsersAction) -> argparse.ArgumentParser:
    p = sub.add_parser("bands", help="band recall and candidate rate for embeddings (Table 26)")
    reads(p.add_argument("embeddings", help=".npy file of unit float32 rows (N, D)"))
    p.add_argument("--threshold", "-t", type=float, nargs="+", default=[0.95], help="cosine thresholds t")
    p.add_argument("--r", type=int, nargs="+", default=[4], help="band widths r")
    p.add_argument("--rel", type=float, nargs="+", default=[0.2], help="quantizer steps rel = eps/sigma")
    p.add_argument("--normalize", action="store_true", help="rescale rows to unit norm first")
    add_json(p, "the results")
    add_mkdir(p)
    p.set_defaults(func=run)
    return p


def run(args: argparse.Namespace) -> int:
    validate_input_paths([args.embeddings])
    validate_json_dest(args.json, mkdir=args.mkdir)
    e = load_embeddings(args.embeddings)
    results = [
        band_recall(e, t, r=r, rel=rel, normalize=args.normalize)
        for t in args.threshold
        for r in args.r
        for rel in args.rel
    ]
    rows = [[x.t, x.r, x.rel, x.true_pairs, f"{x.recall:.4f}", f"{100 * x.candidate_rate:.2f}%"] for x in results]
    if args.json != "-":
        print(table(rows, ["t", "r", "rel", "true pairs", "recall", "candidates"]))
    if args.json:
        write_json([x.to_json() for x in results], args.json)
    return 0
