"""lam_ref's codec with a version-2 body decoder of the mutant's choosing (the codec-v2 mutants).

Everything else is lam_ref's adapter: the header and CRC-32 checks, the capacity rule and version 1.
A mutant subclasses :class:`lam_ref.codec_v2.Decoder` and overrides one rule (one method or constant).
"""

from __future__ import annotations

import zlib
from typing import Any

import numpy as np

from .... import codec_v2 as v2
from ....codec import HEADER_SIZE, read_header
from ... import adapter as _ref

__all__ = ["PROFILES", "decoder_module"]

PROFILES = {"core", "online", "codec-bound", "codec-v1", "codec-v2"}


def decoder_module(decoder: v2.Decoder, namespace: dict[str, Any]) -> None:
    """Fill a mutant module's namespace: lam_ref's adapter, with ``codec_decode`` running ``decoder`` on
    version-2 bodies."""

    def codec_decode(data: Any) -> np.ndarray:
        if isinstance(data, (bytes, bytearray, memoryview)) and len(data) >= HEADER_SIZE and bytes(data)[4] == 2:
            b = bytes(data)
            h = read_header(b)
            body = b[HEADER_SIZE:]
            if zlib.crc32(body, zlib.crc32(b[:24])) != h.crc32:
                raise ValueError("corrupt codec stream: CRC-32 mismatch")
            v2.check_capacity(body, h.n, h.cols, h.strict)
            return decoder.decode(body, h.n, h.cols, h.eb, h.strict)
        return _ref.codec_decode(data)

    namespace.update(substitute=_ref.substitute, OnlineSession=_ref.OnlineSession, codec_encode=_ref.codec_encode,
                     codec_decode=codec_decode, PROFILES=set(PROFILES), COMPLETE=True)
