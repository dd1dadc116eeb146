"""Control (must pass): the version-1 encoder with block size 64 instead of 32 (docs/codec.md allows
any multiple of 8 in [8, 4096] in the header), claiming codec-bound only (codec-v1 fixes B = 32 for
the encoder's golden bytes); the decoder reads the block size from the stream."""

from __future__ import annotations

from ..mutants._base2 import Base2, export

CONTROL = True
ALLOWED = 'codec v1 with block size 64'


class Block64(Base2):
    BLOCK = 64
    PROFILES = frozenset({"core", "online", "l0", "codec-bound"})  # v1 streams, not codec-v1's golden bytes (B = 32)


export(Block64(), globals())
