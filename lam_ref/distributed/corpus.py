"""Compaction at corpus scope: one greedy over every window of every input, on Dask (SPEC §1.1's
corpus variant; docs/scale.md; ``lam-ref compact --scope corpus``).

:func:`compact_corpus` is the whole pipeline as one call:

1. one task per input file encodes its trajectories' observation windows (SPEC §3, §4: the windows
   L1 sees, cut as the serial ``compact`` cuts them) into an embedding shard
   (:func:`lam_ref.distributed.trajectories.encode_file`); a resumed run reuses every shard that
   passes its checksum;
2. the corpus-scope greedy (:func:`lam_ref.distributed.greedy.corpus_greedy`, exhaustive or banded)
   over the shards in input order gives one map π over all rows;
3. with ``residual_dir``, one task per file writes each trajectory's residual and audit store from
   that map (:func:`lam_ref.distributed.trajectories.residual_file`; L0 then runs within each
   trajectory), named in input order as the per-trajectory scope names them.

The result (:class:`CorpusCompaction`) holds per-trajectory counts (windows, kept, merged into an
earlier trajectory), the greedy's result with its digests, and the report ``lam-ref compact --json``
writes (:meth:`CorpusCompaction.report`).
"""

from __future__ import annotations

import functools
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from ..geometry import LamValueError, validate_positive_int
from .files import FileRun, file_run, map_files

__all__ = ["CorpusCompaction", "compact_corpus", "compact_settings"]


def compact_settings(config: Any, scope: str, *, encoder: str, device: str | None, fmt: str | None, check: bool,
                     residuals: bool, tile: int | None, backend: str = "torch") -> dict[str, Any]:
    """The settings a ``compact`` run on Dask records in its run folder; ``--resume`` refuses a folder
    whose recorded settings differ. The backend appears only when it is not torch (runs made before
    the option existed stay resumable; SPEC §4.5)."""
    cfg = {k: v for k, v in config.to_json().items() if k != "delta"}  # δ follows from the threshold
    return {"command": "compact", "scope": scope, "config": cfg, "encoder": encoder, "device": device,
            "format": fmt, "check": bool(check), "residuals": bool(residuals),
            "tile": tile if scope == "corpus" else None,
            **({} if backend == "torch" else {"encoder_backend": backend})}


@dataclass
class CorpusCompaction:
    """What :func:`compact_corpus` found: per-trajectory entries in input order (``id``, ``path``,
    ``chunks``, ``first_row``, ``kept_chunks``, ``merged_into_other_trajectories``, and the residual's
    counts with ``residual_dir``), the corpus greedy's result (``greedy``: π, δ̂, digests), the
    encoder's description, the failures (one record per file or trajectory that failed), the
    ``check`` problems, the residual totals and files (``None`` without ``residual_dir``), and the
    run's description (``distributed``: where it ran, files resumed and computed)."""

    config: Any
    trajectories: list[dict[str, Any]]
    greedy: Any
    encoder: dict[str, Any]
    failures: list[dict[str, str]]
    problems: list[str]
    residuals: dict[str, Any] | None
    distributed: dict[str, Any]
    check: bool = False
    resumed: int = 0
    computed: int = 0
    notes: list[str] = field(default_factory=list)

    def report(self) -> dict[str, Any]:
        """The JSON report of the run (``lam-ref compact --scope corpus --json``)."""
        report = {"config": self.config.to_json(), "encoder": self.encoder, "scope": "corpus",
                  "trajectories": self.trajectories, "total": self.greedy.to_json(), "failures": self.failures,
                  "checks": {"run": bool(self.check), "problems": self.problems}, "distributed": self.distributed}
        if self.residuals is not None:
            report["residual_total"] = self.residuals["total"]
            report["residual_files"] = self.residuals["written"]
        return report


