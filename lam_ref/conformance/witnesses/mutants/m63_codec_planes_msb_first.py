"""Mutant: bit planes are written most significant plane first, and read back the same way: not format
version 1 (docs/codec.md: plane 0, the least significant, first)."""

from __future__ import annotations

from ._base2 import Base2, export

BUG = 'bit planes in most-significant-first order'
VIOLATES = 'L2'
CLASS = 'byte order'
IDIOM = 'C: for (p = rate - 1; p >= 0; --p) write_plane(p);'
NEEDS = 'codec-v1 byte vectors'
CAUGHT_BY: tuple[str, ...] = ('codec.v1_format', 'validation.codec_v1', 'vectors.codec-v1')


class PlanesMsbFirst(Base2):
    def plane_order(self, r):
        return range(r - 1, -1, -1)


export(PlanesMsbFirst(), globals())
