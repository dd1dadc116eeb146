"""The JSON report of a conformance run: a stable, documented schema (SPEC §15).

Written by ``lam-ref conform --json PATH``, ``pytest --lam-report=PATH`` and
:func:`lam_ref.conformance.run_checks` (through :func:`build_report`). Top level::

    {
      "schema": "lam_ref.conformance.report",  "schema_version": 1,
      "created": "2025-01-01T12:00:00+00:00", "duration_s": 12.3, "runner": "pytest" | "python",
      "suite": {"name", "version", "commit", "dirty", "source_sha256", "profile", "checks"},
      "implementation": {"spec", "kind", "name", "version", "complete", "parts", "missing",
                         "target", "expected_failures", ...},
      "target": {"where", "cpu", "gpu", "platform", "machine", "python", "libraries"},
      "summary": {"total", "passed", "failed", "skipped", "xfailed", "xpassed", "not_applicable", "not_run", "resource"},
      "properties": {"diagnosed", "compared", "kept_equal", "witness_differs", "prefix_broken",
                     "properties": {word: {"meaning", "checks"}}, "resource", "not_run", "not_applicable"},
      "profiles": {name: {"declared", "verdict", "reason", "checks", "failed"}},
      "run": {"status", "exit_code", "message"},
      "tests": [ {"id", "nodeid", "claim", "spec", "title", "parts", "profiles", "outcome",
                  "duration_s", "message", "reason", "exception", "hypothesis", "counterexample",
                  "diagnosis"} ]

``properties`` is the per-property summary of the failures' diagnoses
(:func:`lam_ref.conformance.diagnosis.summarize`); ``diagnosis`` (``null`` unless failed) names the
properties broken on the counterexample, in the words of
:data:`lam_ref.conformance.diagnosis.VOCABULARY`.
    }

``profiles`` holds a verdict per profile (:func:`lam_ref.conformance.profiles.profile_verdicts`:
``passed``, ``failed``, ``incomplete`` or ``skipped`` when not declared, never passed). ``run``
says how the run ended: ``completed``, or, from ``lam-ref conform``'s supervisor, ``crashed``
(the process died or exited early, e.g. ``os._exit``), ``timed_out`` (a check or the loading
passed its deadline), ``incomplete`` (the run ended normally, but without a result for every check
it collected, e.g. ``-- -x``); every check not finished is then ``failed`` with the reason, and
``run.message`` names the checks that did not finish.

``outcome`` is one of :data:`OUTCOMES`. ``hypothesis`` (``null`` for checks without generated
data) holds ``max_examples``, ``examples``, ``invalid``, ``failing``, ``properties``,
``derandomize``, ``runtime_s``. ``counterexample`` is the minimal failing case (arrays as
``{"dtype", "shape", "values"}``), ``null`` unless the test failed on generated data.
:data:`REPORT_SCHEMA` is the same contract as a JSON Schema (draft 2020-12), shipped as
``lam_ref/schemas/lam_ref.conformance.report.schema.json`` and checked by :func:`validate_report`
through :mod:`lam_ref.schemas` (the ``jsonschema`` package). Compatible additions keep
``schema_version``; anything else bumps it. The machine and git facts come from
:mod:`lam_ref.provenance`, shared with the determinism reports.
"""

from __future__ import annotations

import datetime as _dt
import hashlib
import platform
from pathlib import Path
from typing import Any

from .. import schemas as _schemas
from ..provenance import cpu_model, git_state, gpu_model, library_versions

__all__ = [
    "OUTCOMES",
    "REPORT_SCHEMA",
    "RUN_STATUSES",
    "SCHEMA_ID",
    "SCHEMA_VERSION",
    "build_report",
    "execution_target",
    "suite_info",
    "validate_report",
]

