"""Mutant: ``codec_encode`` takes ``max|x|`` for its header before checking the length, so the
empty vector raises ("zero-size array to reduction operation"; SPEC §9.4: n = 0 is valid)."""

from __future__ import annotations

from typing import Any

import numpy as np

from ._base import Base, export

BUG = "codec_encode of the empty vector raises"
VIOLATES = "L2"


class EmptyCodec(Base):
    def codec_encode(self, x: Any, eb: float) -> bytes:
        top = float(np.max(np.abs(np.asarray(x))))  # for the header's range field
        assert top >= 0.0
        return super().codec_encode(x, eb)


export(EmptyCodec(), globals())
