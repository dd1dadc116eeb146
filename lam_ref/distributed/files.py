"""The per-file Dask run that ``lam-ref compact`` and ``lam-ref sweep`` share (input files, run
folder, ``--resume``, one Dask task per file, outputs read back in input order), and the Dask
steps of ``lam-ref determinism probe``. See ``docs/scale.md``.

This is the execution side; the command-line side (the options, the drivers each command branches
into, the printed tables) is :mod:`lam_ref.commands._dask`.
"""

from __future__ import annotations

import contextlib
import sys
import tempfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

__all__ = ["DaskSteps", "FileRun", "file_run", "map_files", "where"]


def where(spec: Any) -> str:
    """Where a run runs, for a summary line: ``scheduler ADDRESS`` or ``N local worker(s)``."""
    return f"scheduler {spec.scheduler}" if spec.scheduler else f"{spec.workers} local worker(s)"


@dataclass
class FileRun:
    """A per-file Dask run of one command: its input files (the serial command's order), the run
    folder, the failures so far (in input order) and where the table goes."""

    command: str
    files: list[tuple[str, str]]
    run_dir: str
    out: TextIO
    failures: list[dict[str, str]] = field(default_factory=list)
    resumed: int = 0
    computed: int = 0

    def fail(self, failure: dict[str, str]) -> None:
        """Record and print one failure (``lam-ref COMMAND: failed: ...``, as the serial command)."""
        print(f"lam-ref {self.command}: failed: {failure['error']}", file=sys.stderr)
        self.failures.append(failure)

    def output(self, index: int, path: str, kind: str = "files") -> dict[str, Any] | None:
        """The finished output of file ``index`` in pass ``kind`` (``None``: none), after
        :func:`map_files` ran: its staged residual and audit files must still be the ones it was
        written with (:func:`~lam_ref.distributed.trajectories.staged_problem`; map_files recomputed
        any that were not), since the driver copies them into ``--residual-dir``.

        Raises:
            LamValueError: one line naming a staged file changed during this run.
        """
        from ..geometry import LamValueError
        from .trajectories import read_file_output, staged_problem

        rec = read_file_output(self.run_dir, index, path, kind)
        problem = staged_problem(self.run_dir, index, rec) if rec is not None else None
        if problem is not None:
            raise LamValueError(f"run folder {self.run_dir}: {problem} (changed while the run was using it)")
        return rec

    def records(self, errors: dict[int, str]) -> Iterator[tuple[int, str, dict[str, Any] | None]]:
        """``(index, path, output)`` of every file in input order (:meth:`output`), recording its
        failures as they come (a file without output fails with its task's error); ``output`` is
        ``None`` then."""
        from .trajectories import failure_record

        for k, (path, _) in enumerate(self.files):
            rec = self.output(k, path)
            if rec is None:
                self.fail(failure_record(path, errors.get(k, "no output was produced")))
            else:
                for f in rec["failures"]:
                    self.fail(f)
            yield k, path, rec

    def where(self, spec: Any) -> str:
        """Where the run ran and how much of it was resumed, for the summary line."""
        return f"{where(spec)}; {self.resumed} resumed, {self.computed} computed"

    def describe(self, spec: Any) -> dict[str, Any]:
        """The report's ``distributed`` key (without digests)."""
        return {**spec.describe(), "files": len(self.files), "resumed": self.resumed, "computed": self.computed}


@contextlib.contextmanager
def file_run(paths: list[str], fmt: str | None, command: str, settings: dict[str, Any], *,
             resume_dir: str | None = None, out: TextIO | None = None) -> Iterator[FileRun]:
    """The prologue every per-file Dask run shares: list the inputs as the serial command does
    (a path argument that fails is a failure, the others go on), open the run folder (a temporary
    one, or ``resume_dir``, created when missing, whose recorded settings must equal ``settings``).
    The caller has checked that ``resume_dir`` (or its parent) is a writable folder."""
    from .trajectories import input_files, validate_resume_dir

    files, arg_failures = input_files(paths, fmt)
    with _run_dir(resume_dir) as run_dir:
        run = FileRun(command, files, run_dir, out if out is not None else sys.stdout)
        for f in arg_failures:
            run.fail(f)
        if resume_dir is not None:
            validate_resume_dir(run_dir, settings, files)
        yield run


@contextlib.contextmanager
def _run_dir(resume_dir: str | None) -> Iterator[str]:
    if resume_dir is not None:
        Path(resume_dir).mkdir(exist_ok=True)
        yield resume_dir
        return
    with tempfile.TemporaryDirectory(prefix="lam-ref-run-") as d:
        yield d


