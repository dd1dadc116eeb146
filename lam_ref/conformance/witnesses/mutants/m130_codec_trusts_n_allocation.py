"""Mutant: the decoder allocates the output from the header's n before checking the stream's length, so
a corrupted n (say 2⁴⁰) raises MemoryError or a numpy error, not a ValueError (docs/codec.md: a bad
header is refused with a clear error)."""

from __future__ import annotations

import numpy as np

from ._base2 import Base2, export

BUG = 'output allocated from an unchecked header n'
VIOLATES = 'VALID'
CLASS = 'fixed-size buffer'
IDIOM = 'C: float *out = malloc(n * sizeof(float)); before validating'
NEEDS = 'codec headers with a huge n'
CAUGHT_BY: tuple[str, ...] = ('validation.codec_header',)


class TrustsN(Base2):
    def codec_decode(self, data):
        if isinstance(data, (bytes, bytearray, memoryview)) and len(data) >= 28:
            n = int.from_bytes(bytes(data)[8:16], "little")
            if n > 1 << 28:
                raise MemoryError(f"cannot allocate {n} float32 values")
            np.empty(n, dtype=np.float32)
        return super().codec_decode(data)


export(TrustsN(), globals())
