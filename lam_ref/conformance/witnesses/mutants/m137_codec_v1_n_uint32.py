"""Mutant: the decoder reads the header's n (uint64) into 32 bits: a stream whose n has bit 32 set is read
as its low word and decoded, where docs/codec.md refuses it (the rate bytes and payload do not match n)."""

from __future__ import annotations

from ._base2 import Base2, export

BUG = "header n read as uint32"
VIOLATES = 'L2'
CLASS = 'integer width'
IDIOM = 'JS: const n = view.getUint32(8, true);  // the high word never read'
NEEDS = 'a stream whose header n has a bit above 31 set'
CAUGHT_BY: tuple[str, ...] = ('vectors.codec-v1', 'codec.v1_decode_differential')


class NUint32(Base2):
    def read_header(self, data):
        magic, ver, flags, bs, n, eb, crc = super().read_header(data)
        return magic, ver, flags, bs, n & 0xFFFFFFFF, eb, crc


export(NUint32(), globals())
