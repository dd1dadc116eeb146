"""The command-line side of the Dask runs: the options shared by ``lam-ref compact``, ``lam-ref
sweep``, ``lam-ref determinism probe`` and ``lam-ref substitute``, the per-file run opened from
parsed arguments, and the drivers ``compact`` and ``substitute`` branch into (printing the serial
command's table and report). The Dask execution (per-file tasks, the corpus-scope greedy, the
probe's steps) is :mod:`lam_ref.distributed`. See ``docs/scale.md``."""

from __future__ import annotations

import argparse
import contextlib
import functools
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from .._io import write_json
from ..distributed.corpus import compact_settings
from ..distributed.files import DaskSteps, FileRun, map_files, where
from ..distributed.files import file_run as _file_run
from ..geometry import LamValueError
from ..tables import display_ids, printable, table
from ._embeddings import load_embeddings
from ._paths import validate_output_dir, writes

__all__ = ["add_cluster_options", "file_run", "probe_steps", "refuse_serial_only", "run_compact", "run_substitute",
           "wants_cluster"]


def add_cluster_options(p: argparse.ArgumentParser, *, resume: bool = True, scope: bool = False,
                        tile: bool = True) -> None:
    """``--workers N``, ``--scheduler ADDRESS`` (plus ``--tile``, ``--resume``, ``--scope``)."""
    g = p.add_argument_group("distributed (Dask)")
    g.add_argument("--workers", type=int, metavar="N", help="run on a local Dask cluster of N worker processes")
    g.add_argument("--scheduler", metavar="ADDRESS", help="run on the Dask cluster at ADDRESS (tcp://host:8786)")
    if tile:
        g.add_argument("--tile", type=int, default=4096, metavar="ROWS",
                       help="rows per tile of the corpus-scope greedy (default 4096)")
    if resume:
        writes(g.add_argument("--resume", metavar="DIR", help="keep per-file outputs in DIR; a rerun skips finished files"),
               "folder")
    if scope:
        g.add_argument("--scope", choices=("trajectory", "corpus"), default="trajectory",
                       help="greedy per trajectory (default) or one greedy over all chunks of all inputs")


def wants_cluster(args: argparse.Namespace) -> bool:
    """Whether the command should take the Dask branch."""
    return (getattr(args, "workers", None) is not None or getattr(args, "scheduler", None) is not None
            or getattr(args, "resume", None) is not None or getattr(args, "scope", "trajectory") == "corpus")


def refuse_serial_only(args: argparse.Namespace, options: list[tuple[str, Any]]) -> None:
    """One line (exit 2) for the first serial-only option given together with the Dask options.

    Args:
        args: the parsed arguments (for the wording: ``--resume`` alone also takes the Dask branch).
        options: ``(flag as shown, given)`` pairs.

    Raises:
        LamValueError: naming the option.
    """
    ours = "--workers/--scheduler" + ("/--resume" if hasattr(args, "resume") else "")
    for flag, given in options:
        if given:
            raise LamValueError(f"{flag} runs serially only; drop it or drop {ours}")


def resume_dir(args: argparse.Namespace) -> str | None:
    """``--resume DIR``, checked: a folder that exists, or whose parent does, can be written; with
    ``--mkdir`` its missing parents are created first (issue 39 §4: ``--resume ... --mkdir`` never
    asks for ``--mkdir``). The run folder itself is created by the run."""
    resume = getattr(args, "resume", None)
    if resume is not None:
        parent = str(Path(resume).resolve().parent)
        validate_output_dir(resume if Path(resume).exists() else parent, "--resume",
                            mkdir=bool(getattr(args, "mkdir", False)))
    return resume


@contextlib.contextmanager
def file_run(args: argparse.Namespace, command: str, settings: dict[str, Any]) -> Iterator[FileRun]:
    """:func:`lam_ref.distributed.files.file_run` for parsed arguments (``paths``, ``format``,
    ``--resume``, ``--json``): ``--resume DIR`` names the run's state folder, created when missing
    (its parent must exist; docs/cli.md, docs/scale.md); the table goes to stderr with ``--json -``."""
    resume = resume_dir(args)
    out = sys.stderr if getattr(args, "json", None) == "-" else sys.stdout
    with _file_run(args.paths, args.format, command, settings, resume_dir=resume, out=out) as run:
        yield run


def run_compact(args: argparse.Namespace, config: Any) -> int:
    """``lam-ref compact`` on Dask: per-trajectory scope (default) or ``--scope corpus``."""
    from ..distributed.cluster import ClusterSpec

    spec = ClusterSpec(args.workers, args.scheduler)
    prepare_backend(args)
    if getattr(args, "scope", "trajectory") == "corpus":
        return _run_corpus(args, config, spec)
    return _run_trajectories(args, config, spec)


