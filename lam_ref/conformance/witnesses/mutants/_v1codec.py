"""lam_ref's v1 codec (docs/codec.md) for the codec-v1 mutants, and the v1 stream length."""

from __future__ import annotations

import struct

from ....codec import codec_decode, codec_encode

__all__ = ["PROFILES", "codec_decode", "codec_encode", "stream_length"]

PROFILES = {"core", "online", "l0", "codec-bound", "codec-v1"}
HEAD = struct.Struct("<4sBBHQd")


def stream_length(data: bytes) -> int:
    """The length a v1 stream's header and rate bytes imply (docs/codec.md)."""
    _, _, _, block, n, _ = HEAD.unpack(data[:24])
    blocks = -(-n // block) if block else 0
    rates = data[28 : 28 + blocks]
    return 28 + blocks + (block // 8) * sum(1 + r for r in rates if r)
