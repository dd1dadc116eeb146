"""Mutant: zigzag decoding with 32-bit signed shifts, (z >> 1) ^ -(z & 1) on an int32: zigzag codes at or
above 2^31 (|q| >= 2^30) come out wrong (SPEC §9.6: z goes up to 2^32 - 2)."""

from __future__ import annotations

from .... import codec_v2 as v2
from ._v2codec import decoder_module

BUG = 'zigzag decoded with 32-bit signed arithmetic'
VIOLATES = 'L2'
CLASS = 'integer width'
IDIOM = 'JS: const q = (z >> 1) ^ -(z & 1);  // >> converts z to int32'
NEEDS = 'codec-v2 streams with codes |q| >= 2^30'
CAUGHT_BY: tuple[str, ...] = ('vectors.codec-v2', 'codec.v2_decode_differential')


class ZigzagInt32(v2.Decoder):
    def unzigzag(self, z):
        zs = z - 2**32 if z >= 2**31 else z  # ToInt32
        return (zs >> 1) ^ -(zs & 1)


decoder_module(ZigzagInt32(), globals())
