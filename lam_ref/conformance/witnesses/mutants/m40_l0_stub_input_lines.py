"""Mutant: the L0 stub's line field counts *input* lines of the record, not lines of its output
after earlier drops (SPEC §8.1: L is the position in the residual)."""

from __future__ import annotations

from ._base import export
from ._l0v1 import PROFILES as _PROFILES
from ._l0v1 import StubsV1

BUG = "L0 stub line numbers count input lines, not residual lines"
VIOLATES = "L0"
PROFILES = _PROFILES


class InputLines(StubsV1):
    def line_ref(self, record: int, out_index: int, in_index: int) -> tuple[int, int]:
        return record, in_index


export(InputLines(), globals())
