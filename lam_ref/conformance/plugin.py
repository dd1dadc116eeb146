"""pytest plugin of the conformance suite (entry point ``pytest11``: ``lam_ref.conformance.plugin``).

Options (all inert unless conformance tests are collected, so they never disturb other suites):

| option | meaning |
|---|---|
| ``--lam-impl=SPEC`` | implementation under test: ``pkg.module`` or ``exec:COMMAND`` (else ``$LAM_IMPL``; with neither the suite refuses to run) |
| ``--lam-report=PATH`` | write the JSON report (:mod:`lam_ref.conformance.report`) |
| ``--lam-thorough`` | 25× the example counts, random (not derandomized) generation; also on when ``HYPOTHESIS_PROFILE=thorough`` |
| ``--skips-file=PATH`` | check-id prefixes to skip, one per line, ``# reason`` optional |
| ``--xfails-file=PATH`` | check-id prefixes expected to fail, same format |
| ``--lam-exec-timeout=SEC`` | per-request deadline of an ``exec:`` implementation (default 10) |
| ``--lam-check-timeout=SEC`` | deadline per check (and for loading the implementation): past it the process exits with a traceback (``lam-ref conform`` sets it and turns the exit into a failing report) |
| ``--lam-progress=PATH`` | append one JSON line per event (loaded, start, result, finish) to PATH, flushed at once (used by ``lam-ref conform`` to report a run that dies) |

With no implementation chosen the suite refuses to run (a usage error saying how to choose one),
as array-api-tests does: nothing is checked silently by default.

Usage: ``pytest --pyargs lam_ref.conformance.suite --lam-impl=pkg.module`` (add
``-p lam_ref.conformance.plugin`` where plugin autoloading is disabled).
"""

from __future__ import annotations

import faulthandler
import json
import os
import time
import warnings
from typing import Any

import pytest

from .harness import Check, CheckSkipped, Context
from .impl import Implementation, load_implementation, resolve_spec
from .runner import (
    CheckResult,
    IdRules,
    UnmatchedIdWarning,
    classify,
    counterexample_of,
    diagnosis_of,
    read_id_file,
    stats_of,
    write_report,
)

__all__ = ["run_check"]

MARKER = "lam_conformance"
_STATE = pytest.StashKey["_State"]()


