"""Mutant: the v1 decoder assumes the default block size 32 instead of reading it from the header
(``#define B 32``), so streams written with B = 8, 64 or 4,096 decode wrongly or not at all
(docs/codec.md: B is a header field)."""

from __future__ import annotations

import struct
import zlib

import numpy as np

from ._base import Base, export
from ._v1codec import PROFILES as _PROFILES
from ._v1codec import codec_decode as _decode
from ._v1codec import codec_encode as _encode

BUG = "v1 decoder hardcodes block size 32"
VIOLATES = "L2"
PROFILES = _PROFILES


class FixedBlock(Base):
    def codec_encode(self, x: np.ndarray, eb: float) -> bytes:
        return _encode(x, eb)

    def codec_decode(self, data: bytes) -> np.ndarray:
        data = bytes(data)
        if len(data) >= 28:
            head = data[:6] + struct.pack("<H", 32) + data[8:24]
            data = head + struct.pack("<I", zlib.crc32(head + data[28:])) + data[28:]
        return _decode(data)


export(FixedBlock(), globals())
