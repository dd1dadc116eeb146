"""Loading an implementation under test and describing it (SPEC §15).

An implementation is named by a spec string:

* ``pkg.module`` — a Python module exposing any of ``substitute``, ``OnlineSession``,
  ``dedup_lines`` + ``STUB_PREFIX``, ``codec_encode`` + ``codec_decode`` (the parts of SPEC §15);
* ``exec:COMMAND`` — a separate process speaking :mod:`lam_ref.conformance.protocol`; a module
  object with a string ``EXEC`` (the command that serves it) is checked through that process.

Optional module attributes: ``COMPLETE`` (bool, default ``True``: ``substitute`` must equal the
oracle; ``False``: held to soundness only), ``NAME``, ``__version__`` (or ``VERSION``), ``TARGET``
(where it runs, e.g. ``"cuda:0"``), ``EXPECTED_FAILURES`` (``{check-id prefix: reason}``,
expected failures declared by the implementer, as scikit-learn's ``_xfail_checks``) and
``PROFILES`` (the profiles it claims, :mod:`lam_ref.conformance.profiles`; default: one per
provided part). Optional part ``session``: ``session_save(session, path)`` and
``session_load(path, t)`` (the save format of profile ``session-v1``).

The checks see every implementation through :class:`Implementation`, so a Python module and an
exec server are checked by the same code.
"""

from __future__ import annotations

import importlib
import importlib.metadata
import os
import sys
import types
from typing import Any

import numpy as np

from ..geometry import LamValueError
from ._implementation import DEFAULT_IMPL, PART_ATTRIBUTES, Implementation, read_budget
from .adapters import resolve_adapter
from .exec_client import ExecImplementation
from .profiles import default_profiles, validate_profiles

__all__ = [
    "DEFAULT_IMPL",
    "NO_IMPL_MESSAGE",
    "PART_ATTRIBUTES",
    "Implementation",
    "PythonImplementation",
    "load_implementation",
    "resolve_spec",
]

def _module_version(module: types.ModuleType) -> str:
    for attr in ("__version__", "VERSION", "version"):
        value = getattr(module, attr, None)
        if isinstance(value, str):
            return value
    top = module.__name__.split(".")[0]
    try:
        return importlib.metadata.version(top)
    except importlib.metadata.PackageNotFoundError:
        return "unknown"


class PythonImplementation(Implementation):
    """A Python module implementing (part of) SPEC §15, called in-process."""

    kind = "python"

    def __init__(self, module: types.ModuleType, spec: str | None = None) -> None:
        self.module = module
        self.spec = spec or module.__name__
        self.name = str(getattr(module, "NAME", module.__name__))
        self.version = _module_version(module)
        complete = getattr(module, "COMPLETE", True)
        if not isinstance(complete, bool):
            raise LamValueError(f"{self.spec}.COMPLETE must be True or False, got {complete!r}")
        self.complete = complete
        target = getattr(module, "TARGET", None)
        self.target = None if target is None else str(target)
        xf = getattr(module, "EXPECTED_FAILURES", {}) or {}
        if not isinstance(xf, dict) or not all(isinstance(k, str) and isinstance(v, str) for k, v in xf.items()):
            raise LamValueError(f"{self.spec}.EXPECTED_FAILURES must map check-id prefixes to reasons (str -> str), got {xf!r}")
        self.expected_failures = dict(xf)
        self.parts, self.missing_reasons = {}, {}
        for part, attrs in PART_ATTRIBUTES.items():
            absent = [a for a in attrs if getattr(module, a, None) is None]
            self.parts[part] = not absent
            if absent:
                self.missing_reasons[part] = f"module {self.spec} has no {' / '.join(absent)}"
        prefix = getattr(module, "STUB_PREFIX", None)
        if self.parts["lines"] and (not isinstance(prefix, str) or not prefix or "\n" in prefix):
            raise LamValueError(f"{self.spec}.STUB_PREFIX must be a non-empty one-line string, got {prefix!r}")
        self.stub_prefix = prefix if self.parts["lines"] else None
        self.budget = read_budget(getattr(module, "BUDGET", None), self.spec)
        declared = getattr(module, "PROFILES", None)
        self.profiles_declared = declared is not None
        self.profiles = (
            default_profiles(self.parts) if declared is None else validate_profiles(declared, self.parts, self.spec)
        )

    def substitute(self, embeddings: np.ndarray, t: float) -> Any:
        return self.module.substitute(embeddings, t)

    def online_session(self, t: float) -> Any:
        return self.module.OnlineSession(t)

    def dedup_lines(self, records: list[str]) -> Any:
        return self.module.dedup_lines(records)

    def codec_encode(self, x: np.ndarray, eb: float) -> Any:
        return self.module.codec_encode(x, eb)

    def codec_decode(self, data: bytes) -> Any:
        return self.module.codec_decode(data)

    def kept(self, embeddings: np.ndarray, t: float) -> Any:
        return self.module.kept(embeddings, t)

    def session_save(self, session: Any, path: str) -> Any:
        return self.module.session_save(session, path)

    def session_load(self, path: str, t: float) -> Any:
        return self.module.session_load(path, t)


