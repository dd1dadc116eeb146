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

from .._io import write_json
from ..geometry import LamValueError
from .harness import Check, CheckSkipped, Context, to_jsonable
from .impl import Implementation, load_implementation
from .registry import CHECKS, yield_checks
from .report import build_report
from .verdicts import outcome_of_skip

__all__ = [
    "CheckResult",
    "ConformanceFailure",
    "IdRules",
    "UnmatchedIdWarning",
    "assert_conforms",
    "classify",
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
    #: the property broken, computed on the counterexample (:mod:`lam_ref.conformance.diagnosis`)
    diagnosis: dict[str, Any] | None = None

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
            "profiles": list(self.check.profiles),
            "outcome": self.outcome,
            "duration_s": self.duration_s,
            "message": self.message,
            "reason": self.reason,
            "exception": self.exception,
            "hypothesis": self.hypothesis,
            "counterexample": self.counterexample,
            "diagnosis": to_jsonable(self.diagnosis) if self.diagnosis is not None else None,
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


@dataclass
class IdRules:
    """The skip and expected-failure prefixes of one run, matched the same way by
    :func:`run_checks` and the pytest plugin. ``declared`` are the implementation's own
    ``EXPECTED_FAILURES``; ``xfails`` the user's (``xfails=`` / ``--xfails-file``), which win on
    the same prefix. :meth:`unmatched` lists the user's prefixes that matched nothing."""

    skips: dict[str, str]
    xfails: dict[str, str]
    declared: dict[str, str] = field(default_factory=dict)
    used: set[str] = field(default_factory=set)

    @property
    def expected(self) -> dict[str, str]:
        return {**self.declared, **self.xfails}

    def decide(self, check_id: str, nodeid: str | None = None) -> tuple[str, str, str] | None:
        """``("skip" | "xfail", prefix, reason)`` for a check, or ``None`` (run it as is)."""
        for kind, table in (("skip", self.skips), ("xfail", self.expected)):
            prefix = match_prefix(table, check_id, nodeid)
            if prefix is not None:
                self.used.add(f"{kind}:{prefix}")
                return kind, prefix, table[prefix]
        return None

    def unmatched(self) -> dict[str, list[str]]:
        """``{"skip": [...], "xfail": [...]}``: the user's prefixes that matched no check."""
        return {
            kind: sorted(p for p in table if f"{kind}:{p}" not in self.used)
            for kind, table in (("skip", self.skips), ("xfail", self.xfails))
        }


def classify(*, failed: bool, skipped: str | None = None, expected: str | None = None) -> tuple[str, str | None]:
    """The one outcome classifier (runner and plugin): ``(outcome, reason)`` with outcome one of
    ``passed``/``failed``/``skipped``/``xfailed``/``xpassed`` (the report's, SPEC §15).

    Examples:
        >>> classify(failed=True, expected="known bug")
        ('xfailed', 'known bug')
        >>> classify(failed=False, skipped="no codec")
        ('skipped', 'no codec')
    """
    if skipped is not None:
        return outcome_of_skip(skipped), skipped  # skipped, or not_applicable / not_run / resource by tag
    if expected is not None:
        return ("xfailed" if failed else "xpassed"), (expected or None)
    return ("failed" if failed else "passed"), None


def counterexample_of(outcome: str, ctx: Any) -> Any:
    """The report's counterexample: the context's last failing case, for a failure only."""
    if outcome in ("failed", "xfailed") and isinstance(ctx, Context) and ctx.counterexample is not None:
        return to_jsonable(ctx.counterexample)
    return None


def stats_of(ctx: Any) -> dict[str, Any] | None:
    """The report's Hypothesis statistics of a context (``None`` when no property ran)."""
    return ctx.stats.to_json() if isinstance(ctx, Context) and ctx.stats.properties else None


def execute(check: Check, impl: Implementation, ctx: Context, expected: str | None) -> CheckResult:
    """Run one check and classify it (``passed``/``failed``/``skipped``/``xfailed``/``xpassed``)."""
    start = time.perf_counter()
    message, exception, skipped = None, None, None
    try:
        check(impl, ctx)
    except CheckSkipped as exc:
        skipped = str(exc)
    except Exception as exc:  # noqa: BLE001 - every other exception is a conformance failure
        exception = type(exc).__name__
        message = "".join(traceback.format_exception_only(type(exc), exc)).strip()
    duration = time.perf_counter() - start
    outcome, reason = classify(failed=exception is not None, skipped=skipped, expected=expected)
    return CheckResult(check, outcome, duration, message, reason, exception, stats_of(ctx), counterexample_of(outcome, ctx),
                       diagnosis=diagnosis_of(outcome, ctx))


def diagnosis_of(outcome: str, ctx: Any) -> dict[str, Any] | None:
    """The report's diagnosis of a failure (``None`` for any other outcome)."""
    if outcome in ("failed", "xfailed") and isinstance(ctx, Context):
        return ctx.diagnosis
    return None


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
    started = time.time()
    implementation = load_implementation(impl, exec_timeout=exec_timeout)
    owned = not isinstance(impl, Implementation)
    rules = IdRules(dict(skips or {}), dict(xfails or {}), dict(implementation.expected_failures))
    ctx = Context(thorough=thorough, scale=scale, shrink=shrink, verbosity=Verbosity.quiet)
    results: list[CheckResult] = []
    try:
        for c, not_applicable in yield_checks(implementation):
            if select is not None and not any(c.id.startswith(p) for p in select):
                continue
            rule = rules.decide(c.id)
            if rule is not None and rule[0] == "skip":
                results.append(CheckResult(c, "skipped", reason=rule[2]))
            elif not_applicable is not None:
                results.append(CheckResult(c, outcome_of_skip(not_applicable), reason=not_applicable))
            else:
                results.append(execute(c, implementation, ctx, None if rule is None else rule[2]))
    finally:
        if owned:
            implementation.close()
    for kind, prefixes in rules.unmatched().items():
        for prefix in prefixes:
            warnings.warn(f"{kind} id {prefix!r} matches no conformance check", UnmatchedIdWarning, stacklevel=2)
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

    profile = "thorough" if thorough else ("default" if scale == 1.0 else "custom")
    rep = build_report(
        impl, [r.to_json() for r in results], profile=profile, runner=runner, started=started, finished=time.time(),
        checks=len(CHECKS),
    )
    write_json(rep, str(path))
    return rep


def assert_conforms(impl: Any = None, **kwargs: Any) -> list[CheckResult]:
    """:func:`run_checks`, raising :class:`ConformanceFailure` listing every failed check."""
    results = run_checks(impl, **kwargs)
    failed = [r for r in results if r.outcome == "failed"]
    if failed:
        from .diagnosis import summarize, summary_lines

        lines = summary_lines(summarize([r.to_json() for r in results]))
        lines += [f"{len(failed)} of {len(results)} conformance checks failed:"]
        lines += [f"  {r.id} [{r.claim}, SPEC {r.check.spec}]: {r.message}" for r in failed]
        raise ConformanceFailure("\n".join(lines), results)
    return results
