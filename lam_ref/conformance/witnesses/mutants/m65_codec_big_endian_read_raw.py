"""Mutant: codec_encode reads x from its raw bytes as native little-endian float32, so a big-endian
('>f4') vector is encoded byte-swapped (SPEC §15: x float32[n])."""

from __future__ import annotations

import numpy as np

from ._base2 import Base2, export

BUG = 'codec input read as raw little-endian bytes'
VIOLATES = 'L2'
CLASS = 'byte order'
IDIOM = 'Rust: bytemuck::cast_slice::<u8, f32>(buf) on network-order data'
NEEDS = 'big-endian float32 codec input'
CAUGHT_BY: tuple[str, ...] = ('codec.byte_order',)


class CodecRawLE(Base2):
    def read_vector(self, x):
        arr = np.asarray(x)
        if arr.ndim == 1 and arr.dtype.kind == "f" and arr.dtype.itemsize == 4 and arr.dtype.byteorder == ">":
            arr = np.frombuffer(np.ascontiguousarray(arr).tobytes(), dtype="<f4")
        return super().read_vector(arr)


export(CodecRawLE(), globals())