#: What a user is told when no implementation is chosen (issue 20 item 8: no silent default).
NO_IMPL_MESSAGE = (
    "no implementation chosen: pass --lam-impl=pkg.module (lam-ref conform: --impl pkg.module), "
    "or exec:COMMAND, or set LAM_IMPL=pkg.module; lam_ref's own adapter is --lam-impl=" + DEFAULT_IMPL
)


def resolve_spec(spec: str | None = None) -> str:
    """The implementation spec in force: the argument, else ``$LAM_IMPL``.

    There is no silent default (as array-api-tests): with neither, or with an empty or blank
    name, raises :class:`LamValueError` saying how to choose one.
    """
    if spec is None:
        spec = os.environ.get("LAM_IMPL")
        if spec is not None and not spec.strip():
            raise LamValueError(f"LAM_IMPL is set but empty; {NO_IMPL_MESSAGE}")
    if spec is None:
        raise LamValueError(NO_IMPL_MESSAGE)
    if not spec.strip():
        raise LamValueError(f"implementation name {spec!r} is empty; {NO_IMPL_MESSAGE}")
    return spec


def load_implementation(
    impl: str | types.ModuleType | Implementation | None = None, *, exec_timeout: float | None = None
) -> Implementation:
    """An :class:`Implementation` for a spec string, a module object or an existing implementation.

    ``exec_timeout`` (seconds per request, default 10 or ``$LAM_EXEC_TIMEOUT``) applies to
    ``exec:`` implementations. An unknown module raises :class:`LamValueError` naming the spec.
    """
    if isinstance(impl, Implementation):
        return impl
    if isinstance(impl, types.ModuleType):
        return _from_module(impl, None, exec_timeout)
    spec = resolve_adapter(resolve_spec(impl))  # a short name (semhash, langchain, ...) is a shipped adapter
    if spec.startswith("exec:"):
        return ExecImplementation(spec[len("exec:") :], timeout=exec_timeout)
    return _from_module(_import(spec), spec, exec_timeout)


def _from_module(module: types.ModuleType, spec: str | None, exec_timeout: float | None) -> Implementation:
    """A module in-process, or, when it sets a string ``EXEC`` (an exec server: the protocol mutants
    and controls), the process that command starts."""
    command = getattr(module, "EXEC", None)
    if isinstance(command, str):
        return ExecImplementation(command, timeout=exec_timeout)
    return PythonImplementation(module, spec)


def _import(spec: str) -> types.ModuleType:
    """Import ``spec``; like ``python -m``, a module in the current directory is found too."""
    try:
        return importlib.import_module(spec)
    except ModuleNotFoundError as exc:
        cwd = os.getcwd()
        top = spec.split(".")[0]
        if exc.name != top or cwd in sys.path or "" in sys.path:
            raise LamValueError(f"lam_impl {spec!r} cannot be imported: {exc}") from exc
        sys.path.insert(0, cwd)
        try:
            return importlib.import_module(spec)
        except ImportError as exc2:
            sys.path.remove(cwd)
            raise LamValueError(f"lam_impl {spec!r} cannot be imported (also tried {cwd}): {exc2}") from exc2
    except ImportError as exc:
        raise LamValueError(f"lam_impl {spec!r} cannot be imported: {exc}") from exc
