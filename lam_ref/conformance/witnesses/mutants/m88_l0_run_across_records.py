"""Mutant: the run counter is not reset at the end of a record: a trailing run is carried over and its
stub is emitted at the top of the next record (SPEC §7.2: runs of one record)."""

from __future__ import annotations

from ._base2 import Base2, export

BUG = 'L0 run carried across records'
VIOLATES = 'L0'
CLASS = 'off-by-one at record boundary'
IDIOM = 'C: static int run; flushed at the next kept line, whatever record it is in'
NEEDS = 'L0 runs at a record boundary'
CAUGHT_BY: tuple[str, ...] = ('lines.semantics', 'lines.text_edges', 'lines.large')


class RunAcross(Base2):
    def dedup_lines(self, records):
        seen, run, out = self.new_seen(), 0, []
        for record in records:
            res = []
            for line in self.split_lines(record):
                if not self.protected(line):
                    key = self.line_key(line)
                    if key in seen:
                        run += 1
                        continue
                    seen.add(key)
                if run:
                    res.append(self.stub(run))
                    run = 0
                res.append(line)
            out.append(self.join_lines(res))
        if run and out:
            out[-1] = self.join_lines([out[-1], self.stub(run)])
        return out


export(RunAcross(), globals())
