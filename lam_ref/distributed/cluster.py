"""Connecting to Dask: a local cluster by default, any scheduler address for a real cluster.

lam_ref never schedules work itself: every parallel step is a Dask task (``dask.distributed``),
and every order-dependent decision (the greedy of paper §2.4, Algorithm 2) is taken in one
process afterwards (see :mod:`lam_ref.distributed.greedy`).
"""

from __future__ import annotations

import contextlib
import logging
import os
import re
import sys
from collections.abc import Iterable, Iterator
from typing import Any

from ..geometry import LamValueError

__all__ = ["ClusterSpec", "cluster_client", "validate_cluster_args", "wait_with_progress"]

_ADDRESS = re.compile(r"^(tcp|tls|inproc|ucx|ws|wss)://[^\s/]+(:\d+)?$|^[A-Za-z0-9_.-]+:\d+$")


class ClusterSpec:
    """Where to run: ``workers`` local worker processes (1 thread each) or a ``scheduler`` address."""

    def __init__(self, workers: int | None = None, scheduler: str | None = None, *, processes: bool | None = None,
                 connect_timeout: float | None = None) -> None:
        self.workers, self.scheduler = validate_cluster_args(workers, scheduler)
        # LAM_REF_DASK_PROCESSES=0 runs local workers as threads of this process (tests, debugging);
        # LAM_REF_DASK_TIMEOUT sets how long to try reaching a scheduler (seconds, default 10).
        if processes is None:
            processes = os.environ.get("LAM_REF_DASK_PROCESSES", "1") != "0"
        self.processes = bool(processes)
        self.connect_timeout = float(connect_timeout if connect_timeout is not None
                                     else os.environ.get("LAM_REF_DASK_TIMEOUT", "10"))

    def describe(self) -> dict[str, Any]:
        return {"workers": self.workers, "scheduler": self.scheduler, "processes": self.processes}


def validate_cluster_args(workers: Any, scheduler: Any) -> tuple[int | None, str | None]:
    """Check ``--workers N`` (an integer >= 1) and ``--scheduler ADDRESS`` (``tcp://host:port``).

    Raises:
        LamValueError: naming the option and the value (``--workers 0``, a malformed address,
            both given).
    """
    if workers is not None and scheduler is not None:
        raise LamValueError(f"give --workers or --scheduler, not both (got --workers {workers} and --scheduler {scheduler!r})")
    if workers is not None:
        if isinstance(workers, bool) or not isinstance(workers, int) or workers < 1:
            raise LamValueError(f"--workers must be a positive integer (local worker processes), got {workers!r}")
    if scheduler is not None:
        if not isinstance(scheduler, str) or not _ADDRESS.match(scheduler.strip()):
            raise LamValueError(f"--scheduler must be an address such as tcp://host:8786, got {scheduler!r}")
        scheduler = scheduler.strip()
    if workers is None and scheduler is None:
        workers = 1
    return workers, scheduler


@contextlib.contextmanager
def cluster_client(spec: ClusterSpec, *, quiet: bool = False) -> Iterator[Any]:
    """A connected ``distributed.Client``; a ``LocalCluster`` of ``spec.workers`` single-threaded
    workers when no scheduler is given. The dashboard address is printed on stderr. The client is
    not made the process's default: a caller's own client stays current for their ``dask.compute``.

    Raises:
        LamValueError: the scheduler cannot be reached within ``spec.connect_timeout`` seconds.
    """
    from distributed import Client, LocalCluster

    cluster = None
    if spec.scheduler is not None:
        try:
            client = Client(spec.scheduler, timeout=f"{spec.connect_timeout}s", set_as_default=False)
        except (OSError, TimeoutError) as exc:
            raise LamValueError(f"--scheduler {spec.scheduler!r} cannot be reached: {type(exc).__name__}: "
                                f"{str(exc).splitlines()[0] if str(exc) else 'timed out'}") from None
    else:
        cluster = LocalCluster(n_workers=spec.workers, threads_per_worker=1, processes=spec.processes,
                               dashboard_address=":0", silence_logs=logging.CRITICAL)
        client = Client(cluster, set_as_default=False)
    try:
        if not quiet:
            link = client.dashboard_link if cluster is not None or spec.scheduler else None
            print(f"lam-ref: dask dashboard {link}", file=sys.stderr)
        yield client
    finally:
        client.close()
        if cluster is not None:
            cluster.close()


def wait_with_progress(client: Any, futures: list[Any], spec: ClusterSpec, *, show: bool, desc: str,
                       raise_errors: bool = True) -> Iterable[Any]:
    """Yield ``(future, result)`` as tasks finish: a tqdm bar for local runs,
    ``distributed.progress`` for a cluster (printed once the futures are submitted). With
    ``raise_errors=False`` a failed task yields ``(future, exception)``.

    Both follow ``client``, never the process's default client: ``as_completed`` and ``progress``
    otherwise track the futures on the *current* client's event loop and scheduler, and a caller
    with a client of their own open (a notebook, a test fixture) would wait on the wrong loop, which
    can hang for ever (a CI run did)."""
    from distributed import as_completed

    if show and spec.scheduler is not None:
        from distributed import progress

        progress(futures, notebook=False, multi=False, scheduler=client.scheduler.address)
        show = False
    bar = None
    if show:
        from tqdm import tqdm

        bar = tqdm(total=len(futures), desc=desc, unit="task", file=sys.stderr, leave=False)
    try:
        for fut, res in as_completed(futures, loop=client.loop, with_results=True, raise_errors=raise_errors):
            if bar is not None:
                bar.update(1)
            yield fut, res
    finally:
        if bar is not None:
            bar.close()
