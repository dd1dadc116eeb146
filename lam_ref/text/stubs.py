"""Reference stubs: fixed one-line templates, parseable back (SPEC §8; paper §2.3, Algorithm 1 line 10).

Every stub line starts with :data:`STUB_PREFIX` (``"[LAM:"``), so L0 never deduplicates or
registers it (SPEC §7) and a reader can tell stubs from content:

* L1 (one per dropped chunk): ``[LAM:L1 {chunk}={rep} d={distance:.4f}]`` — the dropped chunk's
  id, its representative's id (a retained chunk with a smaller id, SPEC §1) and their l2
  distance (at most δ, ``THM1``), printed with 4 decimals; e.g. ``[LAM:L1 17=3 d=0.2103]``;
* L0 (one per maximal run of dropped repeated lines): ``[LAM:L0 {count} lines=r{record}:{line}]``
  — how many consecutive lines were dropped, and where the first copy of the run's first line
  is (record index in the trajectory, line index in that record's residual; both 0-based);
  e.g. ``[LAM:L0 3 lines=r17:4]``.

The templates are short on purpose: a stub costs 11–15 cl100k tokens, which is what net removal
charges for it (§2.3).

:func:`parse_stub` inverts :func:`render` exactly (``render(parse_stub(s)) == s`` for every stub
line ``s``; the distance comes back rounded to 4 decimals).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ..geometry import LamValueError, validate_int

__all__ = ["L0Stub", "L1Stub", "STUB_PREFIX", "Stub", "is_stub_line", "parse_stub", "render", "try_parse_stub"]

#: Every stub line starts with this prefix (also the conformance adapter's ``STUB_PREFIX``, SPEC §15).
STUB_PREFIX = "[LAM:"

_INT = r"(0|[1-9][0-9]*)"
_L1 = re.compile(rf"\[LAM:L1 {_INT}={_INT} d=([0-9]\.[0-9]{{4}})\]")
_L0 = re.compile(rf"\[LAM:L0 {_INT} lines=r{_INT}:{_INT}\]")


@dataclass(frozen=True)
class L1Stub:
    """A dropped chunk ``chunk`` and its representative ``rep < chunk`` at distance ``distance``."""

    chunk: int
    rep: int
    distance: float

    def __post_init__(self) -> None:
        validate_int(self.chunk, "chunk")
        validate_int(self.rep, "rep")
        if self.rep >= self.chunk:
            raise LamValueError(f"rep must be a smaller id than chunk, got rep={self.rep}, chunk={self.chunk}")
        d = float(self.distance)
        if not 0.0 <= d <= 2.0:
            raise LamValueError(f"distance must be in [0, 2] (unit vectors), got {self.distance!r}")

    def render(self) -> str:
        return f"{STUB_PREFIX}L1 {self.chunk}={self.rep} d={float(self.distance):.4f}]"


@dataclass(frozen=True)
class L0Stub:
    """``count`` consecutive repeated lines; the first copy of the first one is at ``(record, line)``."""

    count: int
    record: int
    line: int

    def __post_init__(self) -> None:
        if validate_int(self.count, "count") < 1:
            raise LamValueError(f"count must be >= 1, got {self.count}")
        validate_int(self.record, "record")
        validate_int(self.line, "line")

    def render(self) -> str:
        return f"{STUB_PREFIX}L0 {self.count} lines=r{self.record}:{self.line}]"


Stub = L1Stub | L0Stub


def render(stub: Stub) -> str:
    """The stub's one-line text (no newline)."""
    return stub.render()


def is_stub_line(line: str) -> bool:
    """Whether ``line`` is treated as a stub by L0 (starts with :data:`STUB_PREFIX`)."""
    return line.startswith(STUB_PREFIX)


def try_parse_stub(line: str) -> Stub | None:
    """The stub a line encodes, or ``None`` if it is not exactly a stub line."""
    try:
        m = _L1.fullmatch(line)
        if m:
            return L1Stub(int(m.group(1)), int(m.group(2)), float(m.group(3)))
        m = _L0.fullmatch(line)
        if m:
            return L0Stub(int(m.group(1)), int(m.group(2)), int(m.group(3)))
    except LamValueError:  # well-formed text, impossible values (rep >= chunk, d > 2, count 0)
        return None
    return None


def parse_stub(line: str) -> Stub:
    """Parse a stub line back into :class:`L1Stub` / :class:`L0Stub`; raises if it is not one."""
    if not isinstance(line, str):
        raise LamValueError(f"line must be str, got {type(line).__name__}")
    stub = try_parse_stub(line)
    if stub is None:
        raise LamValueError(f"line is not a LAM stub: {line[:80]!r}")
    return stub
