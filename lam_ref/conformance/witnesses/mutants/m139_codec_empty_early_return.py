"""Mutant: a stream announcing n = 0 is returned as an empty array right after the magic, without checking
version, flags, block size, eb, CRC or trailing bytes (docs/codec.md refuses each on any stream)."""

from __future__ import annotations

import numpy as np

from ._base2 import Base2, export

BUG = 'n = 0 returns early, before the rest of the stream is checked'
VIOLATES = 'L2'
CLASS = 'early exit'
IDIOM = 'JS: if (n === 0) return new Float32Array(0);  // right after the magic check'
NEEDS = 'n = 0 streams with one other defect'
CAUGHT_BY: tuple[str, ...] = ('vectors.codec-v1', 'codec.v1_decode_differential')


class EmptyEarly(Base2):
    def codec_decode(self, data):
        if isinstance(data, (bytes, bytearray, memoryview)) and len(data) >= 28 and bytes(data)[:4] == b"LSZP":
            if int.from_bytes(bytes(data)[8:16], "little") == 0:
                return np.zeros(0, dtype=np.float32)
        return super().codec_decode(data)


export(EmptyEarly(), globals())
