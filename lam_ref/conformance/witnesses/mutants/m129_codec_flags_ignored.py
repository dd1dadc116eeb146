"""Mutant: the decoder never looks at the flags byte (reserved, must be 0), so a stream with flags set
is accepted (docs/codec.md: any other value is refused)."""

from __future__ import annotations

from ._base2 import Base2, export

BUG = 'reserved flags byte not checked'
VIOLATES = 'L2'
CLASS = 'early exit'
IDIOM = 'C: /* flags reserved */ p += 1;'
NEEDS = 'codec streams with the flags byte set'
CAUGHT_BY: tuple[str, ...] = ('validation.codec_v1', 'vectors.codec-v1')


class FlagsIgnored(Base2):
    def read_header(self, data):
        magic, ver, flags, bs, n, eb, crc = super().read_header(data)
        return magic, ver, 0, bs, n, eb, crc


export(FlagsIgnored(), globals())
