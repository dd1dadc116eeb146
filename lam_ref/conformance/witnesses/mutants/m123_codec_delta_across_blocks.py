"""Mutant: the first value of a block is coded against the last value of the previous block instead of
against 0 (one running delta over the vector), in the encoder and the decoder alike: round trips
work, the bytes are not format version 1 (docs/codec.md: the block's first value against 0)."""

from __future__ import annotations

import numpy as np

from ._base2 import Base2, export

BUG = 'delta runs across block boundaries'
VIOLATES = 'L2'
CLASS = 'off-by-one at block boundary'
IDIOM = 'C: prev kept across the block loop instead of reset to 0'
NEEDS = 'codec-v1 byte vectors with several blocks'
CAUGHT_BY: tuple[str, ...] = ('codec.v1_format', 'vectors.codec-v1')


class DeltaAcross(Base2):
    def deltas(self, q, n, bs):
        nb = self.n_blocks(n, bs)
        full = np.zeros(nb * bs, dtype=np.int64)
        full[:n] = np.diff(q, prepend=0)
        return full.reshape(nb, bs)

    def prefix(self, d):
        return np.cumsum(d.reshape(-1)).reshape(d.shape)


export(DeltaAcross(), globals())
