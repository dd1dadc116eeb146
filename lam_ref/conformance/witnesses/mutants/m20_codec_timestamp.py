"""Mutant: the codec stamps each stream with the encoding time (a "creation date" header field),
so equal inputs give different bytes (SPEC §9: deterministic bytes)."""

from __future__ import annotations

import struct
import time

import numpy as np

from ._base import Base, export

BUG = "codec writes a timestamp: non-deterministic bytes"
VIOLATES = "L2"


class Timestamp(Base):
    def codec_encode(self, x, eb: float) -> bytes:  # noqa: ANN001
        return struct.pack("<q", time.time_ns()) + super().codec_encode(x, eb)

    def codec_decode(self, data: bytes) -> np.ndarray:
        data = bytes(data)
        if len(data) < 8:
            return super().codec_decode(b"")
        return super().codec_decode(data[8:])


export(Timestamp(), globals())
