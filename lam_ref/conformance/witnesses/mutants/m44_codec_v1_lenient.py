"""Mutant: the v1 decoder neither verifies the CRC-32 nor refuses trailing bytes (it reads what it
needs and stops), so corrupted or padded streams decode (docs/codec.md's refusal list)."""

from __future__ import annotations

import struct
import zlib

import numpy as np

from ._base import Base, export
from ._v1codec import PROFILES as _PROFILES
from ._v1codec import codec_decode as _decode
from ._v1codec import codec_encode as _encode
from ._v1codec import stream_length

BUG = "v1 decoder skips the CRC check and ignores trailing bytes"
VIOLATES = "VALID"
PROFILES = _PROFILES


class Lenient(Base):
    def codec_encode(self, x: np.ndarray, eb: float) -> bytes:
        return _encode(x, eb)

    def codec_decode(self, data: bytes) -> np.ndarray:
        data = bytes(data)
        if len(data) >= 28:
            data = data[: max(28, stream_length(data))]
            data = data[:24] + struct.pack("<I", zlib.crc32(data[:24] + data[28:])) + data[28:]
        return _decode(data)


export(Lenient(), globals())