def compact_corpus(paths: list[str], config: Any, *, encoder: str = "all-MiniLM-L6-v2", device: str | None = None,
                   backend: str = "torch", fmt: str | None = None, workers: int | None = None,
                   scheduler: str | None = None, tile: int = 4096, resume_dir: str | None = None,
                   residual_dir: str | None = None, check: bool = False, show_progress: bool = True,
                   out: Any = None) -> CorpusCompaction:
    """Compact the trajectories under ``paths`` with one greedy over all their windows (module
    docstring), on a local Dask cluster of ``workers`` processes or the one at ``scheduler``.

    Args:
        paths: trajectory files or folders (listed as the serial command lists them).
        config: the :class:`~lam_ref.text.pipeline.CompactionConfig`; its layers must start with L1
            (L1 runs over the original windows) and ``both_orders`` is not available.
        encoder: the encoder's name (SPEC §4).
        device: the encoder's device (``None``: the CPU).
        backend: the encoder backend (SPEC §4.5).
        fmt: the trajectory loader (``None``: detected per file).
        tile: rows per tile of the greedy.
        resume_dir: keep per-file outputs there (created when missing); a rerun skips finished files.
        residual_dir: write each trajectory's residual and audit store there (an existing folder).
        check: record a problem when δ̂ exceeds δ or a written residual does not restore.
        show_progress: progress bars on stderr.
        out: where per-run notes go (default stdout).

    Raises:
        LamValueError: bad layers, ``both_orders``, a bad ``tile``, or a cluster that cannot be reached.
    """
    from ..bands import BandSettings
    from .cluster import ClusterSpec, cluster_client, wait_with_progress
    from .greedy import corpus_greedy
    from .shards import ShardError, ShardSet
    from .trajectories import encode_file

    spec = ClusterSpec(workers, scheduler)
    if config.both_orders or config.layers[0] != "l1":
        raise LamValueError(f"--scope corpus runs L1 over the original windows; --layers must start with l1 and "
                            f"--both-orders is not available (got --layers {','.join(config.layers)})")
    tile = validate_positive_int(tile, "--tile")
    settings = compact_settings(config, "corpus", encoder=encoder, device=device, fmt=fmt, check=check,
                                residuals=bool(residual_dir), tile=tile, backend=backend)

    def reuse(rec: dict[str, Any]) -> bool:  # a finished file whose shard fails its checksum is recomputed
        try:
            ShardSet.create(Path(run.run_dir) / "shards", [rec["shard"]], rec["dim"]).open(0)
            return True
        except ShardError as exc:
            print(f"lam-ref compact: recomputing: {exc}", file=sys.stderr)
            return False

    with file_run(paths, fmt, "compact", settings, resume_dir=resume_dir, out=out) as run, \
            cluster_client(spec) as client:
        fn = functools.partial(encode_file, fmt=fmt, encoder_name=encoder, device=device, backend=backend,
                               config=config, run_dir=run.run_dir)
        errors = map_files(run, spec, fn, show=show_progress, desc="encode", client=client, reuse=reuse)
        trajs: list[dict[str, Any]] = []
        entries, dim, encoder_info = [], None, {"name": encoder}
        first_rows: dict[int, int] = {}  # file index -> global row of its first window
        rows = 0
        for k, _path, rec in run.records(errors):
            if rec is None:
                continue
            first_rows[k] = rows
            rows += sum(tr["chunks"] for tr in rec["trajectories"])
            trajs.extend(rec["trajectories"])
            dim, encoder_info = rec["dim"], rec["encoder"]
            if rec["shard"]["rows"]:
                entries.append(rec["shard"])
        shards = ShardSet.create(Path(run.run_dir) / "shards", entries, dim or 1)
        mode = "exhaustive" if config.exhaustive else "banded"
        res = corpus_greedy(client, shards, config.threshold, mode=mode, tile=tile,
                            settings=BandSettings(config.r, config.rel), work_dir=run.run_dir,
                            progress=lambda futs, desc: wait_with_progress(client, futs, spec, show=show_progress,
                                                                           desc=desc))
        residuals = _corpus_residuals(config, spec, client, run, res, first_rows, fmt=fmt, check=check,
                                      residual_dir=residual_dir, show=show_progress) if residual_dir else None
    start = 0
    for tr in trajs:
        own = start + np.arange(tr["chunks"], dtype=np.int64)
        pi = res.pi[start : start + tr["chunks"]]
        tr["first_row"] = start
        tr["kept_chunks"] = int((pi == own).sum())
        tr["merged_into_other_trajectories"] = int(((pi < start) & (pi != own)).sum())
        start += tr["chunks"]
    problems = [] if res.delta_hat <= res.delta or not check else \
        [f"corpus scope: δ̂ = {res.delta_hat!r} exceeds δ = {res.delta!r}"]
    if residuals is not None:
        by_key = {(tr["id"], tr["path"], tr["first_row"]): tr for tr in trajs}
        for e in residuals["summaries"]:
            by_key[(e["id"], e["path"], e["first_row"])].update({k: v for k, v in e.items() if k not in ("id", "path")})
        problems += residuals["problems"]
    return CorpusCompaction(config, trajs, res, encoder_info, run.failures, problems, residuals, run.describe(spec),
                            check=check, resumed=run.resumed, computed=run.computed)


