"""Mutant: the CRC-32 is stored big-endian (the way zlib's own stream trailer is) and read back the
same way: self-consistent, but not format version 1 (docs/codec.md: little-endian)."""

from __future__ import annotations

import struct

from ._base2 import Base2, export

BUG = 'CRC-32 stored big-endian'
VIOLATES = 'L2'
CLASS = 'byte order'
IDIOM = "Python: crc.to_bytes(4, 'big'), as zlib/PNG trailers"
NEEDS = 'codec-v1 byte vectors'
CAUGHT_BY: tuple[str, ...] = ('codec.v1_format', 'validation.codec_v1', 'vectors.codec-v1')


class CrcBE(Base2):
    def crc_bytes(self, crc):
        return struct.pack(">I", crc)

    def read_header(self, data):
        magic, ver, flags, bs, n, eb, _ = super().read_header(data)
        (crc,) = struct.unpack_from(">I", data, 24)
        return magic, ver, flags, bs, n, eb, crc


export(CrcBE(), globals())
