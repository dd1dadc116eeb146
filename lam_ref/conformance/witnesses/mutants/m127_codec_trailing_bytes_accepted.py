"""Mutant: the decoder reads what the rates need and ignores anything after it, so a stream with
trailing bytes is accepted (docs/codec.md: trailing bytes are refused)."""

from __future__ import annotations

from ._base2 import Base2, export

BUG = 'trailing bytes ignored'
VIOLATES = 'L2'
CLASS = 'early exit'
IDIOM = 'C: parse until the last block, never compare the cursor with the buffer end'
NEEDS = 'codec streams with trailing bytes'
CAUGHT_BY: tuple[str, ...] = ('validation.codec_v1',)


class Trailing(Base2):
    REFUSE_TRAILING = False


export(Trailing(), globals())
