"""Timing helper shared by the benchmark scripts (run as ``python benchmarks/NAME.py``)."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any


def best_of(fn: Callable[..., object], repeat: int = 3, setup: Callable[[], Any] | None = None) -> float:
    """The fastest of ``repeat`` wall-clock timings of ``fn()``, in seconds. With ``setup``, each
    timing is of ``fn(setup())`` and ``setup()`` runs untimed before it (fresh inputs per run)."""
    times = []
    for _ in range(repeat):
        arg = setup() if setup is not None else None
        t0 = time.perf_counter()
        fn() if setup is None else fn(arg)
        times.append(time.perf_counter() - t0)
    return min(times)
