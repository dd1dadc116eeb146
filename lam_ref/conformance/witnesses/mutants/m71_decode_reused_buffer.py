"""Mutant: codec_decode writes into one output buffer and returns a view of it, so decoding another
stream changes the array returned before (issue 21: fresh arrays the caller owns)."""

from __future__ import annotations

import numpy as np

from ._base2 import Base2, export

BUG = 'codec_decode returns a view of a reused buffer'
VIOLATES = 'L2'
CLASS = 'aliasing'
IDIOM = 'numcodecs style decode(buf, out=self._out) with a cached out'
NEEDS = 'aliasing across codec_decode calls'
CAUGHT_BY: tuple[str, ...] = ('codec.input_forms',)


class DecodeReuse(Base2):
    def __init__(self):
        self._buf = np.zeros(0, dtype=np.float32)

    def emit_decoded(self, x):
        if self._buf.size < x.size:
            self._buf = np.zeros(max(x.size, 2 * self._buf.size), dtype=np.float32)
        self._buf[: x.size] = x
        return self._buf[: x.size]


export(DecodeReuse(), globals())
