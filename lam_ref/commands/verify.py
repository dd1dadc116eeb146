"""``lam-ref verify``: run the claim checks of :mod:`lam_ref.verify` on embeddings or trajectories.

On an ``.npy``/``.npz`` file the rows are one set, unless the ``OUT.ids.json`` of
``--save-embeddings`` lies beside the ``.npy``: then each trajectory it names is one set (``--pool``:
one set all the same); on trajectories (needs
:mod:`lam_ref.text.pipeline`) each trajectory's observation windows are one set (matching is
within a trajectory, SPEC §1), with their token counts as weights for ``T(δ)`` (eq. 5), and the
table aggregates over trajectories. Exit status 1 when any claim fails.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import Any

from .._io import read_json_input, write_json
from ..geometry import LamValueError
from ..tables import table
from ._embeddings import embeddings_ids_path, load_embeddings
from ._lines import reuse_line
from ._options import (
    add_json,
    add_mkdir,
    add_trajectory_run_options,
    compaction_config,
    run_encoder,
)
from ._paths import reads, validate_input_paths, validate_json_dest
from ._progress import RunProgress
from ._trajectories import plan_trajectory_files, planned_trajectories

#: The example each ``--help`` shows (``lam_ref.cli`` collects them from every command module).
EXAMPLES = {
    "verify": "lam-ref verify emb.npy -t 0.95 --json verify.json",
}


def register(sub: argparse._SubParsersAction) -> argparse.ArgumentParser:
    p = sub.add_parser(
        "verify",
        help="check the paper's claims (THM1, PROP2, THM2, ...) on embeddings or trajectories",
        description="Run the theory checks (SPEC §11) on an .npy of unit rows or on trajectory files.",
    )
    reads(p.add_argument("paths", nargs="+", metavar="PATH", help=".npy/.npz embeddings, or trajectory files/directories"),
          "paths", also=lambda path: [str(embeddings_ids_path(path))] if path.endswith(".npy") else [])
    p.add_argument("--threshold", "-t", type=float, default=0.95, help="cosine merge threshold t (default 0.95)")
    p.add_argument("--r", type=int, default=4, help="band width r of the compactor under test (default 4)")
    p.add_argument("--rel", type=float, default=0.2, help="quantizer step rel (default 0.2)")
    p.add_argument("--normalize", action="store_true", help="rescale .npy rows to unit norm first")
    p.add_argument("--queries", type=int, default=256, help="random unit queries per set (default 256)")
    p.add_argument("--top-k", type=int, default=10, help="k of COR1/PROP1 (default 10)")
    p.add_argument("--exact-limit", type=int, default=200, help="largest set for exact N and M by MILP (default 200)")
    p.add_argument("--time-limit", type=float, default=20.0, help="seconds per MILP (default 20)")
    p.add_argument("--hull-limit", type=int, default=500, help="deleted rows solved for HULL per set (default 500)")
    p.add_argument("--seed", type=int, default=0, help="seed of the random queries and sources")
    p.add_argument("--trajectories", action="store_true", help="treat PATHs as trajectories even if they end in .npy")
    p.add_argument("--pool", action="store_true",
                   help="an .npy is one set even when the OUT.ids.json of --save-embeddings lies beside it "
                        "(default: one set per trajectory named there)")
    p.add_argument("--limit", type=int, default=None, help="verify at most this many trajectories")
    add_trajectory_run_options(p)  # trajectories are cut and encoded as compact does; --exhaustive also for .npy
    p.add_argument("--per-set", action="store_true", help="also print one line per set")
    add_json(p)
    add_mkdir(p)
    p.set_defaults(func=run)
    return p


def _options(args: argparse.Namespace) -> dict[str, Any]:
    for name in ("queries", "top_k", "exact_limit", "hull_limit"):
        if getattr(args, name) < 1:
            raise LamValueError(f"--{name.replace('_', '-')} must be >= 1, got {getattr(args, name)}")
    if not args.time_limit > 0:
        raise LamValueError(f"--time-limit must be > 0, got {args.time_limit}")
    return {
        "r": args.r,
        "rel": args.rel,
        "exhaustive": args.exhaustive,
        "n_queries": args.queries,
        "top_k": args.top_k,
        "exact_limit": args.exact_limit,
        "time_limit": args.time_limit,
        "hull_limit": args.hull_limit,
        "seed": args.seed,
    }


def _ids_beside(path: str | Path, rows: int) -> list[str] | None:
    """The trajectory of each row, from the ``OUT.ids.json`` that ``--save-embeddings`` writes beside
    ``OUT.npy`` (issue 23 §6); ``None`` when there is none. One that does not fit is refused."""

    path = Path(path)
    if path.suffix != ".npy":
        return None
    ids = embeddings_ids_path(path)
    if not os.path.lexists(ids):  # present but a FIFO, a device, a folder: refused when read, not ignored
        return None
    try:
        obj = read_json_input(ids)
        col = obj["columns"].index("trajectory")
        traj = [str(r[col]) for r in obj["rows"]]
    except (OSError, ValueError, KeyError, TypeError, IndexError, AttributeError) as exc:
        raise LamValueError(f"{ids}: not the ids file --save-embeddings writes ({type(exc).__name__}: {exc}); "
                            "move it away or pass --pool") from exc
    if len(traj) != rows:
        raise LamValueError(f"{ids}: names {len(traj)} rows, but {path} has {rows}; move it away or pass --pool")
    return traj


def _npy_sets(args: argparse.Namespace, opts: dict[str, Any], meta: dict[str, Any]):
    from ..verify import verify_set

    meta["ids_files"] = []
    for path in args.paths:
        e = load_embeddings(path)
        traj = None if args.pool else _ids_beside(path, e.shape[0])
        if traj is None:
            yield verify_set(e, args.threshold, name=str(path), normalize=args.normalize, **opts)
            continue
        # one set per trajectory, as compact matched them (SPEC §1: within a trajectory); runs of
        # consecutive rows, so a trajectory given twice stays two sets
        meta["ids_files"].append(str(path))
        start = 0
        for k in range(1, len(traj) + 1):
            if k == len(traj) or traj[k] != traj[start]:
                yield verify_set(e[start:k], args.threshold, name=f"{path}:{traj[start]}",
                                 normalize=args.normalize, **opts)
                start = k


def _trajectory_sets(args: argparse.Namespace, opts: dict[str, Any], meta: dict[str, Any]):
    try:
        from ..text.chunking import get_tokenizer
        from ..text.loaders import LoadFailure
        from ..text.pipeline import encode_chunks
        from ..text.reuse import EncodingCache
    except ImportError as exc:  # pragma: no cover - depends on the text layer being installed
        raise LamValueError(f"verifying trajectories needs lam_ref.text.pipeline, which is not importable: {exc}") from exc
    from ..verify import verify_set

    config = compaction_config(args, threshold=args.threshold)
    encoder = run_encoder(args)
    tok = get_tokenizer(config.tokenizer)
    meta["encoder"] = encoder.describe()
    meta["failures"] = []
    reuse = EncodingCache(enabled=config.reuse)  # one per run (SPEC §4.4)
    meta["encoding"] = {"windows_encoded": 0, "windows_reused": 0,
                        "reuse": "distinct-texts" if reuse.enabled else "none"}
    count = 0
    failures: list[LoadFailure] = []
    files = plan_trajectory_files(args.paths, args.format)
    progress = RunProgress(len(files), enabled=not getattr(args, "no_progress", False), desc="verify")
    try:
        for item in planned_trajectories(files, args.format, "verify", failures, progress):
            if args.limit is not None and count >= args.limit:
                break
            items = [(i, item.records[i].turn, item.records[i].text or "") for i in item.observation_indices]
            enc = encode_chunks(items, encoder, tok, window=config.window, batch_size=config.batch_size,
                                fit=config.fit_window, reuse=reuse, on_batch=progress.encoding)
            meta["encoding"].update(windows_encoded=reuse.encoded, windows_reused=reuse.reused)
            progress.note(windows=len(enc.chunks), trajectories=1)
            if enc.embeddings.shape[0] == 0:
                continue
            weights = [c.tokens for c in enc.chunks]
            count += 1
            yield verify_set(enc.embeddings, args.threshold, name=item.id, weights=weights, **opts)
    finally:
        progress.close()
        meta["failures"] = [f.to_json() for f in failures]


def run(args: argparse.Namespace) -> int:
    from ..verify import aggregate, table_rows

    opts = _options(args)
    validate_input_paths(args.paths)  # before any model loads: a missing input costs nothing
    validate_json_dest(args.json, mkdir=args.mkdir)
    as_traj = args.trajectories or not all(Path(p).suffix in (".npy", ".npz") for p in args.paths)
    if as_traj:
        plan_trajectory_files(args.paths, args.format)
    meta: dict[str, Any] = {}
    sets = _trajectory_sets(args, opts, meta) if as_traj else _npy_sets(args, opts, meta)
    quiet = args.json == "-"
    out = sys.stderr if quiet else sys.stdout
    reports = []
    for rep in sets:
        reports.append(rep)
        if args.per_set:
            bad = [c.claim for c in rep.results.values() if c.passed is False]
            print(f"{rep.name}: n={rep.n} D={rep.dim} {'FAIL ' + ','.join(bad) if bad else 'pass'} ({rep.wall_time_s:.2f} s)", file=out)
    if not reports:
        raise LamValueError("no set to verify: the inputs hold no embeddings / observation windows")
    results = aggregate(reports)
    total_n = sum(r.n for r in reports)
    print(
        f"verify: {len(reports)} set(s), {total_n} rows, D={reports[0].dim}, t={args.threshold}, {reports[0].mode}"
        + (f", encoder {meta['encoder'].get('name')}" if "encoder" in meta else ""),
        file=out,
    )
    if "encoding" in meta:
        print(reuse_line(meta["encoding"], meta["encoding"]["reuse"] != "none"), file=out)
    for path in meta.get("ids_files", []):
        print(f"{path}: one set per trajectory, as named by the .ids.json beside it (--pool: one set)", file=out)
    print(table(table_rows(results), ["claim", "measured", "bound", "result"]), file=out)
    failed = [r.claim for r in results if r.passed is False]
    if args.json:
        write_json(
            {
                "threshold": args.threshold,
                "options": opts,
                "meta": meta,
                "claims": [r.to_json() for r in results],
                "sets": [rep.to_json() for rep in reports],
                "failed": failed,
            },
            args.json,
        )
    return 1 if (failed or meta.get("failures")) else 0
