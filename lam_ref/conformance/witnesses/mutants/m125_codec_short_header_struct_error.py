"""Mutant: the decoder tests `len(data) < 24` before unpacking the 28-byte header, so a stream of 24 to
27 bytes raises struct.error instead of a ValueError (SPEC §2.3 / docs/codec.md: a short header is
refused with a clear error)."""

from __future__ import annotations

from ....geometry import LamValueError
from ._base2 import Base2, export

BUG = 'short-header test off by 4 (struct.error leaks)'
VIOLATES = 'VALID'
CLASS = 'off-by-one at block boundary'
IDIOM = "Python: if len(b) < 24: raise ...; struct.unpack_from('<I', b, 24)"
NEEDS = 'codec streams cut to 24..27 bytes'
CAUGHT_BY: tuple[str, ...] = ('vectors.codec-v1',)


class ShortHeader(Base2):
    def codec_decode(self, data):
        data = bytes(data)
        if len(data) < 24:
            raise LamValueError(f"data has {len(data)} bytes, too short")
        self.read_header(data)  # struct.error for 24..27 bytes
        return super().codec_decode(data)


export(ShortHeader(), globals())