def prepare_backend(args: argparse.Namespace) -> None:
    """``--encoder-backend onnx`` on Dask: the encoder is loaded here first, so that a missing
    package or an export that cannot be made is one line and exit 2 before any task runs, and the
    workers find the export in the cache (SPEC §4.5)."""
    if getattr(args, "encoder_backend", "torch") != "torch":
        from ..text.encoders import get_encoder

        get_encoder(args.encoder, args.device, args.encoder_backend)


def backend_setting(args: argparse.Namespace) -> dict[str, str]:
    """The run's encoder backend for its settings (SPEC §4.5): none for torch, so that runs made
    before the option existed stay resumable."""
    backend = getattr(args, "encoder_backend", "torch")
    return {} if backend == "torch" else {"encoder_backend": backend}


def _run_trajectories(args: argparse.Namespace, config: Any, spec: Any) -> int:
    from ..distributed.trajectories import corpus_digest, file_digest
    from ..text.pipeline import summarize
    from ..text.residuals import ResidualWriter
    from ._compact_report import finish_run, print_summary

    settings = compact_settings(config, "trajectory", encoder=args.encoder, device=args.device, fmt=args.format,
                                check=bool(args.check), residuals=bool(args.residual_dir), tile=None,
                                backend=args.encoder_backend)
    with file_run(args, "compact", settings) as run:
        _hash_note(args)
        fn = functools.partial(_compact_item, fmt=args.format, encoder=args.encoder, device=args.device,
                               backend=args.encoder_backend, config=config, run_dir=run.run_dir, check=bool(args.check),
                               residuals=bool(args.residual_dir))
        errors = map_files(run, spec, fn, show=not args.no_progress, desc="files")
        summaries: list[dict[str, Any]] = []
        problems: list[str] = []
        file_digests: list[str] = []
        writer = ResidualWriter(args.residual_dir) if args.residual_dir else None
        for k, _path, rec in run.records(errors):
            if rec is None:
                file_digests.append(file_digest([], run.failures[-1:]))
                continue
            summaries.extend(rec["summaries"])
            for s in rec["summaries"]:  # D22, as the serial command says it
                if s.get("observation_text") is False:
                    print(f"lam-ref compact: warning: {printable(s['id'])}: no observation text at all (nothing to "
                          "compact; the trajectory is kept as it is)", file=sys.stderr)
                if s.get("qa_evidence") is not None:  # the evidence compact reports: its ids' warnings (issue 35 §4)
                    for w in s.get("warnings", []):
                        print(f"lam-ref compact: warning: {printable(w)}", file=sys.stderr)
            problems.extend(rec["problems"])
            file_digests.append(rec["digest"])
            if writer is not None:
                writer.place(Path(run.run_dir) / "stage" / f"{k:07d}", rec["summaries"], rec["staged"])
    failures, out = run.failures, run.out
    total = summarize(summaries, config) if summaries else None
    cdig = corpus_digest(file_digests)
    if summaries:
        print_summary(out, summaries, total, config, encoder=summaries[0]["encoder_info"], l0_stubs=args.l0_stubs)
    print(f"corpus digest {cdig} over {len(run.files)} files ({run.where(spec)})", file=out)
    report = {
        "config": config.to_json(),
        "encoder": summaries[0]["encoder_info"] if summaries else {"name": args.encoder},
        "trajectories": [{k: v for k, v in s.items() if not k.startswith("_")} for s in summaries],
        "total": total,
        "failures": failures,
        "checks": {"run": bool(args.check), "problems": problems},
        "distributed": {**run.describe(spec), "file_digests": file_digests, "corpus_digest": cdig},
    }
    if writer is not None:
        report["residual_files"] = writer.written
    return finish_run(report, args.json, done=len(summaries), failed=len(failures), problems=problems)


def probe_steps(args: argparse.Namespace) -> DaskSteps | None:
    """The probe's Dask steps for ``--workers``/``--scheduler`` (``None``: run here)."""
    if not wants_cluster(args):
        return None
    from ..distributed.cluster import ClusterSpec

    return DaskSteps(ClusterSpec(args.workers, args.scheduler), show=not args.no_progress)


def _compact_item(index: int, path: str, tid: str, *, fmt, encoder, device, config, run_dir, check, residuals,
                  backend="torch"):
    from ..distributed.trajectories import compact_file

    return compact_file(index, path, tid, fmt, encoder, device, config, run_dir, check, residuals, backend=backend)


def _hash_note(args: argparse.Namespace) -> None:
    from ._compact_report import hashing_note

    if str(args.encoder).lower().startswith("hash"):
        hashing_note()


