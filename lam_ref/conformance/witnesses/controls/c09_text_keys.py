"""Control (must pass): L0's seen-set holds the line texts themselves instead of their XXH3-64 hashes:
identical decisions except on a 64-bit hash collision, which no test can construct (SPEC §7.1)."""

from __future__ import annotations

from ..mutants._base2 import Base2, export

CONTROL = True
ALLOWED = 'seen-set of texts instead of hashes'


class TextKeys(Base2):
    def line_key(self, line):
        return line


export(TextKeys(), globals())
