"""CuPy port of the L2 codec (SPEC §9): byte-identical streams, computed on the GPU.

The block layer of :mod:`lam_ref.codec` (:func:`~lam_ref.codec.quantize`,
:func:`~lam_ref.codec.encode_blocks`, :func:`~lam_ref.codec.decode_blocks`,
:func:`~lam_ref.codec.dequantize`) is written against an array module ``xp``; this port runs
it with ``xp = cupy`` on device arrays, then builds the header and CRC-32 on the host with the
same :func:`~lam_ref.codec.assemble_stream` / :func:`~lam_ref.codec.split_stream`. There is
therefore one implementation of the rule, and the GPU output equals the CPU output byte for byte:

* every operation is an IEEE float64 operation with one rounding (division ``x / (2·eb)``,
  ``floor``, the exact subtraction ``y - floor(y)``, the product ``q · 2eb``) followed by a
  round-to-nearest-even cast to float32; CuPy runs each as its own elementwise kernel, so no
  multiply-add is contracted into an FMA. A port that fuses the reconstruction into one kernel, or
  replaces the division by a multiplication with ``1/(2·eb)``, may move values whose quotient lies
  within one float64 ulp of a tie ``k + 1/2`` (the documented rounding ties, docs/codec.md).

Usage::

    import cupy as cp
    from gpu.codec_cupy import encode, decode
    b = encode(cp.asarray(x32), 1e-3)          # bytes, identical to lam_ref.codec.codec_encode
    y = decode(b)                              # cupy float32 array on the device

``xp`` may be given explicitly (``xp=numpy`` runs the same code on the CPU; the tests use it).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from lam_ref import codec as _codec
from lam_ref.geometry import LamValueError

__all__ = ["decode", "encode", "encode_rel"]


def _xp(xp: Any) -> Any:
    if xp is not None:
        return xp
    import cupy  # noqa: PLC0415 - optional dependency, imported on first use

    return cupy


def _host(a: Any) -> np.ndarray:
    return a.get() if hasattr(a, "get") else np.asarray(a)


def _device_vector(x: Any, xp: Any) -> Any:
    arr = xp.asarray(x)
    if arr.dtype != xp.float32:
        raise LamValueError(f"x must be a float32 array, got dtype {arr.dtype}")
    arr = xp.ascontiguousarray(arr).reshape(-1)
    if arr.size and not bool(xp.isfinite(arr).all()):
        bad = int(xp.flatnonzero(~xp.isfinite(arr))[0])
        raise LamValueError(f"x[{bad}] is {float(arr[bad])!r}: the codec needs finite values")
    return arr


def encode(x: Any, eb: float, *, block_size: int = _codec.BLOCK_SIZE, xp: Any = None) -> bytes:
    """:func:`lam_ref.codec.codec_encode` on the GPU: same arguments, same bytes."""
    xp = _xp(xp)
    arr = _device_vector(x, xp)
    e = _codec.validate_eb(eb)
    block = _codec._validate_block(block_size)
    q = _codec.quantize(arr, e, xp=xp)
    rates, payload = _codec.encode_blocks(q, block, xp)
    return _codec.assemble_stream(int(arr.size), e, block, _host(rates).tobytes(), _host(payload).tobytes())


def encode_rel(x: Any, rel_eb: float = _codec.DEFAULT_REL_EB, *, block_size: int = _codec.BLOCK_SIZE, xp: Any = None) -> bytes:
    """Relative mode on the GPU: ``eb = rel_eb · max|x|`` (float64), as :func:`lam_ref.codec.relative_eb`."""
    xp = _xp(xp)
    arr = _device_vector(x, xp)
    r = _codec.validate_eb(rel_eb, "rel_eb")
    m = float(xp.abs(arr).max()) if arr.size else 0.0
    return encode(arr, r * m if m > 0.0 else r, block_size=block_size, xp=xp)


def decode(b: Any, *, xp: Any = None) -> Any:
    """:func:`lam_ref.codec.codec_decode` on the GPU; returns a device ``float32[n]`` array.

    The stream is validated on the host first (header, lengths, CRC-32), then the canonical-form
    checks run on the device; any failure raises :class:`~lam_ref.geometry.LamValueError` and no
    array is returned.
    """
    xp = _xp(xp)
    h, rates, payload = _codec.split_stream(b)
    q = _codec.decode_blocks(xp.asarray(rates), xp.asarray(payload), h.n, h.block_size, xp)
    out = _codec.dequantize(q, h.eb, xp=xp)
    if out.size and not bool(xp.isfinite(out).all()):
        raise LamValueError("corrupt codec stream: a reconstructed value overflows float32")
    return out
