"""The trajectory files of a run, found before any model loads, and their trajectories loaded one
file at a time; a file that fails to load is reported in one line and the run goes on."""

from __future__ import annotations

import sys
import warnings
from collections.abc import Iterable, Iterator
from pathlib import Path

from ..geometry import LamValueError
from ..tables import printable
from ._paths import validate_input_paths
from ._progress import RunProgress


def plan_trajectory_files(paths: Iterable[str], fmt: str | None, command: str | None = None) -> list[tuple[Path, str]]:
    """The trajectory files under ``paths`` with their ids, found before any model loads: a missing
    path, an unreadable one or a folder without trajectory files is a :class:`LamValueError` (exit 2).
    Every entry a folder scan passes over (a folder that cannot be listed, a FIFO, a device, a
    broken or looping link, a file lam-ref wrote) is reported as one ``warning:`` line on stderr."""
    from ..text.loaders import LoadFailure, iter_trajectory_files

    paths = validate_input_paths(paths)
    files: list[tuple[Path, str]] = []
    skips: list[str] = []
    for item in iter_trajectory_files(paths, fmt, skips=skips):
        if isinstance(item, LoadFailure):
            raise LamValueError(item.error)
        files.append(item)
    prefix = f"lam-ref {command}" if command else "lam-ref"
    for line in skips:
        print(f"{prefix}: warning: {printable(line)}", file=sys.stderr)
    return files


def planned_trajectories(files: list[tuple[Path, str]], fmt: str | None, command: str, failures: list,
                         progress: RunProgress, *, evidence_warnings: bool = False) -> Iterator:
    """Trajectories of the files found by :func:`plan_trajectory_files`, one file at a time. A file
    that fails to load is reported in one line ``lam-ref COMMAND: failed: FILE: problem`` and appended
    to ``failures``; the rest go on. The caller reports windows through ``progress.note``; the
    bar advances by one file after each file's last trajectory. ``evidence_warnings``: print the
    loader's warnings about a trajectory's evidence ids (LoCoMo's malformed ones, repaired or
    dropped), one ``warning:`` line each; only a command that uses that evidence asks for them
    (``compact``'s and ``sweep``'s ``qa_evidence``, ``sweep``'s QA evidence hit rate; issue 35 §4)."""
    from ..text.loaders import LoadFailure, MalformedEvidenceWarning, load_file
    from ..text.records import TrajectoryFormatError

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", MalformedEvidenceWarning)
        for path, tid in files:
            try:
                trajs = load_file(path, fmt, traj_id=tid)
            except TrajectoryFormatError as exc:
                failures.append(LoadFailure(exc))
                progress.write(f"lam-ref {command}: failed: {exc}")
                progress.advance(1)
                continue
            progress.expect(len(trajs))
            for item in trajs:
                if evidence_warnings:
                    for w in item.warnings:
                        progress.write(f"lam-ref {command}: warning: {w}")
                yield item
            progress.advance(1)


def loaded_trajectories(paths: list[str], fmt: str | None, command: str, failures: list, *,
                        evidence_warnings: bool = False) -> Iterator:
    """Trajectories of ``paths`` one at a time (streaming); each file that fails to load is reported
    on stderr as ``lam-ref COMMAND: failed: ...`` and appended to ``failures``, and the rest go on
    (``evidence_warnings``: as :func:`planned_trajectories`)."""
    from ..text.loaders import LoadFailure, MalformedEvidenceWarning, iter_trajectories

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", MalformedEvidenceWarning)
        for item in iter_trajectories(paths, fmt):
            if isinstance(item, LoadFailure):
                failures.append(item)
                print(f"lam-ref {command}: failed: {printable(item.error)}", file=sys.stderr)
                continue
            if evidence_warnings:
                for w in item.warnings:
                    print(f"lam-ref {command}: warning: {printable(w)}", file=sys.stderr)
            yield item
