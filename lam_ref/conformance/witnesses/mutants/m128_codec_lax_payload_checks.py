"""Mutant: the decoder accepts payloads the encoder could not have written: a sign bit on a zero delta,
non-zero padding, a rate larger than the block needs (docs/codec.md's refusal list)."""

from __future__ import annotations

from ._base2 import Base2, export

BUG = 'decoder skips the canonical-payload checks'
VIOLATES = 'L2'
CLASS = 'early exit'
IDIOM = 'C: decode whatever bits are there'
NEEDS = 'crafted non-canonical codec payloads (sign on zero, padding, oversized rate)'
CAUGHT_BY: tuple[str, ...] = ('validation.codec_v1', 'vectors.codec-v1')


class LaxPayload(Base2):
    def check_block(self, k, r, signs, mag):
        pass

    def check_padding(self, d, n):
        pass


export(LaxPayload(), globals())
