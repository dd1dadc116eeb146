"""Mutant: the version-2 decoder recomputes the code lengths with a limit of 16 instead of 15: under skewed
counts (17 Fibonacci counts, a tree 16 deep) it derives unhalved lengths and refuses the valid stream
(SPEC §9.6: while a length exceeds 15 the counts are halved)."""

from __future__ import annotations

from .... import codec_v2 as v2
from ._v2codec import decoder_module

BUG = 'code-length limit 16 instead of 15 in the canonical check'
VIOLATES = 'L2'
CLASS = 'off-by-one at block boundary'
IDIOM = 'C: #define MAX_BITS 16  /* as in JPEG */'
NEEDS = 'a codec-v2 stream whose unlimited Huffman tree is 16 deep'
CAUGHT_BY: tuple[str, ...] = ('vectors.codec-v2', 'codec.v2_decode_differential')


class Limit16(v2.Decoder):
    lmax = 16


decoder_module(Limit16(), globals())
