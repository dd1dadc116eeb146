"""``lam-ref substitute``: Algorithm 2 on an embeddings file; prints kept count, δ̂ and digests."""

from __future__ import annotations

import argparse

import numpy as np

from .._io import atomic_write, write_json
from ..determinism import device_kwargs
from ..digest import fmt17
from ..substitution import oracle, substitute
from ..tables import table
from ._dask import add_cluster_options, refuse_serial_only, run_substitute, wants_cluster
from ._embeddings import load_embeddings
from ._options import add_json, add_mkdir
from ._paths import reads, validate_input_paths, validate_json_dest, validate_output_file, writes

#: The example each ``--help`` shows (``lam_ref.cli`` collects them from every command module).
EXAMPLES = {
    "substitute": "lam-ref substitute emb.npy -t 0.95 --exhaustive --json result.json --map-out pi.npy",
}


def register(sub: argparse._SubParsersAction) -> argparse.ArgumentParser:
    p = sub.add_parser("substitute", help="run Algorithm 2 (batch) on a .npy of unit rows; print δ̂ and digests")
    reads(p.add_argument("embeddings", help=".npy file of unit float32 rows (N, D), in arrival order"))
    p.add_argument("--threshold", "-t", type=float, default=0.95, help="cosine merge threshold t (default 0.95)")
    mode = p.add_mutually_exclusive_group()
    mode.add_argument("--exhaustive", action="store_true", help="exhaustive candidates (equals the oracle)")
    mode.add_argument("--oracle", action="store_true", help="run the O(N·|R|·D) definition itself")
    p.add_argument("--r", type=int, default=4, help="band width (banded mode)")
    p.add_argument("--rel", type=float, default=0.2, help="quantizer step eps/sigma (banded mode)")
    p.add_argument("--normalize", action="store_true", help="rescale rows to unit norm first")
    add_json(p, "the result")
    writes(p.add_argument("--map-out", metavar="PATH", help="write π as an int64 .npy"))
    add_mkdir(p)
    p.add_argument("--device", default="cpu", help="cpu (default) or cuda (exhaustive mode on the GPU, needs CuPy)")
    add_cluster_options(p, resume=False)
    p.set_defaults(func=run)
    return p


def run(args: argparse.Namespace) -> int:
    validate_input_paths([args.embeddings])
    validate_json_dest(args.json, mkdir=args.mkdir)
    if args.map_out:
        validate_output_file(args.map_out, "--map-out", mkdir=args.mkdir)
    on_device = device_kwargs(args.device)
    if wants_cluster(args):  # Dask: the corpus-scope greedy over the rows (docs/scale.md)
        refuse_serial_only(args, [("--device cuda", on_device)])
        return run_substitute(args)
    e = load_embeddings(args.embeddings)
    if args.oracle:
        res = oracle(e, args.threshold, normalize=args.normalize)
    else:
        res = substitute(e, args.threshold, r=args.r, rel=args.rel, exhaustive=args.exhaustive, normalize=args.normalize,
                         **on_device)
    if args.map_out:
        atomic_write(args.map_out, lambda fh: np.save(fh, res.pi, allow_pickle=False))
    if args.json != "-":
        rows = [[res.mode, res.n, res.kept_count, res.n - res.kept_count, f"{res.delta:.4f}", fmt17(res.delta_hat),
                 f"{100 * res.candidate_rate:.2f}%", res.deletion_digest, res.map_digest]]
        print(table(rows, ["mode", "N", "kept", "deleted", "δ", "δ̂", "pairs verified", "deletion digest", "map digest"]))
    if args.json:
        write_json(res.to_json(), args.json)
    return 0
