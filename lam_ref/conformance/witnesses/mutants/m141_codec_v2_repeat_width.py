"""Mutant: a repeat's row index read with bit_length(R) bits instead of bit_length(R - 1): one bit too many
when R is a power of two, so the row marks are misread (SPEC §9.6 row repeats)."""

from __future__ import annotations

from .... import codec_v2 as v2
from ._v2codec import decoder_module

BUG = 'repeat index width bit_length(R) instead of bit_length(R - 1)'
VIOLATES = 'L2'
CLASS = 'off-by-one at block boundary'
IDIOM = 'JS: const w = Math.ceil(Math.log2(R + 1));'
NEEDS = 'codec-v2 streams with R a power of two and row repeats'
CAUGHT_BY: tuple[str, ...] = ('vectors.codec-v2', 'codec.v2_decode_differential')


class RepeatWidth(v2.Decoder):
    def repeat_width(self, distinct):
        return distinct.bit_length() if distinct > 1 else 0


decoder_module(RepeatWidth(), globals())