def _run_corpus(args: argparse.Namespace, config: Any, spec: Any) -> int:
    """``--scope corpus``: :func:`lam_ref.distributed.corpus.compact_corpus`, its table and report."""
    from ..distributed.corpus import compact_corpus

    resume = resume_dir(args)
    out = sys.stderr if getattr(args, "json", None) == "-" else sys.stdout
    _hash_note(args)
    run = compact_corpus(args.paths, config, encoder=args.encoder, device=args.device, backend=args.encoder_backend,
                         fmt=args.format, workers=spec.workers, scheduler=spec.scheduler, tile=args.tile,
                         resume_dir=resume, residual_dir=args.residual_dir, check=bool(args.check),
                         show_progress=not args.no_progress, out=out)
    res, trajs, failures, problems = run.greedy, run.trajectories, run.failures, run.problems
    labels = display_ids([str(tr["id"]) for tr in trajs])
    rows = [[lab, tr["chunks"], tr["kept_chunks"], tr["merged_into_other_trajectories"]] for lab, tr in zip(labels, trajs)]
    rows.append(["TOTAL", res.n, res.kept_count, sum(r[3] for r in rows)])
    print(table(rows, ["trajectory", "chunks", "kept", "merged into earlier trajectories"]), file=out)
    print(f"corpus scope ({res.mode}): {res.n} windows, {res.kept_count} kept, δ̂ {res.delta_hat:.4f} <= δ "
          f"{res.delta:.4f}; deletion digest {res.deletion_digest}, map digest {res.map_digest} "
          f"({where(spec)}; {run.resumed} files resumed, {run.computed} encoded)", file=out)
    if run.residuals is not None:
        tot = run.residuals["total"]
        print(f"residuals: {len(run.residuals['written'])} trajectories written to {args.residual_dir}; removal net "
              f"{tot['removal_net']:.2%}, gross {tot['removal_gross']:.2%} of {tot['tokens_original']} tokens "
              f"(L1 over the corpus, then {'L0 within each trajectory' if 'l0' in config.layers else 'no L0'})",
              file=out)
    if failures:
        print(f"lam-ref compact: {len(failures)} of {len(failures) + len(trajs)} inputs failed", file=sys.stderr)
    for prob in problems:
        print(f"lam-ref compact: check failed: {prob}", file=sys.stderr)
    if args.json:
        write_json(run.report(), args.json)
    if not trajs and not failures:
        print("lam-ref compact: no trajectories found", file=sys.stderr)
        return 1
    return 1 if (failures or problems) else 0


def run_substitute(args: argparse.Namespace) -> int:
    """``lam-ref substitute X.npy --workers N``: the corpus-scope greedy over the rows of ``X``
    (``--exhaustive``/``--oracle``: exact; default: banded), equal to the serial command."""
    import numpy as np

    from ..bands import BandSettings
    from ..digest import fmt17
    from ..distributed.cluster import ClusterSpec, cluster_client, wait_with_progress
    from ..distributed.greedy import corpus_greedy
    from ..distributed.shards import write_shards
    from ..geometry import validate_embeddings, validate_positive_int

    spec = ClusterSpec(args.workers, args.scheduler)
    tile = validate_positive_int(args.tile, "--tile")
    settings = BandSettings(r=args.r, rel=args.rel)
    e = validate_embeddings(load_embeddings(args.embeddings), normalize=args.normalize)
    mode = "exhaustive" if (args.exhaustive or args.oracle) else "banded"
    with tempfile.TemporaryDirectory(prefix="lam-ref-shards-") as d:
        shards = write_shards(e, d, tile)
        del e
        with cluster_client(spec) as client:
            res = corpus_greedy(client, shards, args.threshold, mode=mode, tile=tile, settings=settings, work_dir=d,
                                progress=lambda futs, desc: wait_with_progress(client, futs, spec, show=True, desc=desc))
    if args.map_out:
        np.save(args.map_out, res.pi)
    total = res.n * (res.n - 1) // 2
    if args.json != "-":
        rate = f"{100 * res.candidates / total:.2f}%" if total else "0.00%"
        rows = [[res.mode, res.n, res.kept_count, res.n - res.kept_count, f"{res.delta:.4f}", fmt17(res.delta_hat),
                 rate, res.deletion_digest, res.map_digest]]
        print(table(rows, ["mode", "N", "kept", "deleted", "δ", "δ̂", "pairs verified", "deletion digest", "map digest"]))
        print(f"{where(spec)}; {res.tasks} tasks, {res.edges} within-δ pairs, {res.n - res.unique_rows} identical rows folded")
    if args.json:
        obj = res.to_json()
        if res.n <= 10_000:
            obj["pi"] = res.pi.tolist()
        write_json(obj, args.json)
    return 0
