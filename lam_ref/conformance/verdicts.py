"""Verdicts beyond passed/failed (SPEC §15.3): not applicable, not run (budget), RESOURCE.

A check that cannot or need not run ends with :class:`~lam_ref.conformance.harness.CheckSkipped`
whose reason starts with a tag; :func:`outcome_of_skip` turns the tag into the report's outcome:

* ``not_applicable`` — the rule cannot be reached through the interface in use: the exec client
  always sends C-order, little-endian, freshly decoded arrays and JSON lists, so memory layout,
  byte order and result aliasing (:data:`EXEC_UNREACHABLE`) are never the cause of anything an
  exec server does;
* ``not_run`` — a scale check larger than the implementation's declared ``BUDGET``
  (``{"rows": int, "seconds": float}``; rows per call, seconds per call): shown as not run, never
  as passed;
* ``resource`` — on a large input (a scale check of :data:`SCALE_ROWS`, or at least
  :data:`RESOURCE_MIN_ROWS` rows) the implementation ran out of memory (``MemoryError``), its exec
  server did not answer in time or was killed by a signal: the size tried is stated; never a
  contract failure. The same on a small input is a failure (an allocation sized from an unchecked
  header, a hang).

Every other skip stays ``skipped``.
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np

__all__ = [
    "EXEC_UNREACHABLE",
    "NEW_OUTCOMES",
    "SCALE_ROWS",
    "budget_reason",
    "outcome_of_skip",
    "precheck",
    "resource_reason",
]

#: Outcomes added to passed/failed/skipped/xfailed/xpassed, with the reason tag that marks each.
NEW_OUTCOMES = {"not_applicable": "not applicable: ", "not_run": "not run: ", "resource": "RESOURCE: "}

#: Checks whose rule an exec server cannot be given input to break, and why.
EXEC_UNREACHABLE: dict[str, str] = {
    "substitute.layouts": "memory layouts and dtypes: the exec client always sends a C-order float32 copy",
    "substitute.byte_order": "byte order: the exec client always sends little-endian float32",
    "codec.byte_order": "byte order: the exec client always sends little-endian float32",
    "substitute.fresh_results": "fresh results: every exec reply is decoded into a new array",
    "online.fresh_results": "fresh results: every exec reply is decoded into a new array",
    "online.caller_buffer_reuse": "caller buffers: the exec client sends each turn's values, never a shared buffer",
    "lines.input_untouched": "the caller's list: the exec client sends the records as JSON, the server cannot touch the list",
}

#: Rows (or lines) one call of each scale check passes to the implementation.
SCALE_ROWS: dict[str, int] = {
    "substitute.large_ids": 65_600,
    "substitute.retained_4096": 4_400,
    "substitute.large": 1_100,
    "lines.large": 3_000,
}


def outcome_of_skip(reason: str) -> str:
    """The report outcome of a skip with ``reason``: one of :data:`NEW_OUTCOMES` by tag, else ``skipped``.

    >>> outcome_of_skip("RESOURCE: MemoryError at 65600 rows")
    'resource'
    >>> outcome_of_skip("optional part 'codec' not provided")
    'skipped'
    """
    for outcome, tag in NEW_OUTCOMES.items():
        if reason.startswith(tag):
            return outcome
    return "skipped"


def _probe_seconds(impl: Any, rows: int) -> float:
    """Seconds one ``substitute`` (or ``kept``) call would take on ``rows`` rows, extrapolated
    quadratically from a call on 512 rows of D = 16 (greedy compares each row with the kept ones)."""
    rng = np.random.default_rng(0)
    e = rng.standard_normal((512, 16))
    e = (e / np.linalg.norm(e, axis=1, keepdims=True)).astype(np.float32)
    call = impl.substitute if impl.has("substitute") else impl.kept
    start = time.perf_counter()
    call(e, 0.9)
    spent = time.perf_counter() - start
    return spent * (rows / 512.0) ** 2


def budget_reason(check_id: str, impl: Any) -> str | None:
    """``"not run: ..."`` when the check's size exceeds the implementation's declared ``BUDGET``."""
    budget = getattr(impl, "budget", None) or {}
    rows = SCALE_ROWS.get(check_id)
    if rows is None or not budget:
        return None
    if "rows" in budget and rows > budget["rows"]:
        return f"not run: {check_id} passes {rows:,} rows in one call, beyond the declared BUDGET of {int(budget['rows']):,} rows"
    if "seconds" in budget:
        estimate = _probe_seconds(impl, rows)
        if estimate > budget["seconds"]:
            return (f"not run: {check_id} passes {rows:,} rows in one call, about {estimate:.1f} s at this implementation's "
                    f"measured speed, beyond the declared BUDGET of {budget['seconds']:g} s")
    return None


def precheck(check_id: str, impl: Any) -> str | None:
    """The tagged reason a check is not applicable to ``impl`` or not run within its budget, else ``None``."""
    if getattr(impl, "kind", "") == "exec" and check_id in EXEC_UNREACHABLE:
        return f"not applicable: {EXEC_UNREACHABLE[check_id]}; no exec server can break this rule (SPEC §15.2)"
    return budget_reason(check_id, impl)


def _size_of(case: Any) -> str:
    """Words for the size of a counterexample: ``N rows of D = d`` where an array is found."""
    arrays = []
    if isinstance(case, np.ndarray):
        arrays = [case]
    elif isinstance(case, dict):
        arrays = [v for v in case.values() if isinstance(v, np.ndarray)]
    elif isinstance(case, (tuple, list)):
        arrays = [v for v in case if isinstance(v, np.ndarray)]
    elif hasattr(case, "embeddings"):
        arrays = [case.embeddings]
    if not arrays:
        if isinstance(case, dict) and isinstance(case.get("n"), (int, np.integer)):
            return f"{int(case['n']):,} rows" + (f" ({case['case']})" if isinstance(case.get("case"), str) else "")
        return "size unknown"
    a = max(arrays, key=lambda x: x.size)
    return f"{a.shape[0]:,} rows of D = {a.shape[1]}" if a.ndim == 2 else f"{a.size:,} values"


def _causes(exc: BaseException) -> list[BaseException]:
    seen, todo, out = set(), [exc], []
    while todo:
        e = todo.pop()
        if id(e) in seen:
            continue
        seen.add(id(e))
        out.append(e)
        todo += [c for c in (e.__cause__, e.__context__) if c is not None]
        todo += list(getattr(e, "exceptions", ()) or ())
    return out


#: Below this many rows (or values) a MemoryError or an exec timeout is the implementation's fault (an
#: allocation sized from an unchecked header, a hang), not the machine's: a contract failure.
RESOURCE_MIN_ROWS = 10_000


def _rows_of(case: Any) -> int | None:
    """The largest row (or value) count of the arrays a counterexample holds."""
    if isinstance(case, np.ndarray):
        return int(case.shape[0]) if case.ndim else 1
    values = list(case.values()) if isinstance(case, dict) else list(case) if isinstance(case, (tuple, list)) else []
    if hasattr(case, "embeddings"):
        values.append(case.embeddings)
    # arrays only: a count a case merely announces (a codec header's n) is not what was passed
    sizes = [int(v.shape[0]) if v.ndim == 2 else int(v.size) for v in values if isinstance(v, np.ndarray)]
    return max(sizes) if sizes else None


def resource_reason(exc: BaseException, check_id: str, case: Any) -> str | None:
    """``"RESOURCE: ..."`` when ``exc`` is a resource exhaustion (module docstring) on a large input (a
    scale check, or at least :data:`RESOURCE_MIN_ROWS` rows), else ``None`` (a failure like any other)."""
    from .exec_client import ExecCrashed, ExecTimeout

    rows = _rows_of(case) if case is not None else None
    if check_id not in SCALE_ROWS and (rows is None or rows < RESOURCE_MIN_ROWS):
        return None
    for e in _causes(exc):
        kind = None
        if isinstance(e, MemoryError):
            kind = "MemoryError"
        elif isinstance(e, ExecTimeout):
            kind = "exec timeout"
        elif isinstance(e, ExecCrashed) and "exited with code -" in str(e):
            kind = "exec server killed by a signal"
        if kind is not None:
            size = _size_of(case) if case is not None else "size unknown"
            if size == "size unknown" and check_id in SCALE_ROWS:
                size = f"up to {SCALE_ROWS[check_id]:,} rows"
            return (f"RESOURCE: {kind} at {size} in {check_id}: a resource limit of this machine, not a contract "
                    f"failure (declare BUDGET to skip scale checks) [{type(e).__name__}: {str(e)[:200]}]")
    return None
