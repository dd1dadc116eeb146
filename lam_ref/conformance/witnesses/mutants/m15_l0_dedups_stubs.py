"""Mutant: L0 treats stub lines — the placeholders L1 left for its dropped chunks — as content:
it registers them and drops repeats (SPEC §7: stub lines are never deduplicated or registered;
lines of L1-dropped chunks must not feed L0's seen-set)."""

from __future__ import annotations

from ._base import Base, export

BUG = "L0 registers and drops the stub lines that stand for L1-dropped chunks"
VIOLATES = "L0"


class DedupsStubs(Base):
    def protected(self, line: str) -> bool:
        return not line.strip()


export(DedupsStubs(), globals())
