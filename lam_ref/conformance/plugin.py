"""pytest plugin of the conformance suite (entry point ``pytest11``: ``lam_ref.conformance.plugin``).

Options (all inert unless conformance tests are collected, so they never disturb other suites):

| option | meaning |
|---|---|
| ``--lam-impl=SPEC`` | implementation under test: ``pkg.module`` or ``exec:COMMAND`` (default ``$LAM_IMPL``, else ``lam_ref.conformance.adapter``) |
| ``--lam-report=PATH`` | write the JSON report (:mod:`lam_ref.conformance.report`) |
| ``--lam-thorough`` | 25× the example counts, random (not derandomized) generation; also on when ``HYPOTHESIS_PROFILE=thorough`` |
| ``--skips-file=PATH`` | check-id prefixes to skip, one per line, ``# reason`` optional |
| ``--xfails-file=PATH`` | check-id prefixes expected to fail, same format |
| ``--lam-exec-timeout=SEC`` | per-request deadline of an ``exec:`` implementation (default 10) |

Usage: ``pytest --pyargs lam_ref.conformance.suite --lam-impl=pkg.module`` (add
``-p lam_ref.conformance.plugin`` where plugin autoloading is disabled).
"""

from __future__ import annotations

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
        self.spec = resolve_spec(config.getoption("lam_impl"))
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

    def implementation(self) -> Implementation:
        if self.impl is None and self.load_error is None:
            try:
                self.impl = load_implementation(self.spec, exec_timeout=self.timeout)
            except Exception as exc:  # noqa: BLE001 - shown as a usage error with its cause
                self.load_error = f"cannot load the implementation --lam-impl={self.spec!r}: {type(exc).__name__}: {exc}"
        if self.impl is None:
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


def pytest_configure(config: pytest.Config) -> None:
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
    tr = session.config.pluginmanager.get_plugin("terminalreporter")
    if not state.collected or tr is None or state.impl is None:
        return
    profile = "thorough (25x examples, random)" if state.thorough else "default (derandomized)"
    for line in [*state.impl.header_lines(), f"  profile: {profile}; {state.collected} conformance tests collected"]:
        tr.write_line(line)


@pytest.fixture(scope="session")
def lam_impl(request: pytest.FixtureRequest) -> Implementation:
    """The implementation under test (``--lam-impl`` / ``$LAM_IMPL`` / lam_ref's adapter)."""
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
            c, kind, rep.duration, message, reason, exception, stats, counter, nodeid=item.nodeid
        )


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    state = session.config.stash.get(_STATE, None)
    if state is None:
        return
    path = session.config.getoption("lam_report")
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
