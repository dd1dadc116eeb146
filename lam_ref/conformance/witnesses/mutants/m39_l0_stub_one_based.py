"""Mutant: the L0 stub's line field is 1-based (``lines=r0:1`` for the first line; SPEC §8.1:
both fields are 0-based)."""

from __future__ import annotations

from ._base import export
from ._l0v1 import PROFILES as _PROFILES
from ._l0v1 import StubsV1

BUG = "L0 stub line numbers are 1-based"
VIOLATES = "L0"
PROFILES = _PROFILES


class OneBased(StubsV1):
    def line_ref(self, record: int, out_index: int, in_index: int) -> tuple[int, int]:
        return record, out_index + 1


export(OneBased(), globals())
