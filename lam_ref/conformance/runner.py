"""Running the checks without pytest (scikit-learn style) and the shared skip/xfail-file logic.

>>> from lam_ref.conformance import run_checks
>>> results = run_checks("lam_ref.conformance.adapter")          # doctest: +SKIP
>>> [r.id for r in results if r.outcome == "failed"]              # doctest: +SKIP
[]

Expected failures come from the implementation (``EXPECTED_FAILURES = {prefix: reason}``) and
from ``xfails=`` / ``--xfails-file``; skips from ``skips=`` / ``--skips-file``. A file holds one
check-id prefix per line, optionally followed by ``# reason``; blank lines and lines starting
with ``#`` are ignored. A prefix matches a check id (``substitute.``, ``codec.error_bound``) or a
pytest node id. Prefixes that match no check are reported with a warning, so a typo is not a
silent no-op.
"""

from __future__ import annotations

import time
import traceback
import warnings
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hypothesis import Verbosity

from ..geometry import LamValueError
from .harness import CHECKS, Check, CheckSkipped, Context, to_jsonable
from .impl import Implementation, load_implementation

__all__ = [
    "CheckResult",
    "ConformanceFailure",
    "UnmatchedIdWarning",
    "assert_conforms",
    "match_prefix",
    "read_id_file",
    "run_checks",
    "write_report",
]


class UnmatchedIdWarning(UserWarning):
    """A skip/xfail id prefix that matches no check."""


class ConformanceFailure(AssertionError):
    """Raised by :func:`assert_conforms`; ``results`` holds every :class:`CheckResult`."""

    def __init__(self, message: str, results: list[CheckResult]) -> None:
        super().__init__(message)
        self.results = results


@dataclass
class CheckResult:
    """The outcome of one check (one entry of the JSON report's ``tests``)."""

    check: Check
    outcome: str
    duration_s: float = 0.0
    message: str | None = None
    reason: str | None = None
    exception: str | None = None
    hypothesis: dict[str, Any] | None = None
    counterexample: Any = None
    nodeid: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def id(self) -> str:
        return self.check.id

    @property
    def claim(self) -> str:
        return self.check.claim

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.check.id,
            "nodeid": self.nodeid,
            "claim": self.check.claim,
            "spec": self.check.spec,
            "title": self.check.title,
            "parts": list(self.check.parts),
            "outcome": self.outcome,
            "duration_s": self.duration_s,
            "message": self.message,
            "reason": self.reason,
            "exception": self.exception,
            "hypothesis": self.hypothesis,
            "counterexample": self.counterexample,
        }


def read_id_file(path: str | Path) -> dict[str, str]:
    """``{prefix: reason}`` from a skips/xfails file (format in the module docstring)."""
    p = Path(path)
    if not p.is_file():
        raise LamValueError(f"id file {str(path)!r} does not exist")
    out: dict[str, str] = {}
    for raw in p.read_text(encoding="utf-8").splitlines():
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        prefix, _, reason = line.partition("#")
        prefix = prefix.strip()
        if prefix:
            out[prefix] = reason.strip() or f"listed in {p.name}"
    return out


def match_prefix(prefixes: dict[str, str], check_id: str, nodeid: str | None = None) -> str | None:
    """The first prefix matching the check id (or the pytest node id), else ``None``."""
    for prefix in prefixes:
        if check_id.startswith(prefix) or (nodeid is not None and nodeid.startswith(prefix)):
            return prefix
    return None


def warn_unmatched(kind: str, prefixes: dict[str, str], used: Iterable[str]) -> list[str]:
    unmatched = sorted(set(prefixes) - set(used))
    for prefix in unmatched:
        warnings.warn(f"{kind} id {prefix!r} matches no conformance check", UnmatchedIdWarning, stacklevel=3)
    return unmatched


