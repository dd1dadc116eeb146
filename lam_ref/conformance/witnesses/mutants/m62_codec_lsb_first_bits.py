"""Mutant: bits are packed least significant first inside each byte (numpy's bitorder='little', the x86
habit), in the encoder and the decoder alike: not format version 1 (docs/codec.md: value j at bit 7
- j % 8)."""

from __future__ import annotations

import numpy as np

from ._base2 import Base2, export

BUG = 'bitmaps packed LSB-first'
VIOLATES = 'L2'
CLASS = 'byte order'
IDIOM = 'C: byte |= bit << (j & 7)'
NEEDS = 'codec-v1 byte vectors'
CAUGHT_BY: tuple[str, ...] = ('codec.v1_format', 'vectors.codec-v1')


class LsbFirst(Base2):
    def pack(self, bits):
        return np.packbits(bits.astype(np.uint8), bitorder="little").tobytes()

    def unpack(self, data, count):
        return np.unpackbits(np.frombuffer(data, dtype=np.uint8), bitorder="little")[:count].astype(np.int64)


export(LsbFirst(), globals())
