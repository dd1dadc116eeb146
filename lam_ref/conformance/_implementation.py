"""The base of every implementation the checks run against: :class:`Implementation` (SPEC §15).

Kept apart from :mod:`lam_ref.conformance.impl` (which loads Python modules and ``exec:``
servers) so that :mod:`lam_ref.conformance.exec_client` can subclass it without an import cycle.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..geometry import LamValueError
from .report import execution_target

__all__ = ["DEFAULT_IMPL", "EXEC_PARTS", "PART_ATTRIBUTES", "Implementation", "read_budget"]

#: lam_ref's own adapter. It is no longer a silent default: the suite refuses to run until an
#: implementation is chosen (``--lam-impl`` / ``LAM_IMPL``); lam_ref's tests choose this one.
DEFAULT_IMPL = "lam_ref.conformance.adapter"
#: SPEC §15 parts and the module attributes each needs.
PART_ATTRIBUTES: dict[str, tuple[str, ...]] = {
    "substitute": ("substitute",),
    "online": ("OnlineSession",),
    "lines": ("dedup_lines", "STUB_PREFIX"),
    "codec": ("codec_encode", "codec_decode"),
    "session": ("session_save", "session_load"),
    "kept": ("kept",),
}
#: The parts the exec protocol carries (session files are in-process only).
EXEC_PARTS = ("substitute", "online", "lines", "codec")


class Implementation:
    """The interface the checks use; subclasses adapt a Python module or an exec server."""

    spec: str = ""
    kind: str = ""
    name: str = ""
    version: str = "unknown"
    complete: bool = True
    target: str | None = None
    stub_prefix: str | None = None
    expected_failures: dict[str, str]
    parts: dict[str, bool]
    missing_reasons: dict[str, str]
    #: the declared profiles (SPEC §15.4); ``profiles_declared`` is False when they are the defaults
    profiles: frozenset[str] = frozenset()
    profiles_declared: bool = False
    #: the declared budget (``BUDGET = {"rows": int, "seconds": float}``): scale checks beyond it are not run
    budget: dict[str, float] = {}

    def has(self, part: str) -> bool:
        return bool(self.parts.get(part))

    # the SPEC §15 calls --------------------------------------------------------------------
    def substitute(self, embeddings: np.ndarray, t: float) -> Any:
        raise NotImplementedError

    def online_session(self, t: float) -> Any:
        """A new Algorithm 1 session; its ``admit(embeddings)`` returns the turn's π entries."""
        raise NotImplementedError

    def dedup_lines(self, records: list[str]) -> Any:
        raise NotImplementedError

    def codec_encode(self, x: np.ndarray, eb: float) -> Any:
        raise NotImplementedError

    def codec_decode(self, data: bytes) -> Any:
        raise NotImplementedError

    def kept(self, embeddings: np.ndarray, t: float) -> Any:
        """The kept-set form (SPEC §15.5): kept indices, optionally with a witness map or the pairs found."""
        raise NotImplementedError

    def session_save(self, session: Any, path: str) -> Any:
        """Write ``session`` (from :meth:`online_session`) to ``path`` in save format v1 (SPEC §6.3)."""
        raise NotImplementedError

    def session_load(self, path: str, t: float) -> Any:
        """A session restored from ``path`` (SPEC §6.3); its ``admit`` continues where it stopped."""
        raise NotImplementedError

    def close(self) -> None:
        """Release resources (an exec server process)."""

    def describe(self) -> dict[str, Any]:
        """The facts the run header and the JSON report print."""
        return {
            "spec": self.spec,
            "kind": self.kind,
            "name": self.name,
            "version": self.version,
            "complete": self.complete,
            "parts": {p: bool(self.parts.get(p)) for p in PART_ATTRIBUTES},
            "missing": dict(self.missing_reasons),
            "target": self.target,
            "expected_failures": dict(self.expected_failures),
            "profiles": sorted(self.profiles),
            "profiles_declared": self.profiles_declared,
            "budget": dict(self.budget),
        }

    def header_lines(self) -> list[str]:
        d = self.describe()
        provided = [p for p, ok in d["parts"].items() if ok] or ["none"]
        lines = [
            f"lam_ref conformance: implementation {d['spec']} ({d['kind']})",
            f"  name {d['name']}, version {d['version']}, COMPLETE={d['complete']}",
            f"  parts provided: {', '.join(provided)}",
            f"  profiles {'declared' if d['profiles_declared'] else 'by default (no PROFILES)'}: {', '.join(d['profiles'])}",
        ]
        for part, why in d["missing"].items():
            lines.append(f"  part {part} missing: {why}")
        tgt = execution_target(self)
        gpu = tgt.get("gpu") or "none"
        lines.append(f"  execution target: {tgt['where']}; CPU {tgt['cpu']}; GPU {gpu}")
        return lines


def read_budget(value: Any, where: str) -> dict[str, float]:
    """``BUDGET`` as ``{"rows": int, "seconds": float}`` (either key optional); a bad one is a usage error."""
    if value is None:
        return {}
    if not isinstance(value, dict) or not set(value) <= {"rows", "seconds"}:
        raise LamValueError(f"{where}.BUDGET must be a dict with keys 'rows' and/or 'seconds', got {value!r}")
    out: dict[str, float] = {}
    for key, v in value.items():
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v) or v <= 0:
            raise LamValueError(f"{where}.BUDGET[{key!r}] must be a positive number, got {v!r}")
        out[key] = int(v) if key == "rows" else float(v)
    return out
