"""Mutant: the number of blocks is n // 32 (floor), in the encoder and the decoder alike, so the values
of a last partial block are never stored and decode as 0 (docs/codec.md: ceil(n / B) blocks, the
last one padded)."""

from __future__ import annotations

from ._base2 import Base2, export

BUG = 'block count floor(n / B): tail values lost'
VIOLATES = 'L2'
CLASS = 'off-by-one at block boundary'
IDIOM = 'C: nblocks = n / B;'
NEEDS = 'codec n not a multiple of 32'
CAUGHT_BY: tuple[str, ...] = ('codec.error_bound', 'codec.input_forms', 'codec.large_quotients')


class FloorBlocks(Base2):
    def n_blocks(self, n, bs):
        return n // bs


export(FloorBlocks(), globals())
