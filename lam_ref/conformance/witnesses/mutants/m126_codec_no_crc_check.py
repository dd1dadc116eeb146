"""Mutant: the decoder never compares the stored CRC-32, so a flipped payload bit decodes silently to
wrong values (docs/codec.md: a CRC mismatch is refused)."""

from __future__ import annotations

from ._base2 import Base2, export

BUG = 'CRC never verified'
VIOLATES = 'L2'
CLASS = 'early exit'
IDIOM = 'C: /* TODO: verify crc */'
NEEDS = 'codec payload bit flips'
CAUGHT_BY: tuple[str, ...] = ('validation.codec_v1', 'vectors.codec-v1')


class NoCrc(Base2):
    def read_header(self, data):
        magic, ver, flags, bs, n, eb, _ = super().read_header(data)
        return magic, ver, flags, bs, n, eb, self.crc(data[:24], data[28:])


export(NoCrc(), globals())
