"""Mutant: ``codec_decode`` trusts whatever bytes it gets — no length or checksum test — so a cut
stream decodes to a shorter array instead of an error (SPEC §2: never a truncated or partial
result)."""

from __future__ import annotations

import numpy as np

from ._base import Base, export

BUG = "codec_decode returns a partial array for a truncated stream"
VIOLATES = "VALID"


class PartialDecode(Base):
    def codec_decode(self, data: bytes) -> np.ndarray:
        data = bytes(data)
        head = self._HEADER.size
        if len(data) < head:
            return np.zeros(0, dtype=np.float32)
        _, _, eb = self._HEADER.unpack(data[:head])
        body = data[head:]
        body = body[: len(body) - len(body) % 8]
        q = np.frombuffer(body, dtype="<i8")
        return (q.astype(np.float64) * (2.0 * eb)).astype(np.float32)


export(PartialDecode(), globals())
