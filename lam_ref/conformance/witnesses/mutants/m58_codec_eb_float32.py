"""Mutant: eb travels as a float32 (as cuSZp passes it): the header holds float32(eb) and the decoder
reconstructs with it, so for large codes the error exceeds eb (docs/codec.md: eb is recorded as
float64)."""

from __future__ import annotations

import struct

from ._base2 import Base2, export

BUG = 'eb stored and used as float32 in the stream'
VIOLATES = 'L2'
CLASS = 'integer width'
IDIOM = 'CUDA (cuSZp): float errorBound passed to the kernel'
NEEDS = "codec quotients beyond ~2^23 (eb's float32 rounding), or v1 byte vectors"
CAUGHT_BY: tuple[str, ...] = ('codec.v1_format', 'validation.codec_v1', 'vectors.codec-bound')


class EbFloat32(Base2):
    def header(self, n, eb, bs):
        return struct.pack("<4sBBHQf4x", b"LSZP", 1, 0, bs, n, eb)

    def read_header(self, data):
        magic, ver, flags, bs, n, eb = struct.unpack_from("<4sBBHQf4x", data, 0)
        (crc,) = struct.unpack_from("<I", data, 24)
        return magic, ver, flags, bs, n, float(eb), crc


export(EbFloat32(), globals())