def map_files(run: FileRun, spec: Any, fn: Callable[..., Any], *, show: bool, desc: str, client: Any = None,
              reuse: Callable[[dict[str, Any]], bool] | None = None, kind: str = "files",
              only: set[int] | None = None) -> dict[int, str]:
    """Run ``fn(index, path, id)`` — a per-file task that writes ``<kind>/<index>.json`` — for every
    file (of ``only``, when given) without a finished output (recomputed too: an output whose staged
    residual and audit files are not the ones it recorded, or with ``reuse(output)`` false), as a
    Dask bag of one partition per file in input order. A cluster is started only when there is work
    (on ``client`` when given). The first pass (``kind="files"``) sets the run's resumed and
    computed counts. Returns ``{index: error}`` for the tasks that failed outright."""
    from .trajectories import read_file_output, staged_problem

    todo = []
    for k, (p, t) in enumerate(run.files):
        if only is not None and k not in only:
            continue
        rec = read_file_output(run.run_dir, k, p, kind)
        problem = staged_problem(run.run_dir, k, rec) if rec is not None else None
        if problem is not None:  # never trusted: the task writes them again (issue 39 §4)
            print(f"lam-ref {run.command}: recomputing: {problem}", file=sys.stderr)
        if rec is None or problem is not None or (reuse is not None and not reuse(rec)):
            todo.append((k, p, t))
    if kind == "files":
        run.resumed, run.computed = len(run.files) - len(todo), len(todo)
    if not todo:
        return {}
    if client is not None:
        return _collect(client, _submit_files(client, fn, todo), todo, spec, show, desc)
    from .cluster import cluster_client

    with cluster_client(spec) as c:
        return _collect(c, _submit_files(c, fn, todo), todo, spec, show, desc)


def _submit_files(client: Any, fn: Any, items: list[tuple[int, str, str]]) -> list[Any]:
    """A Dask bag over the files (one partition per file, in order) mapped with ``fn``."""
    import dask.bag as db

    bag = db.from_sequence(items, partition_size=1).map(lambda it: fn(*it))
    return client.compute(bag.to_delayed())


def _collect(client: Any, futs: list[Any], items: list[tuple[int, str, str]], spec: Any, show: bool,
             desc: str) -> dict[int, str]:
    """Wait for the file tasks; a task that failed outright (e.g. its workers kept dying) is
    returned as ``{index: error}``."""
    from .cluster import wait_with_progress

    index_of = {f.key: items[k][0] for k, f in enumerate(futs)}
    errors: dict[int, str] = {}
    for fut, _res in wait_with_progress(client, futs, spec, show=show, desc=desc, raise_errors=False):
        if fut.status == "error":
            errors[index_of[fut.key]] = task_error(fut)
    return errors


def task_error(fut: Any) -> str:
    """One line for a failed Dask task (D19): ``task failed: <type>: <first line of the message>``,
    the exception itself, never the worker's log nor a ``(type, value, <traceback object>)`` tuple."""
    try:
        exc = fut.exception()
    except Exception as err:  # noqa: BLE001 - a lost or cancelled future has no exception to fetch
        exc = err
    text = str(exc).strip().splitlines()
    return f"task failed: {type(exc).__name__}" + (f": {text[0]}" if text else "")


class DaskSteps:
    """The steps of :func:`lam_ref.determinism.probe` as Dask tasks (``lam-ref determinism probe
    --workers N``): the encoder's description, one encoding per batch size, one jitter per batch
    size, one greedy per (batch size, threshold), each the serial step function. The cluster
    starts at the first step, after the probe has checked its arguments and chunked its input."""

    def __init__(self, spec: Any, *, show: bool) -> None:
        self.spec, self.show = spec, show
        self._stack = contextlib.ExitStack()
        self._client: Any = None

    @property
    def client(self) -> Any:
        if self._client is None:
            from .cluster import cluster_client

            self._client = self._stack.enter_context(cluster_client(self.spec))
        return self._client

    def share(self, obj: Any) -> Any:
        """``obj`` sent to the cluster once (the windows' texts), for many tasks."""
        return self.client.scatter([obj], hash=False)[0]

    def submit(self, fn: Callable[..., Any], *args: Any, label: str | None = None) -> Any:
        return self.client.submit(fn, *args, pure=False)

    def gather(self, handles: list[Any]) -> list[Any]:
        """The results in submission order; the first task error is raised as it was raised."""
        from .cluster import wait_with_progress

        for _ in wait_with_progress(self.client, list(handles), self.spec, show=self.show, desc="probe steps"):
            pass
        return self.client.gather(list(handles))

    def describe(self) -> dict[str, Any]:
        return self.spec.describe()

    def close(self) -> None:
        self._stack.close()
