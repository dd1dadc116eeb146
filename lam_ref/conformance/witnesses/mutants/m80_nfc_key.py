"""Mutant: lines are compared after Unicode NFC normalisation, so a precomposed 'é' and 'e' + combining
acute count as the same line (SPEC §7.1: the UTF-8 bytes, not canonical equivalence)."""

from __future__ import annotations

import unicodedata

from ._base2 import Base2, export

BUG = 'NFC-normalised line comparison'
VIOLATES = 'L0'
CLASS = 'text encoding'
IDIOM = 'Swift: String == compares canonically equivalent strings as equal'
NEEDS = 'L0 on canonically equivalent but different Unicode lines'
CAUGHT_BY: tuple[str, ...] = ('lines.text_edges', 'lines.exact_bytes', 'vectors.l0')


class NfcKey(Base2):
    def line_key(self, line):
        return unicodedata.normalize("NFC", line).encode("utf-8", "surrogatepass")


export(NfcKey(), globals())