SCHEMA_ID = "lam_ref.conformance.report"
RUN_STATUSES = ("completed", "incomplete", "crashed", "timed_out")
SCHEMA_VERSION = 1
#: not_applicable, not_run and resource: :mod:`lam_ref.conformance.verdicts` (never passed, never a contract failure)
OUTCOMES = ("passed", "failed", "skipped", "xfailed", "xpassed", "not_applicable", "not_run", "resource")
_LIBRARIES = ("lam_ref", "numpy", "scipy", "hypothesis", "pytest", "xxhash")

#: The report contract as a JSON Schema (draft 2020-12): ``lam_ref/schemas/lam_ref.conformance.report.schema.json``.
REPORT_SCHEMA: dict[str, Any] = _schemas.load(SCHEMA_ID)


# -------------------------------------------------------------------------------------------
# facts about the machine and the suite
# -------------------------------------------------------------------------------------------
def execution_target(impl: Any = None) -> dict[str, Any]:
    """Where the implementation runs: CPU and GPU model, platform, library versions (SPEC §15)."""
    if impl is None:
        where = "in-process"
    elif impl.kind == "exec":
        where = f"separate process: {getattr(impl, 'command', impl.spec)}"
    else:
        where = "in-process (python)"
    if impl is not None and impl.target:
        where += f"; the implementation reports: {impl.target}"
    return {
        "where": where,
        "cpu": cpu_model(),
        "gpu": gpu_model(),
        "platform": platform.platform(),
        "machine": platform.machine(),
        "python": f"{platform.python_implementation()} {platform.python_version()}",
        "libraries": library_versions(_LIBRARIES),
    }


def _source_files() -> list[Path]:
    root = Path(__file__).resolve().parent
    return sorted(p for p in root.rglob("*.py") if "__pycache__" not in p.parts)


def suite_info(profile: str = "default", checks: int | None = None) -> dict[str, Any]:
    """Suite name, lam_ref version, git commit (``None`` outside a checkout), dirty flag and a
    SHA-256 over the suite's own source files (identifies the suite even in an installed copy)."""
    from .. import __version__

    root = Path(__file__).resolve().parent
    h = hashlib.sha256()
    for path in _source_files():
        h.update(path.relative_to(root).as_posix().encode() + b"\0" + path.read_bytes() + b"\0")
    commit, dirty = git_state(root)
    return {
        "name": "lam_ref.conformance",
        "version": __version__,
        "commit": commit,
        "dirty": dirty,
        "source_sha256": h.hexdigest(),
        "profile": profile,
        "checks": checks,
    }


def build_report(
    impl: Any,
    tests: list[dict[str, Any]],
    *,
    profile: str,
    runner: str,
    started: float,
    finished: float,
    checks: int | None = None,
    run: dict[str, Any] | None = None,
    describe: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """Assemble a report (see the module docstring) from per-test records (``CheckResult.to_json()``);
    ``checks`` is the size of the suite (default: the number of records); ``run`` how the run
    ended (default completed); ``describe`` the implementation's facts when ``impl`` is ``None``
    (a supervisor that never loaded it)."""
    from .diagnosis import summarize
    from .profiles import profile_verdicts

    summary = {"total": len(tests), **{k: 0 for k in OUTCOMES}}
    for t in tests:
        summary[t["outcome"]] += 1
    facts = impl.describe() if impl is not None else dict(describe or {})
    return {
        "schema": SCHEMA_ID,
        "schema_version": SCHEMA_VERSION,
        "created": _dt.datetime.fromtimestamp(started, _dt.timezone.utc).isoformat(timespec="seconds"),
        "duration_s": max(0.0, finished - started),
        "runner": runner,
        "suite": suite_info(profile, len(tests) if checks is None else checks),
        "implementation": facts,
        "target": execution_target(impl),
        "summary": summary,
        "properties": summarize(tests),
        "profiles": profile_verdicts(facts.get("profiles") or (), tests),
        "run": run or {"status": "completed", "exit_code": None, "message": None},
        "tests": tests,
    }


def validate_report(report: Any) -> list[str]:
    """Every way ``report`` departs from :data:`REPORT_SCHEMA`, one line each (empty list: valid)."""
    return [f"report: {e}" for e in _schemas.errors(report, SCHEMA_ID)]
