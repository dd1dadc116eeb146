"""Mutant: the code limit is tested as |q| > 2³¹ instead of |q| > 2³¹ - 1, in the encoder and the
decoder alike, so a code of exactly ±2³¹ is written and read back (docs/codec.md: |q| <= 2³¹ - 1 is
required)."""

from __future__ import annotations

from ._base2 import Base2, export

BUG = 'code limit off by one (accepts |q| = 2³¹)'
VIOLATES = 'L2'
CLASS = 'integer width'
IDIOM = 'C: if (llabs(q) > (1LL << 31)) error();'
NEEDS = 'codec refusal exactly at |q| = 2^31 (encode, or decode of a crafted stream)'
CAUGHT_BY: tuple[str, ...] = ('codec.large_quotients', 'vectors.codec-v1')


class QmaxOffByOne(Base2):
    QMAX = 2**31


export(QmaxOffByOne(), globals())
