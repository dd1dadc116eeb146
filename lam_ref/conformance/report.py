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
      "summary": {"total", "passed", "failed", "skipped", "xfailed", "xpassed"},
      "profiles": {name: {"declared", "verdict", "reason", "checks", "failed"}},
      "run": {"status", "exit_code", "message"},
      "tests": [ {"id", "nodeid", "claim", "spec", "title", "parts", "profiles", "outcome",
                  "duration_s", "message", "reason", "exception", "hypothesis", "counterexample"} ]
    }

``profiles`` holds a verdict per profile (:func:`lam_ref.conformance.profiles.profile_verdicts`:
``passed``, ``failed``, ``incomplete`` or ``skipped`` when not declared, never passed). ``run``
says how the run ended: ``completed``, or, from ``lam-ref conform``'s supervisor, ``crashed``
(the process died or exited early, e.g. ``os._exit``), ``timed_out`` (a check or the loading
passed its deadline); every check not finished is then ``failed`` with the reason.

``outcome`` is one of :data:`OUTCOMES`. ``hypothesis`` (``null`` for checks without generated
data) holds ``max_examples``, ``examples``, ``invalid``, ``failing``, ``properties``,
``derandomize``, ``runtime_s``. ``counterexample`` is the minimal failing case (arrays as
``{"dtype", "shape", "values"}``), ``null`` unless the test failed on generated data.
:data:`REPORT_SCHEMA` is the same contract as a JSON Schema (draft 2020-12), and
:func:`validate_report` checks a report against it without third-party packages. Compatible
additions keep ``schema_version``; anything else bumps it.
"""

from __future__ import annotations

import datetime as _dt
import hashlib
import importlib.metadata
import os
import platform
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

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
RUN_STATUSES = ("completed", "crashed", "timed_out")
SCHEMA_VERSION = 1
OUTCOMES = ("passed", "failed", "skipped", "xfailed", "xpassed")
_LIBRARIES = ("lam_ref", "numpy", "scipy", "hypothesis", "pytest", "xxhash")

_STR = {"type": "string"}
_NSTR = {"type": ["string", "null"]}
_INT = {"type": "integer", "minimum": 0}
_NUM = {"type": "number", "minimum": 0}
_HYP = {
    "type": ["object", "null"],
    "required": ["max_examples", "examples", "invalid", "failing", "properties", "derandomize", "runtime_s"],
    "properties": {
        "max_examples": _INT,
        "examples": _INT,
        "invalid": _INT,
        "failing": _INT,
        "properties": _INT,
        "derandomize": {"type": "boolean"},
        "runtime_s": _NUM,
    },
}
#: The report contract as a JSON Schema (draft 2020-12).
REPORT_SCHEMA: dict[str, Any] = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "title": "lam_ref conformance report",
    "type": "object",
    "required": ["schema", "schema_version", "created", "duration_s", "runner", "suite", "implementation", "target", "summary", "tests"],
    "properties": {
        "schema": {"const": SCHEMA_ID},
        "schema_version": {"const": SCHEMA_VERSION},
        "created": _STR,
        "duration_s": _NUM,
        "runner": {"enum": ["pytest", "python"]},
        "suite": {
            "type": "object",
            "required": ["name", "version", "commit", "dirty", "source_sha256", "profile", "checks"],
            "properties": {
                "name": _STR,
                "version": _STR,
                "commit": _NSTR,
                "dirty": {"type": ["boolean", "null"]},
                "source_sha256": _STR,
                "profile": {"enum": ["default", "thorough", "custom"]},
                "checks": _INT,
            },
        },
        "implementation": {
            "type": "object",
            "required": ["spec", "kind", "name", "version", "complete", "parts", "missing", "target", "expected_failures"],
            "properties": {
                "spec": _STR,
                "kind": {"enum": ["python", "exec"]},
                "name": _STR,
                "version": _STR,
                "complete": {"type": "boolean"},
                "parts": {
                    "type": "object",
                    "required": ["substitute", "online", "lines", "codec"],
                    "properties": {p: {"type": "boolean"} for p in ("substitute", "online", "lines", "codec")},
                },
                "missing": {"type": "object"},
                "target": _NSTR,
                "expected_failures": {"type": "object"},
            },
        },
        "target": {
            "type": "object",
            "required": ["where", "cpu", "gpu", "platform", "machine", "python", "libraries"],
            "properties": {
                "where": _STR,
                "cpu": _STR,
                "gpu": _NSTR,
                "platform": _STR,
                "machine": _STR,
                "python": _STR,
                "libraries": {"type": "object"},
            },
        },
        "summary": {
            "type": "object",
            "required": ["total", *OUTCOMES],
            "properties": {k: _INT for k in ("total", *OUTCOMES)},
        },
        "profiles": {
            "type": "object",
            "additionalProperties": {
                "type": "object",
                "required": ["declared", "verdict", "reason", "checks", "failed"],
                "properties": {
                    "declared": {"type": "boolean"},
                    "verdict": {"enum": ["passed", "failed", "incomplete", "skipped"]},
                    "reason": _NSTR,
                    "checks": {"type": "array", "items": _STR},
                    "failed": {"type": "array", "items": _STR},
                },
            },
        },
        "run": {
            "type": "object",
            "required": ["status", "exit_code", "message"],
            "properties": {
                "status": {"enum": list(RUN_STATUSES)},
                "exit_code": {"type": ["integer", "null"]},
                "message": _NSTR,
            },
        },
        "tests": {
            "type": "array",
            "items": {
                "type": "object",
                "required": [
                    "id", "nodeid", "claim", "spec", "title", "parts", "outcome", "duration_s",
                    "message", "reason", "exception", "hypothesis", "counterexample",
                ],
                "properties": {
                    "id": _STR,
                    "nodeid": _NSTR,
                    "claim": _STR,
                    "spec": _STR,
                    "title": _STR,
                    "parts": {"type": "array", "items": _STR},
                    "profiles": {"type": "array", "items": _STR},
                    "outcome": {"enum": list(OUTCOMES)},
                    "duration_s": _NUM,
                    "message": _NSTR,
                    "reason": _NSTR,
                    "exception": _NSTR,
                    "hypothesis": _HYP,
                    "counterexample": {},
                },
            },
        },
    },
}


# -------------------------------------------------------------------------------------------
# facts about the machine and the suite
# -------------------------------------------------------------------------------------------
def _cpu_model() -> str:
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as fh:
            for line in fh:
                if line.lower().startswith(("model name", "hardware", "cpu model")):
                    return line.split(":", 1)[1].strip() + f" ({os.cpu_count()} logical CPUs)"
    except OSError:
        pass
    return (platform.processor() or platform.machine() or "unknown") + f" ({os.cpu_count()} logical CPUs)"


_GPU_CACHE: list[str | None] = []


def _gpu_model() -> str | None:
    """GPU names from ``nvidia-smi`` (5 s limit); ``None`` when there is none or it is absent."""
    if _GPU_CACHE:
        return _GPU_CACHE[0]
    name = None
    exe = shutil.which("nvidia-smi")
    if exe:
        try:
            out = subprocess.run(
                [exe, "--query-gpu=name", "--format=csv,noheader"], capture_output=True, text=True, timeout=5, check=False
            )
            names = [n.strip() for n in out.stdout.splitlines() if n.strip()]
            name = "; ".join(names) or None
        except (OSError, subprocess.TimeoutExpired):
            name = None
    _GPU_CACHE.append(name)
    return name


def _library_versions() -> dict[str, str]:
    out = {"python": platform.python_version()}
    for lib in _LIBRARIES:
        try:
            out[lib] = importlib.metadata.version(lib)
        except importlib.metadata.PackageNotFoundError:
            mod = sys.modules.get(lib)
            out[lib] = str(getattr(mod, "__version__", "not installed"))
    return out


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
        "cpu": _cpu_model(),
        "gpu": _gpu_model(),
        "platform": platform.platform(),
        "machine": platform.machine(),
        "python": f"{platform.python_implementation()} {platform.python_version()}",
        "libraries": _library_versions(),
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
    commit, dirty = None, None
    git = shutil.which("git")
    if git:
        try:
            res = subprocess.run([git, "-C", str(root), "rev-parse", "HEAD"], capture_output=True, text=True, timeout=5, check=False)
            if res.returncode == 0:
                commit = res.stdout.strip()
                st = subprocess.run(
                    [git, "-C", str(root), "status", "--porcelain", "--", "."], capture_output=True, text=True, timeout=5, check=False
                )
                dirty = bool(st.stdout.strip()) if st.returncode == 0 else None
        except (OSError, subprocess.TimeoutExpired):
            pass
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
        "profiles": profile_verdicts(facts.get("profiles") or (), tests),
        "run": run or {"status": "completed", "exit_code": None, "message": None},
        "tests": tests,
    }


# -------------------------------------------------------------------------------------------
# a small JSON Schema validator (the subset REPORT_SCHEMA uses)
# -------------------------------------------------------------------------------------------
_TYPES = {
    "object": dict,
    "array": list,
    "string": str,
    "boolean": bool,
    "null": type(None),
}


def _is_type(value: Any, name: str) -> bool:
    if name == "integer":
        return isinstance(value, int) and not isinstance(value, bool)
    if name == "number":
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    return isinstance(value, _TYPES[name])


def _validate(value: Any, schema: dict[str, Any], path: str, errors: list[str]) -> None:
    if "const" in schema and value != schema["const"]:
        errors.append(f"{path}: expected {schema['const']!r}, got {value!r}")
    if "enum" in schema and value not in schema["enum"]:
        errors.append(f"{path}: {value!r} is not one of {schema['enum']}")
    if "type" in schema:
        types = schema["type"] if isinstance(schema["type"], list) else [schema["type"]]
        if not any(_is_type(value, t) for t in types):
            errors.append(f"{path}: expected type {'/'.join(types)}, got {type(value).__name__}")
            return
    if "minimum" in schema and isinstance(value, (int, float)) and value < schema["minimum"]:
        errors.append(f"{path}: {value!r} < minimum {schema['minimum']}")
    if isinstance(value, dict):
        for key in schema.get("required", []):
            if key not in value:
                errors.append(f"{path}: missing required key {key!r}")
        for key, sub in schema.get("properties", {}).items():
            if key in value:
                _validate(value[key], sub, f"{path}.{key}", errors)
        extra = schema.get("additionalProperties")
        if isinstance(extra, dict):
            for key, item in value.items():
                if key not in schema.get("properties", {}):
                    _validate(item, extra, f"{path}.{key}", errors)
    if isinstance(value, list) and "items" in schema:
        for i, item in enumerate(value):
            _validate(item, schema["items"], f"{path}[{i}]", errors)


def validate_report(report: Any) -> list[str]:
    """Every way ``report`` departs from :data:`REPORT_SCHEMA` (empty list: valid)."""
    errors: list[str] = []
    _validate(report, REPORT_SCHEMA, "report", errors)
    return errors
