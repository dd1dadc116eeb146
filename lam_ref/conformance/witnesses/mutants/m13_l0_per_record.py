"""Mutant: L0 registers a record's lines only after the whole record is processed, so a line that
repeats *inside* one record is never dropped (SPEC §7: the seen-set grows line by line)."""

from __future__ import annotations

from ._base import Base, export

BUG = "L0 registers lines per record, missing repeats inside a record"
VIOLATES = "L0"


class _AfterRecord(set):
    """A seen-set whose ``add`` is held back: membership tests see only earlier records' lines."""

    def __init__(self, seen: set[str]) -> None:
        super().__init__(seen)
        self.held: set[str] = set()

    def add(self, line: str) -> None:
        self.held.add(line)


class PerRecord(Base):
    def dedup_record(self, record: str, seen: set[str]) -> str:
        view = _AfterRecord(seen)
        out = super().dedup_record(record, view)  # only lines of earlier records count
        seen |= view.held
        return out


export(PerRecord(), globals())
