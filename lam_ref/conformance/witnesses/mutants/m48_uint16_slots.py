"""Mutant: the grid index stores buffer slots as uint16, so past 65,536 retained rows a slot wraps
around and an arrival is compared with the wrong row (SPEC §5.1)."""

from __future__ import annotations

import numpy as np

from ._base2 import Base2, export

BUG = 'retained-row slots stored as uint16 in the index (wrap past 65,536)'
VIOLATES = 'DEF1'
CLASS = 'integer width'
IDIOM = 'Rust: Vec<u16> of slot numbers, `as u16` casts'
NEEDS = 'retained sets past 65,536 rows'
CAUGHT_BY: tuple[str, ...] = ()


class Uint16Slots(Base2):
    def scan(self, s, x):
        return s.neighbours(x).astype(np.uint16).astype(np.int64)


export(Uint16Slots(), globals())
