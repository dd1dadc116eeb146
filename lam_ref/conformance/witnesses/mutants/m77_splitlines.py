"""Mutant: records are split with str.splitlines(), which also breaks on '\\r', '\\v', '\\f',
U+001C-U+001E, U+0085, U+2028 and U+2029 and drops a final empty line (SPEC §7.1: split on '\\n')."""

from __future__ import annotations

from ._base2 import Base2, export

BUG = "str.splitlines() instead of split('\\\\n')"
VIOLATES = 'L0'
CLASS = 'text encoding'
IDIOM = 'Python: text.splitlines()'
NEEDS = 'L0 on lone CR, form feed, U+2028 and a trailing newline'
CAUGHT_BY: tuple[str, ...] = ('lines.semantics', 'lines.text_edges', 'vectors.l0')


class Splitlines(Base2):
    def split_lines(self, record):
        return record.splitlines()


export(Splitlines(), globals())
