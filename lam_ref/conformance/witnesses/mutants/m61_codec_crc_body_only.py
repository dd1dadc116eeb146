"""Mutant: the CRC-32 covers the body only, not header bytes [0, 24), so a corrupted eb in the header
decodes silently to wrong values (docs/codec.md: CRC of the header followed by the body)."""

from __future__ import annotations

import zlib

from ._base2 import Base2, export

BUG = 'CRC-32 does not cover the header'
VIOLATES = 'L2'
CLASS = 'byte order'
IDIOM = 'C: crc32(0, body, body_len) written after the header is built'
NEEDS = 'header bit flips (eb field) must be refused'
CAUGHT_BY: tuple[str, ...] = ('codec.v1_format', 'validation.codec_v1', 'vectors.codec-v1')


class CrcBodyOnly(Base2):
    def crc(self, head, body):
        return zlib.crc32(body) & 0xFFFFFFFF


export(CrcBodyOnly(), globals())
