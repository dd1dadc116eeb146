"""Mutant: the strict decoder accepts an exception whose value lies within eb of (or equals) its plain
reconstruction; it checks only that the value is finite and of the stream's code (docs/codec.md: the
encoder writes an exception only beyond eb, so the decoder refuses the others)."""

from __future__ import annotations

import numpy as np

from .... import codec_v2 as v2
from ._v2codec import decoder_module

BUG = 'strict exceptions within eb of their reconstruction accepted'
VIOLATES = 'L2'
CLASS = 'special-cased threshold'
IDIOM = 'C: if (!isfinite(v)) return ERR;  out[idx] = v;'
NEEDS = 'strict codec-v2 streams with an exception value moved to within eb'
CAUGHT_BY: tuple[str, ...] = ('vectors.codec-v2', 'codec.v2_decode_differential')


class ExceptionEqual(v2.Decoder):
    def exception_ok(self, v, q, rec, eb):
        if not np.isfinite(v):
            return False
        y = float(v) / (2.0 * eb)
        if not np.isfinite(y):
            return False
        f = np.floor(y)
        return int(f + (y - f >= 0.5)) == q


decoder_module(ExceptionEqual(), globals())
