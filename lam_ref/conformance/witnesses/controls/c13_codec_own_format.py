"""Control (must pass): codec in its own format (codec-bound): int32 codes of the same quantizer,
zlib-compressed, with a length and a CRC; it keeps the bound and refuses cut or corrupted streams
(SPEC §15: only the bound, determinism and validation)."""

from __future__ import annotations

import struct
import zlib

import numpy as np

from ....geometry import LamValueError
from ..mutants._base2 import Base2, export

CONTROL = True
ALLOWED = 'own codec format (zlib of int32 codes)'


class OwnCodec(Base2):
    PROFILES = frozenset({"core", "online", "l0", "codec-bound"})  # its own format: codec-bound, not codec-v1

    def codec_encode(self, x, eb):
        ebv = self.check_eb(eb)
        q = self.quantize(self.read_vector(x), ebv)
        if q.size and not np.isfinite(self.reconstruct(q, ebv)).all():
            raise LamValueError(f"eb = {ebv!r} is too large for x")
        body = zlib.compress(q.astype("<i4").tobytes(), 6)
        head = struct.pack("<4sQd", b"OWNC", q.size, ebv)
        return head + body + struct.pack("<I", zlib.crc32(head + body))

    def codec_decode(self, data):
        if not isinstance(data, (bytes, bytearray, memoryview)):
            raise LamValueError(f"data must be bytes, got {type(data).__name__}")
        data = bytes(data)
        if len(data) < 24 or data[:4] != b"OWNC" or zlib.crc32(data[:-4]) != struct.unpack("<I", data[-4:])[0]:
            raise LamValueError("data is not an intact OWNC stream (short, wrong magic or CRC mismatch)")
        _, n, eb = struct.unpack_from("<4sQd", data, 0)
        try:
            raw = zlib.decompress(data[20:-4])
        except zlib.error as exc:
            raise LamValueError(f"data payload is corrupt: {exc}") from None
        if len(raw) != 4 * n:
            raise LamValueError(f"data holds {len(raw) // 4} codes, header says {n}")
        return self.reconstruct(np.frombuffer(raw, dtype="<i4").astype(np.int64), eb)


export(OwnCodec(), globals())
