"""The base of every implementation the checks run against: :class:`Implementation` (SPEC §15).

Kept apart from :mod:`lam_ref.conformance.impl` (which loads Python modules and ``exec:``
servers) so that :mod:`lam_ref.conformance.exec_client` can subclass it without an import cycle.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .report import execution_target

__all__ = ["DEFAULT_IMPL", "PART_ATTRIBUTES", "Implementation"]

#: The implementation checked when neither ``--lam-impl`` nor ``LAM_IMPL`` names one.
DEFAULT_IMPL = "lam_ref.conformance.adapter"
#: SPEC §15 parts and the module attributes each needs.
PART_ATTRIBUTES: dict[str, tuple[str, ...]] = {
    "substitute": ("substitute",),
    "online": ("OnlineSession",),
    "lines": ("dedup_lines", "STUB_PREFIX"),
    "codec": ("codec_encode", "codec_decode"),
}


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
        }

    def header_lines(self) -> list[str]:
        d = self.describe()
        provided = [p for p, ok in d["parts"].items() if ok] or ["none"]
        lines = [
            f"lam_ref conformance: implementation {d['spec']} ({d['kind']})",
            f"  name {d['name']}, version {d['version']}, COMPLETE={d['complete']}",
            f"  parts provided: {', '.join(provided)}",
        ]
        for part, why in d["missing"].items():
            lines.append(f"  part {part} missing: {why}")
        tgt = execution_target(self)
        gpu = tgt.get("gpu") or "none"
        lines.append(f"  execution target: {tgt['where']}; CPU {tgt['cpu']}; GPU {gpu}")
        return lines


