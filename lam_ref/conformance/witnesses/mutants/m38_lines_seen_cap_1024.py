"""Mutant: the L0 seen-set is a fixed table of 1,024 entries that evicts the oldest, so a line
repeated after 1,024 distinct lines is kept (SPEC §7.2: the seen-set spans the trajectory)."""

from __future__ import annotations

from collections import deque
from typing import Any

from ._base import Base, export

BUG = "L0 seen-set capped at 1,024 lines (oldest evicted)"
VIOLATES = "L0"


class CappedSet(set):
    def __init__(self) -> None:
        super().__init__()
        self.order: deque[Any] = deque()

    def add(self, item: Any) -> None:
        if item not in self:
            self.order.append(item)
            super().add(item)
            if len(self.order) > 1024:
                self.discard(self.order.popleft())


class SeenCap(Base):
    def dedup_lines(self, records: list[str]) -> list[str]:
        seen = CappedSet()
        return [self.dedup_record(r, seen) for r in records]


export(SeenCap(), globals())