def execute(check: Check, impl: Implementation, ctx: Context, expected: str | None) -> CheckResult:
    """Run one check and classify it (``passed``/``failed``/``skipped``/``xfailed``/``xpassed``)."""
    start = time.perf_counter()
    outcome, message, exception, reason = "passed", None, None, None
    try:
        check(impl, ctx)
    except CheckSkipped as exc:
        outcome, reason = "skipped", str(exc)
    except Exception as exc:  # noqa: BLE001 - every other exception is a conformance failure
        outcome, exception = "failed", type(exc).__name__
        message = "".join(traceback.format_exception_only(type(exc), exc)).strip()
    duration = time.perf_counter() - start
    if expected is not None and outcome in ("passed", "failed"):
        reason = expected
        outcome = "xfailed" if outcome == "failed" else "xpassed"
    stats = ctx.stats.to_json() if ctx.stats.properties else None
    counter = to_jsonable(ctx.counterexample) if outcome in ("failed", "xfailed") and ctx.counterexample is not None else None
    return CheckResult(check, outcome, duration, message, reason, exception, stats, counter)


def run_checks(
    impl: Any = None,
    *,
    thorough: bool = False,
    select: Iterable[str] | None = None,
    skips: dict[str, str] | None = None,
    xfails: dict[str, str] | None = None,
    scale: float = 1.0,
    shrink: bool = True,
    exec_timeout: float | None = None,
    report: str | Path | None = None,
) -> list[CheckResult]:
    """Run every check (or those whose id starts with a prefix in ``select``) against ``impl``.

    ``impl`` is a module, a spec string (``"pkg.module"``, ``"exec:COMMAND"``) or ``None``
    (``$LAM_IMPL``, else lam_ref's adapter). Never raises for a non-conforming implementation:
    inspect the returned :class:`CheckResult` list, or use :func:`assert_conforms`. ``report``
    writes the JSON report there.
    """
    from . import checks as _  # noqa: F401  (registers the checks)

    started = time.time()
    implementation = load_implementation(impl, exec_timeout=exec_timeout)
    owned = not isinstance(impl, Implementation)
    skips = dict(skips or {})
    xfails = {**implementation.expected_failures, **(xfails or {})}
    selected = [c for c in CHECKS if select is None or any(c.id.startswith(p) for p in select)]
    ctx = Context(thorough=thorough, scale=scale, shrink=shrink, verbosity=Verbosity.quiet)
    results: list[CheckResult] = []
    used_skips, used_xfails = set(), set()
    try:
        for c in selected:
            sk = match_prefix(skips, c.id)
            if sk is not None:
                used_skips.add(sk)
                results.append(CheckResult(c, "skipped", reason=skips[sk]))
                continue
            xf = match_prefix(xfails, c.id)
            if xf is not None:
                used_xfails.add(xf)
            results.append(execute(c, implementation, ctx, None if xf is None else xfails[xf]))
    finally:
        if owned:
            implementation.close()
    warn_unmatched("skip", skips, used_skips)
    warn_unmatched("xfail", {k: v for k, v in xfails.items() if k not in implementation.expected_failures}, used_xfails)
    if report is not None:
        write_report(implementation, results, report, thorough=thorough, scale=scale, started=started, runner="python")
    return results


def write_report(
    impl: Implementation,
    results: list[CheckResult],
    path: str | Path,
    *,
    thorough: bool,
    scale: float = 1.0,
    started: float,
    runner: str,
) -> dict[str, Any]:
    """Build the JSON report (:mod:`lam_ref.conformance.report`) and write it atomically to ``path``."""
    from ..commands._common import write_json
    from .report import build_report

    profile = "thorough" if thorough else ("default" if scale == 1.0 else "custom")
    rep = build_report(impl, [r.to_json() for r in results], profile=profile, runner=runner, started=started, finished=time.time())
    write_json(rep, str(path))
    return rep


def assert_conforms(impl: Any = None, **kwargs: Any) -> list[CheckResult]:
    """:func:`run_checks`, raising :class:`ConformanceFailure` listing every failed check."""
    results = run_checks(impl, **kwargs)
    failed = [r for r in results if r.outcome == "failed"]
    if failed:
        lines = [f"{len(failed)} of {len(results)} conformance checks failed:"]
        lines += [f"  {r.id} [{r.claim}, SPEC {r.check.spec}]: {r.message}" for r in failed]
        raise ConformanceFailure("\n".join(lines), results)
    return results