def _corpus_residuals(config: Any, spec: Any, client: Any, run: FileRun, res: Any, first_rows: dict[int, int], *,
                      fmt: str | None, check: bool, residual_dir: str, show: bool) -> dict[str, Any]:
    """The corpus scope's second pass: the global map and each file's first row are saved in the run
    folder, one task per file writes its trajectories' residuals and audit stores
    (:func:`lam_ref.distributed.trajectories.residual_file`), and they are named in input order as
    the per-trajectory scope names them."""
    from .._io import atomic_write
    from ..metrics import corpus_removal
    from ..text.residuals import ResidualWriter
    from .shards import checksum_file
    from .trajectories import MAP_DIR, failure_record, residual_file, stage_dir

    mdir = Path(run.run_dir) / MAP_DIR
    mdir.mkdir(exist_ok=True)
    starts = np.full(len(run.files), -1, np.int64)
    for k, row in first_rows.items():
        starts[k] = row
    map_sums = {}  # written by every run (an earlier run's map is never read) and checked where read
    for name, arr in (("pi", res.pi), ("distances", res.distances), ("first_rows", starts)):
        p = atomic_write(mdir / f"{name}.npy", lambda fh, a=arr: np.save(fh, np.ascontiguousarray(a)))
        map_sums[name] = checksum_file(p)
    fn = functools.partial(residual_file, fmt=fmt, config=config, run_dir=run.run_dir, check=bool(check),
                           map_sums=map_sums)
    errors = map_files(run, spec, fn, show=show, desc="residuals", client=client, kind="residuals",
                       only=set(first_rows))
    writer = ResidualWriter(residual_dir)
    summaries, problems = [], []
    for k, (path, _) in enumerate(run.files):
        if k not in first_rows:
            continue
        rec = run.output(k, path, "residuals")
        if rec is None:
            run.fail(failure_record(path, "residuals: " + errors.get(k, "no output was produced")))
            continue
        for f in rec["failures"]:
            run.fail(f)
        row = first_rows[k]
        first = run.output(k, path)
        starts_of = {}
        for tr in first["trajectories"] if first is not None else []:
            starts_of.setdefault((tr["id"], tr["path"]), row)
            row += tr["chunks"]
        for e in rec["summaries"]:
            e["first_row"] = starts_of[(e["id"], e["path"])]
        names = writer.place(stage_dir(run.run_dir, k), rec["summaries"], rec["staged"])
        for e, name in zip(rec["summaries"], names):
            e["residual"] = name
        summaries.extend(rec["summaries"])
        problems.extend(rec["problems"])
    rem = corpus_removal([e["tokens_original"] for e in summaries], [e["tokens_residual_net"] for e in summaries],
                         [e["tokens_residual_gross"] for e in summaries])
    total = {"trajectories": len(summaries), "tokens_original": rem.original_tokens,
             "tokens_residual_net": rem.residual_tokens, "tokens_residual_gross": rem.residual_tokens_without_stubs,
             "removal_net": rem.net, "removal_gross": rem.gross}
    return {"summaries": summaries, "problems": problems, "written": writer.written, "total": total}
