"""``lam-ref bench constants``: this machine's Table 22 analogues (paper App. G), written as a device
profile that ``lam-ref model --device PROFILE.json`` reads; the measurements are
:mod:`lam_ref.constants`.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from .._io import write_json
from ..constants import default_data, measure_constants
from ..geometry import LamValueError
from ..tables import table
from ._options import add_encoder_backend, add_mkdir
from ._paths import reads, validate_output_file, writes

#: The example each ``--help`` shows (``lam_ref.cli`` collects them from every command module).
EXAMPLES = {
    "bench": "lam-ref bench constants --quick --out profile.json",
    "bench constants": "lam-ref bench constants --out profile.json && lam-ref model --device profile.json",
}


def register(sub: argparse._SubParsersAction) -> argparse.ArgumentParser:
    p = sub.add_parser("bench", help="measure this machine's constants (App. G, Table 22) as a device profile")
    bsub = p.add_subparsers(dest="bench_command", metavar="{constants}")
    bsub.required = True
    c = bsub.add_parser("constants", help="encoder tok/s, xxh3 GB/s, verify pairs/s, quantize GB/s, codec GB/s, β")
    writes(c.add_argument("--out", metavar="PROFILE.json", help="write the profile and the measurements here (atomically)"))
    add_mkdir(c)
    reads(c.add_argument("--encoder", default="all-MiniLM-L6-v2",
                         help="encoder to time (default all-MiniLM-L6-v2; the paper times bge-base-en-v1.5)"), "name-or-path")
    add_encoder_backend(c)
    reads(c.add_argument("--data", metavar="DIR",
                         help="trajectories for β (default: ../shared/data/swe-agent-trajectories when present)"), "paths")
    c.add_argument("--name", default=None, help="profile name (default: this host's name)")
    c.add_argument("--quick", action="store_true", help="smaller sizes (seconds, noisier)")
    # ``--json`` alone (the former flag) still means stdout
    writes(c.add_argument("--json", metavar="OUT", nargs="?", const="-",
                          help="write the result as JSON to OUT (- or no value: stdout, and no table)"))
    c.set_defaults(func=run)
    return p


def run(args: argparse.Namespace) -> int:
    if args.out:
        validate_output_file(args.out, "--out", mkdir=args.mkdir)
    if args.json and args.json != "-":
        validate_output_file(args.json, "--json", mkdir=args.mkdir)
    data = Path(args.data) if args.data else default_data()
    if args.data and not data.exists():
        raise LamValueError(f"--data {args.data!r} does not exist")
    if args.encoder_backend != "torch":  # a missing package or export is refused before any measurement
        from ..text.encoders import get_encoder

        get_encoder(args.encoder, None, args.encoder_backend)
    res = measure_constants(encoder=args.encoder, data=data, quick=args.quick, name=args.name,
                             backend=args.encoder_backend)
    if args.out:
        write_json(res, args.out)
    if args.json:
        write_json(res, args.json)
        if args.json == "-":
            return 0
    from ..costmodel import GB10

    p = res["profile"]
    rows = []
    for k, unit, scale in (("encoder_tok_s", "tok/s", 1), ("hash_bytes_s", "GB/s", 1e9), ("verify_pairs_s", "M pairs/s", 1e6),
                           ("quantize_bytes_s", "GB/s", 1e9), ("codec_bytes_s", "GB/s", 1e9), ("codec_ratio", "x", 1),
                           ("beta", "B/tok", 1), ("mem_bw", "GB/s", 1e9), ("flops", "TFLOP/s", 1e12)):
        rows.append([k, f"{p[k] / scale:.4g}", f"{getattr(GB10, k) / scale:.4g}", unit, p["sources"][k]])
    print(table(rows, ["constant", "here", "GB10 (Table 22)", "unit", "source"]))
    if args.out:
        print(f"wrote {args.out} (use: lam-ref model --device {args.out})")
    return 0
