"""Mutant: the pending run is flushed only when a kept line follows, so a run of repeats at the very
end of a record disappears without its stub (SPEC §7.2: every maximal run becomes one stub)."""

from __future__ import annotations

from ._base2 import Base2, export

BUG = 'trailing run of a record lost (no final flush)'
VIOLATES = 'L0'
CLASS = 'off-by-one at record boundary'
IDIOM = 'C: flush inside the loop only, missing the after-loop flush'
NEEDS = 'L0 runs at the end of a record'
CAUGHT_BY: tuple[str, ...] = ('lines.semantics', 'lines.text_edges', 'lines.large')


class NoFinalFlush(Base2):
    def dedup_record(self, record, seen):
        out, run = [], 0
        for line in self.split_lines(record):
            if not self.protected(line):
                key = self.line_key(line)
                if key in seen:
                    run += 1
                    continue
                seen.add(key)
            if run:
                out.append(self.stub(run))
                run = 0
            out.append(line)
        return self.join_lines(out)


export(NoFinalFlush(), globals())