class _State:
    def __init__(self, config: pytest.Config) -> None:
        self.config = config
        self.option = config.getoption("lam_impl")
        self.spec: str | None = None
        self.check_timeout = config.getoption("lam_check_timeout")
        progress = config.getoption("lam_progress")
        self.progress = open(progress, "a", encoding="utf-8") if progress else None  # noqa: SIM115 - kept open for the run
        self.thorough = bool(config.getoption("lam_thorough")) or os.environ.get("HYPOTHESIS_PROFILE") == "thorough"
        self.timeout = config.getoption("lam_exec_timeout")
        self.skips = self._read("lam_skips_file")
        self.xfails = self._read("lam_xfails_file")
        self.impl: Implementation | None = None
        self.load_error: str | None = None
        self.results: dict[str, CheckResult] = {}
        self.started = time.time()
        self.collected = 0

    def _read(self, option: str) -> dict[str, str]:
        path = self.config.getoption(option)
        if not path:
            return {}
        try:
            return read_id_file(path)
        except ValueError as exc:
            raise pytest.UsageError(str(exc)) from exc

    def event(self, kind: str, **fields: Any) -> None:
        """One progress line (``--lam-progress``), flushed so that it survives ``os._exit``."""
        if self.progress is not None:
            self.progress.write(json.dumps({"event": kind, **fields}, default=str) + "\n")
            self.progress.flush()

    def arm(self, what: str) -> None:
        """Start the deadline of ``--lam-check-timeout`` (a C watchdog thread: it fires even in a
        busy loop that holds the GIL, and exits the process after dumping every thread's stack)."""
        if self.check_timeout:
            faulthandler.dump_traceback_later(self.check_timeout, exit=True)
            self.event("armed", what=what, timeout=self.check_timeout)

    def disarm(self) -> None:
        if self.check_timeout:
            faulthandler.cancel_dump_traceback_later()

    def implementation(self) -> Implementation:
        if self.impl is None and self.load_error is None:
            try:
                self.spec = resolve_spec(self.option)
            except ValueError as exc:
                self.load_error = str(exc)
            else:
                self.event("loading", spec=self.spec)
                self.arm("loading the implementation")
                try:
                    self.impl = load_implementation(self.spec, exec_timeout=self.timeout)
                except Exception as exc:  # noqa: BLE001 - shown as a usage error with its cause
                    self.load_error = f"cannot load the implementation --lam-impl={self.spec!r}: {type(exc).__name__}: {exc}"
                finally:
                    self.disarm()
                if self.impl is not None:
                    self.event("loaded", implementation=self.impl.describe())
        if self.impl is None:
            self.event("usage_error", message=self.load_error or "no implementation")
            raise pytest.UsageError(self.load_error or "no implementation")
        return self.impl


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("lam_ref", "LAM conformance suite (lam_ref.conformance)")
    group.addoption("--lam-impl", dest="lam_impl", default=None, metavar="SPEC",
                    help="implementation under test: pkg.module or exec:COMMAND (default $LAM_IMPL, else lam_ref's adapter)")
    group.addoption("--lam-report", dest="lam_report", default=None, metavar="PATH", help="write the JSON conformance report here")
    group.addoption("--lam-thorough", dest="lam_thorough", action="store_true", default=False,
                    help="25x example counts, random generation (the --thorough of lam-ref conform)")
    group.addoption("--skips-file", "--lam-skips-file", dest="lam_skips_file", default=None, metavar="PATH",
                    help="check-id prefixes to skip, one per line ('# reason' optional)")
    group.addoption("--xfails-file", "--lam-xfails-file", dest="lam_xfails_file", default=None, metavar="PATH",
                    help="check-id prefixes expected to fail, one per line ('# reason' optional)")
    group.addoption("--lam-exec-timeout", dest="lam_exec_timeout", type=float, default=None, metavar="SEC",
                    help="deadline per request of an exec: implementation (default 10 s or $LAM_EXEC_TIMEOUT)")
    group.addoption("--lam-check-timeout", dest="lam_check_timeout", type=float, default=None, metavar="SEC",
                    help="deadline per check and for loading the implementation; past it the process exits (default: none)")
    group.addoption("--lam-progress", dest="lam_progress", default=None, metavar="PATH",
                    help="append one JSON line per event (loaded, start, result, finish) to PATH")


def pytest_configure(config: pytest.Config) -> None:
    timeout = config.getoption("lam_check_timeout")
    if timeout is not None and not timeout > 0:
        raise pytest.UsageError(f"--lam-check-timeout must be positive, got {timeout!r}")
    config.addinivalue_line("markers", f"{MARKER}: a LAM conformance check (lam_ref.conformance)")
    config.addinivalue_line("markers", "claim(id): the paper claim a test checks")
    config.stash[_STATE] = _State(config)


def _check_of(item: pytest.Item) -> Check | None:
    if item.get_closest_marker(MARKER) is None:
        return None
    callspec = getattr(item, "callspec", None)
    check = callspec.params.get("check") if callspec is not None else None
    return check if isinstance(check, Check) else None


def pytest_collection_modifyitems(session: pytest.Session, config: pytest.Config, items: list[pytest.Item]) -> None:
    state = config.stash[_STATE]
    ours = [(item, c) for item in items if (c := _check_of(item)) is not None]
    state.collected = len(ours)
    if not ours:
        return
    impl = state.implementation()
    rules = IdRules(state.skips, state.xfails, dict(impl.expected_failures))
    for item, c in ours:
        rule = rules.decide(c.id, item.nodeid)
        if rule is not None and rule[0] == "skip":
            item.add_marker(pytest.mark.skip(reason=f"{rule[2]} (--skips-file: {rule[1]})"))
        elif rule is not None:
            item.add_marker(pytest.mark.xfail(reason=rule[2], strict=False))
    for kind, prefixes in rules.unmatched().items():
        for prefix in prefixes:
            warnings.warn(f"--{kind}s-file: id {prefix!r} matches no conformance test", UnmatchedIdWarning, stacklevel=1)
            tr = config.pluginmanager.get_plugin("terminalreporter")
            if tr is not None:
                tr.write_line(f"WARNING --{kind}s-file: id {prefix!r} matches no conformance test", yellow=True)


