"""Mutant: L0 deduplicates blank and whitespace-only lines like any other line (SPEC §7: they are
never deduplicated or registered), collapsing a file's paragraph structure."""

from __future__ import annotations

from ._base import Base, export

BUG = "L0 deduplicates blank / whitespace-only lines"
VIOLATES = "L0"


class DedupsBlank(Base):
    def protected(self, line: str) -> bool:
        return line.startswith(self.STUB_PREFIX)


export(DedupsBlank(), globals())
