"""Mutant: the header's integers and eb are written and read big-endian (network order) in both
directions: round trips work, but the bytes are not format version 1 (docs/codec.md: all integers
little-endian)."""

from __future__ import annotations

import struct

from ._base2 import Base2, export

BUG = 'codec header fields big-endian'
VIOLATES = 'L2'
CLASS = 'byte order'
IDIOM = 'C: htonl/htobe64 on the header fields'
NEEDS = 'codec-v1 byte vectors (decode reference bytes / compare encoded bytes)'
CAUGHT_BY: tuple[str, ...] = ('codec.v1_format', 'validation.codec_v1', 'vectors.codec-v1')


class HeaderBE(Base2):
    def header(self, n, eb, bs):
        return struct.pack(">4sBBHQd", b"LSZP", 1, 0, bs, n, eb)

    def read_header(self, data):
        magic, ver, flags, bs, n, eb = struct.unpack_from(">4sBBHQd", data, 0)
        (crc,) = struct.unpack_from("<I", data, 24)
        return magic, ver, flags, bs, n, eb, crc


export(HeaderBE(), globals())
