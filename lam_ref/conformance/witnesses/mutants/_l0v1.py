"""A correct L0 with lam_ref's byte-exact stubs (profile ``l0-stubs``, SPEC §8.1) for the stub
mutants: ``[LAM:L0 n lines=rR:L]`` with R the 0-based record and L the 0-based output line of
the run's first line's first copy. :meth:`StubsV1.line_ref` is the one hook a mutant overrides."""

from __future__ import annotations

from ._base import Base


class StubsV1(Base):
    STUB_PREFIX = "[LAM:"

    def line_ref(self, record: int, out_index: int, in_index: int) -> tuple[int, int]:
        """Where a kept line stands: its record and its index in that record's output."""
        return record, out_index

    def dedup_lines(self, records: list[str]) -> list[str]:
        seen: dict[str, tuple[int, int]] = {}
        result = []
        for r, text in enumerate(records):
            out: list[str] = []
            run, first = 0, (0, 0)
            for k, line in enumerate(text.split("\n")):
                if not self.protected(line) and line in seen:
                    if not run:
                        first = seen[line]
                    run += 1
                    continue
                if run:
                    out.append(f"[LAM:L0 {run} lines=r{first[0]}:{first[1]}]")
                    run = 0
                if not self.protected(line):
                    seen[line] = self.line_ref(r, len(out), k)
                out.append(line)
            if run:
                out.append(f"[LAM:L0 {run} lines=r{first[0]}:{first[1]}]")
            result.append("\n".join(out))
        return result


PROFILES = {"core", "online", "l0", "l0-stubs", "codec-bound"}
