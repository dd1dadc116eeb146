"""The float32 filter's scan over a block of products (SPEC §5.3; paper §2.4, Algorithm 2):
every pair whose product clears its row's threshold (:func:`lam_ref.geometry.filter_threshold`),
collected in row-major order by a compiled pass (``lam_ref/_filter.c``) or its numpy twin.

Kept apart from :mod:`lam_ref.geometry`, which imports nothing of lam_ref (the margins module of
the determinism certificate depends on it alone).
"""

from __future__ import annotations

import os

import numpy as np

from .geometry import LamValueError

try:  # the compiled scan (lam_ref/_filter.c, optional like L0's _l0); the numpy path serves without it
    from . import _filter as _cfilter
except ImportError:  # pragma: no cover - a build without a C compiler
    _cfilter = None

__all__ = ["FILTER_BACKENDS", "filter_pairs"]

#: The backends of :func:`filter_pairs` in this install: ``"c"`` (``lam_ref._filter``) when built.
FILTER_BACKENDS: tuple[str, ...] = ("c", "numpy") if _cfilter is not None else ("numpy",)
# A block's scan runs on two threads when the products are at least this many and two CPUs are
# ours, unless the user limited the BLAS/OpenMP threads to one, by the environment at import or
# by threadpoolctl at the time of the scan (the pass is memory-bound).
_SCAN_THREADS_MIN = 1 << 20
_ROW_SCAN = 128


def _scan_threads() -> int:
    try:
        cpus = len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - not Linux
        cpus = os.cpu_count() or 1
    limited = any(os.environ.get(v, "").strip() == "1" for v in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS"))
    return 1 if limited or cpus < 2 else 2


_THREADS = _scan_threads()
_BLAS: list | None = None  # threadpoolctl's controllers of the loaded BLAS libraries, found once


def _blas_limited() -> bool:
    """Whether a BLAS library runs on one thread now: a ``threadpoolctl.threadpool_limits(1)`` set
    after import (an operator running processes side by side) holds for the scan too. Each call
    asks the libraries themselves (a few microseconds), so a limit lifted later is seen as well."""
    global _BLAS
    if _BLAS is None:
        try:
            from threadpoolctl import ThreadpoolController

            _BLAS = list(ThreadpoolController().select(user_api="blas").lib_controllers)
        except Exception:  # noqa: BLE001 - no threadpoolctl answer: the environment rule alone
            _BLAS = []
    return any(c.num_threads == 1 for c in _BLAS)


def _threads_for(products: int) -> int:
    """The scan's thread count for a block of ``products``: ``_THREADS`` for a large block unless
    the BLAS is limited to one thread at this moment, else one."""
    if products < _SCAN_THREADS_MIN or _THREADS < 2:
        return 1
    return 1 if _blas_limited() else _THREADS


def filter_pairs(g: np.ndarray, thr: np.ndarray, *, backend: str = "auto") -> tuple[np.ndarray, np.ndarray]:
    """Every ``(i, j)`` with ``g[i, j] >= thr[i]``, row-major: the float32 filter's pass over a
    block of products (SPEC §5.3), whose thresholds come from :func:`lam_ref.geometry.filter_threshold`.

    ``backend``: ``"auto"`` (C when built), ``"c"`` (``lam_ref/_filter.c``: one OR-reduced
    comparison pass, then the rows that hold a pair again from cache, on two threads for a large
    block) or ``"numpy"`` (a row maximum, then the rows whose maximum clears the threshold). The
    two return the same pairs in the same order; nothing is computed from the values, so there
    is no rounding to agree on.

    Args:
        g: C-contiguous float32 ``(rows, cols)`` products.
        thr: float32 ``(rows,)`` thresholds.
        backend: ``"auto"``, ``"c"`` or ``"numpy"``.

    Returns:
        ``(rows, cols)``: int64 arrays.

    Examples:
        >>> g = np.array([[0.1, 0.9, 0.95], [0.2, 0.3, 0.4]], dtype=np.float32)
        >>> r, c = filter_pairs(g, np.array([0.9, 0.5], dtype=np.float32))
        >>> r.tolist(), c.tolist()
        ([0, 0], [1, 2])
    """
    if backend not in ("auto", "c", "numpy"):
        raise LamValueError(f"backend must be 'auto', 'c' or 'numpy', got {backend!r}")
    if backend == "c" and _cfilter is None:
        raise LamValueError("backend='c': the extension lam_ref._filter is not built (reinstall with a C compiler)")
    if g.dtype != np.float32 or g.ndim != 2 or thr.dtype != np.float32 or thr.shape != (g.shape[0],):
        raise LamValueError(f"filter_pairs needs float32 g (rows, cols) and thr (rows,), got g {g.dtype} {g.shape}, "
                            f"thr {thr.dtype} {thr.shape}")
    if _cfilter is not None and backend != "numpy":
        threads = _threads_for(g.size)
        r, c = _cfilter.scan(np.ascontiguousarray(g), g.shape[0], g.shape[1], np.ascontiguousarray(thr), threads)
        return np.frombuffer(r, dtype=np.int64), np.frombuffer(c, dtype=np.int64)
    hot = np.flatnonzero(g.max(axis=1) >= thr) if g.shape[1] else np.zeros(0, np.int64)
    if hot.size == 0:
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    if hot.size <= _ROW_SCAN:
        # few hot rows: scan each in place (no copy of the hot rows, no 2-D nonzero)
        cols = [np.flatnonzero(g[i] >= thr[i]) for i in hot]
        return np.repeat(hot, [c.size for c in cols]).astype(np.int64, copy=False), \
            np.concatenate(cols).astype(np.int64, copy=False)
    r, c = np.nonzero(g[hot] >= thr[hot, None])
    return hot[r].astype(np.int64, copy=False), c.astype(np.int64, copy=False)
