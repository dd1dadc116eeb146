"""Mutant: the decoder ignores the header's block size and always uses 32, so a valid stream with
another block size (8, 64, ...) from another encoder is misread or refused (docs/codec.md: B is a
header field, any multiple of 8 in [8, 4096])."""

from __future__ import annotations

from ._base2 import Base2, export

BUG = 'decoder hardcodes block size 32'
VIOLATES = 'L2'
CLASS = 'special-cased threshold'
IDIOM = 'C: #define B 32 used by the decoder too'
NEEDS = 'codec streams with block size other than 32'
CAUGHT_BY: tuple[str, ...] = ('codec.v1_format', 'validation.codec_v1', 'vectors.codec-v1')


class AssumesB32(Base2):
    def read_header(self, data):
        magic, ver, flags, bs, n, eb, crc = super().read_header(data)
        return magic, ver, flags, 32, n, eb, crc


export(AssumesB32(), globals())
