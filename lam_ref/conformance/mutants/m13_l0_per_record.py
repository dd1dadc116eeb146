"""Mutant: L0 registers a record's lines only after the whole record is processed, so a line that
repeats *inside* one record is never dropped (SPEC §7: the seen-set grows line by line)."""

from __future__ import annotations

from ._base import Base, export

BUG = "L0 registers lines per record, missing repeats inside a record"
VIOLATES = "L0"


class PerRecord(Base):
    def dedup_record(self, record: str, seen: set[str]) -> str:
        out: list[str] = []
        new: set[str] = set()
        run = 0
        for line in record.split("\n"):
            if not self.protected(line) and line in seen:  # only lines of earlier records count
                run += 1
                continue
            if run:
                out.append(self.stub(run))
                run = 0
            if not self.protected(line):
                new.add(line)
            out.append(line)
        if run:
            out.append(self.stub(run))
        seen |= new
        return "\n".join(out)


export(PerRecord(), globals())
