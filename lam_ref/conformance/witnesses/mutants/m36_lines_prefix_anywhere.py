"""Mutant: a line is taken for a stub when it *contains* the stub prefix (``prefix in line``)
rather than starting with it, so such lines are never deduplicated (SPEC §7.1)."""

from __future__ import annotations

from ._base import Base, export

BUG = "stub lines recognised by 'prefix in line' instead of startswith"
VIOLATES = "L0"


class PrefixAnywhere(Base):
    def protected(self, line: str) -> bool:
        return not line.strip() or self.STUB_PREFIX in line


export(PrefixAnywhere(), globals())
