"""Mutant: a line counts as a stub when it starts with STUB_PREFIX after leading whitespace, so
indented lines that begin with the prefix are protected and never deduplicated (SPEC §7.1: a stub
line starts with the prefix)."""

from __future__ import annotations

from ._base2 import Base2, export

BUG = 'stub test ignores leading whitespace'
VIOLATES = 'L0'
CLASS = 'text encoding'
IDIOM = 'Python: line.lstrip().startswith(PREFIX)'
NEEDS = 'L0 indented lines starting with the stub prefix'
CAUGHT_BY: tuple[str, ...] = ('lines.text_edges', 'vectors.l0')


class PrefixIndent(Base2):
    def is_stub(self, line):
        return line.lstrip().startswith(self.STUB_PREFIX)


export(PrefixIndent(), globals())
