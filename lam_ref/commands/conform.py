"""``lam-ref conform``: run the conformance suite (SPEC §15) against an implementation.

Runs pytest on the installed :mod:`lam_ref.conformance.suite` with the plugin's options, in a
hermetic configuration (its own empty ini file, no conftest files from the current directory),
so it behaves the same from a checkout, a wheel or another project's folder.

The suite runs in a **child process** that this command supervises (issue 24 D4): every check,
and the loading of the implementation, has a deadline (``--check-timeout``, enforced inside the
child by a watchdog thread, and from outside as a backstop); the child reports each event to a
progress file as it happens. A run counts as passed only when the child finished normally, wrote
its summary and a valid report, and no check failed. A child that hangs, crashes, or exits early
(an implementation calling ``os._exit(0)`` included) gives a failing verdict, exit 1, and a
report whose unfinished checks are ``failed`` with the reason.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from ..geometry import LamValueError
from ._options import add_mkdir
from ._paths import reads, validate_input_paths, validate_json_dest, writes

#: Default deadline of one check (and of loading the implementation), in seconds.
CHECK_TIMEOUT = 300.0

#: The example each ``--help`` shows (``lam_ref.cli`` collects them from every command module).
EXAMPLES = {
    "conform": "lam-ref conform --impl your_package.lam_adapter --json conformance.json",
}


def register(sub: argparse._SubParsersAction) -> argparse.ArgumentParser:
    p = sub.add_parser(
        "conform",
        help="check an implementation of SPEC §15 with the conformance suite",
        description="Run the LAM conformance suite (pytest) against IMPL: a Python module implementing "
        "SPEC §15 (pkg.module) or exec:COMMAND speaking the line protocol. Extra pytest arguments go after --.",
    )
    p.add_argument("--impl", default=None, metavar="IMPL",
                   help="pkg.module or exec:COMMAND (default $LAM_IMPL; with neither, an error: there is no silent default; "
                   "lam_ref's own adapter is lam_ref.conformance.adapter)")
    writes(p.add_argument("--json", metavar="PATH", help="write the JSON report (documented schema) to PATH"))
    add_mkdir(p)
    p.add_argument("--thorough", action="store_true", help="25x example counts with random generation")
    reads(p.add_argument("--skips-file", metavar="PATH", help="check-id prefixes to skip, one per line ('# reason' optional)"))
    reads(p.add_argument("--xfails-file", metavar="PATH", help="check-id prefixes expected to fail, one per line"))
    p.add_argument("--exec-timeout", type=float, metavar="SEC", help="per-request deadline for exec: implementations (default 10)")
    p.add_argument("--check-timeout", type=float, default=None, metavar="SEC",
                   help=f"deadline per check and for loading the implementation (default {CHECK_TIMEOUT:g}; thorough: 10x)")
    p.add_argument("-k", dest="keyword", metavar="EXPR", help="only tests matching this pytest -k expression")
    p.add_argument("-x", "--exitfirst", action="store_true", help="stop at the first failure")
    p.add_argument("-q", "--quiet", action="count", default=0, help="less output (pytest -q)")
    p.add_argument("--list", action="store_true", help="list the checks (id, claim, SPEC item, parts) and exit")
    p.add_argument("pytest_args", nargs=argparse.REMAINDER, help="-- followed by extra pytest arguments")
    p.set_defaults(func=run)
    return p


def _list() -> int:
    from ..conformance import CHECKS
    from ..tables import table

    rows = [[c.id, c.claim, ", ".join(c.profiles), c.spec, ", ".join(c.parts), "yes" if c.complete_only else ""] for c in CHECKS]
    print(table(rows, ["check", "claim", "profiles", "SPEC item", "parts", "COMPLETE only"]))
    return 0


def pytest_arguments(args: argparse.Namespace, ini_path: str) -> list[str]:
    """The pytest command line for ``args`` (exposed for tests)."""
    import lam_ref.conformance.suite as suite

    suite_dir = Path(suite.__file__).resolve().parent
    root = suite_dir.parents[2]  # the folder holding the lam_ref package
    argv = [
        "-c", ini_path, "--rootdir", str(root), "--confcutdir", str(suite_dir),
        "-p", "lam_ref.conformance.plugin", "-p", "no:cacheprovider",
        "--pyargs", "lam_ref.conformance.suite", "-rfEsxX",
        "-W", "ignore::pytest.PytestAssertRewriteWarning",
    ]
    if args.impl is not None:
        argv.append(f"--lam-impl={args.impl}")
    if args.json:
        argv.append(f"--lam-report={os.path.abspath(args.json)}")
    if args.thorough:
        argv.append("--lam-thorough")
    for flag, value in (("--skips-file", args.skips_file), ("--xfails-file", args.xfails_file)):
        if value:
            if not Path(value).is_file():
                raise LamValueError(f"{flag} path {value!r} does not exist")
            argv.append(f"{flag}={os.path.abspath(value)}")
    if args.exec_timeout is not None:
        if not args.exec_timeout > 0:
            raise LamValueError(f"--exec-timeout must be positive, got {args.exec_timeout!r}")
        argv.append(f"--lam-exec-timeout={args.exec_timeout}")
    if args.keyword:
        argv += ["-k", args.keyword]
    if args.exitfirst:
        argv.append("-x")
    argv += ["-q"] * args.quiet
    extra = list(args.pytest_args or [])
    if extra and extra[0] == "--":
        extra = extra[1:]
    return argv + extra


def _check_ids() -> list[str]:
    from ..conformance import CHECKS

    return [c.id for c in CHECKS]


def _events(path: Path) -> list[dict[str, Any]]:
    """The progress lines the child wrote (a torn last line is ignored)."""
    out = []
    try:
        text = path.read_text(encoding="utf-8")
    except OSError:
        return out
    for line in text.splitlines():
        try:
            out.append(json.loads(line))
        except ValueError:
            continue
    return out


def _placeholder(spec: str) -> dict[str, Any]:
    from ..conformance._implementation import PART_ATTRIBUTES

    return {
        "spec": spec, "kind": "exec" if spec.startswith("exec:") else "python", "name": spec, "version": "unknown",
        "complete": True, "parts": {p: False for p in PART_ATTRIBUTES}, "missing": {}, "target": None,
        "expected_failures": {}, "profiles": [], "profiles_declared": False,
    }


def missing_checks(events: list[dict[str, Any]], report: dict[str, Any]) -> list[str]:
    """The checks the run collected (its ``collected`` event) or started, in suite order, that have
    no result in ``report``: a run missing one never says ``completed`` (issue 39 §4)."""
    from ..conformance import CHECKS

    expected = {i for e in events if e.get("event") == "collected" for i in e.get("ids") or ()}
    expected |= {e.get("id") for e in events if e.get("event") == "start"}
    have = {t.get("id") for t in report.get("tests") or ()}
    return [c.id for c in CHECKS if c.id in expected and c.id not in have]


def abnormal_report(events: list[dict[str, Any]], spec: str, status: str, exit_code: int | None, why: str,
                    *, started: float, thorough: bool, only: set[str] | None = None) -> dict[str, Any]:
    """The report of a run that did not finish: finished checks as recorded, every other check
    ``failed`` with ``why`` (never passed, never silently skipped); ``only``: just these checks
    (those an incomplete run collected)."""
    from ..conformance import CHECKS
    from ..conformance.report import build_report

    loaded = next((e["implementation"] for e in events if e.get("event") == "loaded"), None)
    done = {e["test"]["id"]: e["test"] for e in events if e.get("event") == "result"}
    running = [e["id"] for e in events if e.get("event") == "start" and e["id"] not in done]
    tests = []
    for c in CHECKS:
        if only is not None and c.id not in only and c.id not in done:
            continue
        if c.id in done:
            tests.append(done[c.id])
            continue
        where = "while this check ran" if c.id in running else "before this check ran"
        tests.append({
            "id": c.id, "nodeid": None, "claim": c.claim, "spec": c.spec, "title": c.title, "parts": list(c.parts),
            "profiles": list(c.profiles), "outcome": "failed", "duration_s": 0.0,
            "message": f"not completed: the conformance run ended {where}: {why}", "reason": None,
            "exception": "RunAborted", "hypothesis": None, "counterexample": None,
        })
    return build_report(
        None, tests, profile="thorough" if thorough else "default", runner="pytest", started=started,
        finished=time.time(), checks=len(CHECKS), run={"status": status, "exit_code": exit_code, "message": why},
        describe=loaded or _placeholder(spec),
    )


class _Relay:
    """Copies the child's output to ours line by line, holding back what comes before the run
    header, so that a usage error (which ends the child before the header) prints as one line.
    The child's line naming its report in the temporary folder (``hidden``), which is deleted when
    the run ends, is not copied: the command names the file that survives, or none (issue 35 §4)."""

    HEADER = "lam_ref conformance: implementation "

    def __init__(self, proc: subprocess.Popen[Any], hidden: str | None = None) -> None:
        import threading

        self.proc, self.held, self.open = proc, [], False
        self.hidden = f"report written to {hidden}" if hidden else None
        self.thread = threading.Thread(target=self._copy, daemon=True)
        self.thread.start()

    def _copy(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            if self.hidden is not None and line.rstrip("\n").endswith(self.hidden):
                continue
            if not self.open and line.startswith(self.HEADER):
                self.release()
            if self.open:
                sys.stdout.write(line)
                sys.stdout.flush()
            else:
                self.held.append(line)

    def release(self) -> None:
        self.open = True
        if self.held:
            sys.stdout.write("".join(self.held))
            sys.stdout.flush()
            self.held = []

    def join(self) -> None:
        self.thread.join(timeout=10)


def _kill(proc: subprocess.Popen[Any]) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (OSError, AttributeError):
        proc.kill()
    proc.wait()


def run(args: argparse.Namespace) -> int:
    """Exit status: 0 every check passed, 1 some failed or the run ended abnormally (a hang, a
    crash, an early exit: always with a report), 2 a usage error or an unusable input (no or an
    empty implementation name, an unknown profile, an implementation that cannot be loaded)."""
    if args.list:
        return _list()
    if args.json == "-":
        raise LamValueError("--json -: the conformance report is written to a file; give a path")
    validate_json_dest(args.json, mkdir=args.mkdir)
    validate_input_paths([f for f in (args.skips_file, args.xfails_file) if f])
    from ..conformance.impl import resolve_spec

    spec = resolve_spec(args.impl)  # no implementation, or an empty name: one line, exit 2
    args.impl = spec
    timeout = args.check_timeout if args.check_timeout is not None else CHECK_TIMEOUT * (10 if args.thorough else 1)
    if not timeout > 0:
        raise LamValueError(f"--check-timeout must be positive, got {args.check_timeout!r}")
    import lam_ref

    started = time.time()
    with tempfile.TemporaryDirectory(prefix="lam-conform-") as tmp:
        ini = Path(tmp) / "pytest.ini"
        ini.write_text("[pytest]\n", encoding="utf-8")
        progress, child_report = Path(tmp) / "progress.jsonl", Path(tmp) / "report.json"
        user_json = args.json
        args.json = str(child_report)
        argv = pytest_arguments(args, str(ini)) + [f"--lam-progress={progress}", f"--lam-check-timeout={timeout}"]
        args.json = user_json
        env = dict(os.environ)
        root = str(Path(lam_ref.__file__).resolve().parent.parent)
        env["PYTHONPATH"] = os.pathsep.join([root, *([env["PYTHONPATH"]] if env.get("PYTHONPATH") else [])])
        env.pop("LAM_IMPL", None)  # the child gets the resolved --lam-impl
        backstop = timeout * (len(_check_ids()) + 2) + 60.0
        sys.stdout.flush()
        proc = subprocess.Popen(
            [sys.executable, "-m", "pytest", *argv], env=env, start_new_session=True,
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, errors="replace", bufsize=1,
        )
        held = _Relay(proc, hidden=str(child_report))
        status, why = "completed", None
        try:
            rc = proc.wait(timeout=backstop)
        except subprocess.TimeoutExpired:
            _kill(proc)
            rc, status, why = None, "timed_out", f"the run passed its backstop deadline of {backstop:g} s and was killed"
        except KeyboardInterrupt:
            _kill(proc)
            raise
        held.join()
        events = _events(progress)
        finish = next((e for e in events if e.get("event") == "finish"), None)
        usage = next((e for e in events if e.get("event") == "usage_error"), None)
        if usage is not None:  # no implementation, an unknown profile, an import error: one line, exit 2
            raise LamValueError(str(usage.get("message")))
        held.release()
        if status == "completed" and rc in (2, 3, 4, 5) and not any(e.get("event") == "start" for e in events):
            return 2  # pytest refused its arguments (e.g. a bad -k expression) before any check ran
        if status == "completed" and finish is None:
            started_ids = [e.get("what") for e in events if e.get("event") == "armed"]
            last = started_ids[-1] if started_ids else None
            if rc is not None and rc < 0:
                status, why = "crashed", f"the process was killed by signal {-rc}"
            elif rc == 1 and last is not None and not any(
                e.get("event") == "result" and e["test"]["id"] == last for e in events
            ):
                status, why = "timed_out", f"{last} did not finish within its deadline of {timeout:g} s (--check-timeout)"
            else:
                status, why = "crashed", (
                    f"the process exited with status {rc} without finishing the run (no summary; e.g. the "
                    "implementation called os._exit or sys.exit)"
                )
        report: dict[str, Any] | None = None
        if status == "completed":
            try:
                report = json.loads(child_report.read_text(encoding="utf-8"))
            except (OSError, ValueError) as exc:
                status, why = "crashed", f"the run finished but wrote no readable report ({exc})"
            else:
                from ..conformance.report import validate_report

                problems = validate_report(report)
                if problems:
                    status, why, report = "crashed", f"the run's report is invalid: {problems[0]}", None
        only = None
        if report is not None and (missing := missing_checks(events, report)):
            status, report = "incomplete", None
            only = set(missing) | {t["id"] for e in events if e.get("event") == "result" for t in [e["test"]]}
            why = (f"incomplete: {len(missing)} collected check(s) did not finish (pytest stopped early, e.g. -x or "
                   f"--maxfail): {', '.join(missing)}")
        if report is None:
            report = abnormal_report(events, spec, status, rc, why or "unknown", started=started, thorough=args.thorough,
                                     only=only)
            print(f"lam-ref conform: FAILED: {why}", file=sys.stderr)
        if args.json:
            from .._io import write_json

            write_json(report, args.json)
            print(f"lam_ref conformance report written to {args.json}", file=sys.stdout if status == "completed" else sys.stderr)
    if status != "completed":
        return 1
    if rc == 0 and report["summary"]["failed"] == 0:
        return 0
    return 1 if rc in (0, 1) else 2
