"""Mutant: rate bytes read as signed int8: 128..255 are negative, pass the "rate > 32" test and count as
empty blocks, so a stream with rate byte 255 and no payload decodes to zeros (docs/codec.md refuses any
rate above 32)."""

from __future__ import annotations

from ._base2 import Base2, export

BUG = 'rate bytes read as signed int8 (negative rates taken as empty blocks)'
VIOLATES = 'L2'
CLASS = 'integer width'
IDIOM = 'C: int8_t r = (int8_t)body[k]; if (r > 32) return ERR; if (r <= 0) continue;'
NEEDS = 'a stream with a rate byte >= 128'
CAUGHT_BY: tuple[str, ...] = ('vectors.codec-v1', 'codec.v1_decode_differential')


class RateInt8(Base2):
    def read_rates(self, raw):
        return [0 if r >= 128 else r for r in raw]  # r as int8 is negative: "if (r <= 0) continue"


export(RateInt8(), globals())
