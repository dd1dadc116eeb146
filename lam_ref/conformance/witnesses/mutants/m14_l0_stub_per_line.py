"""Mutant: L0 emits one stub per dropped line instead of one per maximal run of dropped lines
(SPEC §7), so a repeated 40-line traceback becomes 40 stubs."""

from __future__ import annotations

from ._base import Base, export

BUG = "L0 writes one stub per dropped line, not per run"
VIOLATES = "L0"


class StubPerLine(Base):
    def dedup_record(self, record: str, seen: set[str]) -> str:
        out: list[str] = []
        for line in record.split("\n"):
            if not self.protected(line) and line in seen:
                out.append(self.stub(1))
                continue
            if not self.protected(line):
                seen.add(line)
            out.append(line)
        return "\n".join(out)


export(StubPerLine(), globals())
