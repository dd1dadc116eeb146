"""Mutant: a version-2 decoder that does not know flags bit 0 (strict, SPEC §9.6): it decodes every
version-2 stream as a plain one, so a strict stream's exception list is read as codes (refused, or
wrong values); everything else is lam_ref's adapter."""

from __future__ import annotations

import struct
import zlib
from typing import Any

from ... import adapter as _ref

BUG = "the version-2 decoder ignores flags bit 0 (strict) and reads the exception list as codes"
VIOLATES = "L2"
CLASS = "early exit"
IDIOM = "C: /* flags: reserved */ if (hdr.version == 2) return decode_plain(body);"
NEEDS = "codec-v2 decode vectors of strict streams"
CAUGHT_BY: tuple[str, ...] = ("vectors.codec-v2",)
PROFILES = {"core", "online", "codec-bound", "codec-v1", "codec-v2"}
NAME = "mutant m132 (codec v2 strict flag ignored)"
COMPLETE = True
substitute = _ref.substitute
OnlineSession = _ref.OnlineSession
codec_encode = _ref.codec_encode


def codec_decode(data: Any) -> Any:
    b = bytes(data)
    if len(b) >= 28 and b[:5] == b"LSZP\x02" and b[5] & 1:
        head = b[:5] + bytes([b[5] & ~1]) + b[6:24]
        b = head + struct.pack("<I", zlib.crc32(b[28:], zlib.crc32(head))) + b[28:]
    return _ref.codec_decode(b)