def pytest_collection_finish(session: pytest.Session) -> None:
    state = session.config.stash[_STATE]
    ids = [c.id for item in session.items if (c := _check_of(item)) is not None]
    if ids:  # the checks this run must finish (after -k and every deselection): lam-ref conform
        state.event("collected", ids=ids)  # reports a run that ends without one of them as incomplete
    tr = session.config.pluginmanager.get_plugin("terminalreporter")
    if not state.collected or tr is None or state.impl is None:
        return
    profile = "thorough (25x examples, random)" if state.thorough else "default (derandomized)"
    for line in [*state.impl.header_lines(), f"  run: {profile}; {state.collected} conformance tests collected"]:
        tr.write_line(line)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> Any:
    """Record the start of each check and hold it to ``--lam-check-timeout``."""
    state = item.config.stash.get(_STATE, None)
    c = _check_of(item)
    if state is None or c is None:
        yield
        return
    state.event("start", id=c.id, nodeid=item.nodeid)
    state.arm(c.id)
    try:
        yield
    finally:
        state.disarm()


@pytest.fixture(scope="session")
def lam_impl(request: pytest.FixtureRequest) -> Implementation:
    """The implementation under test (``--lam-impl`` / ``$LAM_IMPL``)."""
    return request.config.stash[_STATE].implementation()


@pytest.fixture
def lam_ctx(request: pytest.FixtureRequest) -> Context:
    """A fresh :class:`~lam_ref.conformance.harness.Context` per test (example counts, statistics)."""
    return Context(thorough=request.config.stash[_STATE].thorough)


def run_check(check: Check, impl: Implementation, ctx: Context) -> None:
    """Run a check inside a pytest test: a missing optional part becomes a skip with its reason."""
    try:
        check(impl, ctx)
    except CheckSkipped as exc:
        pytest.skip(str(exc))


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[Any]) -> Any:
    outcome = yield
    c = _check_of(item)
    if c is None:
        return
    rep = outcome.get_result()
    state = item.config.stash[_STATE]
    if rep.when == "call" or (rep.when == "setup" and not rep.passed):
        skipped = expected = None
        if hasattr(rep, "wasxfail"):
            expected = rep.wasxfail or ""
        elif rep.skipped:
            lr = rep.longrepr
            skipped = lr[2].removeprefix("Skipped: ") if isinstance(lr, tuple) and len(lr) == 3 else str(lr)
        kind, reason = classify(failed=not rep.passed, skipped=skipped, expected=expected)
        ctx = item.funcargs.get("lam_ctx") if hasattr(item, "funcargs") else None
        message = exception = None
        if rep.failed or kind == "xfailed":
            exc = call.excinfo
            if exc is not None:
                exception = exc.typename
                message = exc.exconly()
        stats, counter = stats_of(ctx), counterexample_of(kind, ctx)
        state.results[item.nodeid] = CheckResult(
            c, kind, rep.duration, message, reason, exception, stats, counter, nodeid=item.nodeid,
            diagnosis=diagnosis_of(kind, ctx),
        )
        state.event("result", test=state.results[item.nodeid].to_json())


def pytest_terminal_summary(terminalreporter: Any, exitstatus: int, config: pytest.Config) -> None:
    """One line per profile: its verdict (SPEC §15.4)."""
    state = config.stash.get(_STATE, None)
    if state is None or state.impl is None or not state.results:
        return
    from .diagnosis import summarize, summary_lines
    from .profiles import profile_verdicts

    tests = [r.to_json() for r in state.results.values()]
    for line in summary_lines(summarize(tests)):
        terminalreporter.write_line("lam_ref conformance: " + line)
    verdicts = profile_verdicts(state.impl.profiles, tests)
    terminalreporter.write_line(
        "lam_ref conformance profiles: " + "; ".join(f"{name} {v['verdict']}" for name, v in verdicts.items())
    )


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    state = session.config.stash.get(_STATE, None)
    if state is None:
        return
    path = session.config.getoption("lam_report")
    from .report import OUTCOMES

    summary = {k: 0 for k in OUTCOMES}
    for r in state.results.values():
        summary[r.outcome] += 1
    try:
        if path and state.impl is not None:
            write_report(
                state.impl, list(state.results.values()), path, thorough=state.thorough, started=state.started, runner="pytest"
            )
            tr = session.config.pluginmanager.get_plugin("terminalreporter")
            if tr is not None:
                tr.write_line(f"lam_ref conformance report written to {path}")
    finally:
        if state.impl is not None:
            state.impl.close()
        state.event("finish", exitstatus=int(exitstatus), summary=summary, report=path)
        if state.progress is not None:
            state.progress.close()
