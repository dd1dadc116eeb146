"""L2: an error-bounded codec for stored embeddings, cuSZp's plain 1-D mode in numpy (SPEC §9, paper §2.2, §F.7).

Storage only: the codec compresses the *retained* embeddings (Algorithm 1 line 12) and never
feeds the merge decision, which always uses the fp32 rows (SPEC §9). The substitution bound
(``THM1``) does not cover codec error; the codec has its own bound ``eb``.

The scheme (cuSZp "plain" mode, Huang et al. 2023), for a float32 vector ``x[0..n)`` and an
absolute error bound ``eb > 0``:

1. **Quantize** (float64, exact rule): ``s = 2·eb``, ``y = x / s`` (one IEEE float64 division,
   round to nearest even), ``q = floor(y) + (1 if y - floor(y) >= 0.5 else 0)``: *round half up*
   (toward +∞) on the float64 quotient ``y``. ``|q| <= 2**31 - 1`` is required.
2. **Blocks** of ``B = 32`` values (the last one padded; padding values carry delta 0 and no sign).
3. **Delta** inside a block: ``d_0 = q_0`` (against 0), ``d_j = q_j - q_{j-1}``.
4. **Rate** byte per block ``r = bit_length(max_j |d_j|)`` (0 for an all-zero block).
5. **Payload** of a block with ``r > 0``: a sign bitmap (bit set iff ``d_j < 0``), then ``r``
   bit-planes of ``|d_j|``, least significant plane first; each is ``B/8`` bytes, value ``j`` at
   bit ``7 - j % 8`` of byte ``j // 8`` (most significant bit first), as cuSZp lays them out.
6. **Reconstruct**: ``q`` by a prefix sum of the deltas, ``x' = float32(float64(q) * s)``.

Guarantee (exact, enforced by the tests): ``|x - x'| <= eb + ulp32(x')/2 + 2**-52·(|x| + eb)``,
where ``ulp32(v)`` is ``numpy.spacing(float32(|v|))``; the ``ulp32/2`` term is the float32
rounding of the reconstruction, the last term covers the two float64 roundings (quotient,
product). See :func:`error_slack` and docs/codec.md for the derivation.

Byte format (self-describing; all integers little-endian), version 1:

| offset | size | field |
|---|---|---|
| 0 | 4 | magic ``b"LSZP"`` |
| 4 | 1 | version = 1 |
| 5 | 1 | flags = 0 (reserved) |
| 6 | 2 | block size ``B`` (uint16; multiple of 8, default 32) |
| 8 | 8 | ``n`` (uint64), number of values |
| 16 | 8 | ``eb`` (float64), the absolute error bound used |
| 24 | 4 | CRC-32 (zlib) of bytes ``[0, 24)`` followed by the body |
| 28 | ... | body: ``ceil(n/B)`` rate bytes, then each block's payload in block order |

:func:`codec_decode` needs only the bytes; it rejects truncated, padded, non-canonical or
corrupt input with :class:`~lam_ref.geometry.LamValueError` and never returns a partial array.
The numcodecs codec :class:`CuSZpPlain` (id ``"lam_ref.cuszp_plain"``) is registered on import.

**Version 2** (SPEC §9.6; :mod:`lam_ref.codec_v2`, docs/codec.md "Byte format (version 2)"):
``codec_encode(x, eb, version=2, cols=D, strict=False)`` keeps this quantizer and writes the codes
with canonical Huffman tables per column class (and exact row repeats as references); ``strict``
(flags bit 0) stores every value that float32 rounding would push past ``eb`` verbatim, so that
``|x - x'| <= eb`` holds exactly. Version 1 stays the default and is decoded as before.

**Backends** (SPEC §9.5): ``backend="auto"`` runs the C extension ``lam_ref._codec`` (``_codec.c``,
optional like L0's) when it is built and the arrays are on the CPU, ``"c"`` requires it, ``"numpy"``
runs the code below; all write the same bytes and decode to the same bits.

**GPU** (``pip install -e ".[gpu]"`` in a checkout): the quantizer, the block layer and the reconstruction are
written once against an array module ``xp``; :func:`codec_encode` / :func:`codec_decode` with
``xp=cupy`` (:func:`array_module("cuda") <lam_ref.devices.array_module>`) run them on the device and build only
the 28-byte header and CRC-32 on the host. The stream is byte-identical to the CPU stream: every
step is an IEEE float64 operation with one rounding (``x / (2·eb)``, ``floor``, the exact
``y - floor(y)``, ``q · 2eb``) followed by a round-to-nearest-even cast, and CuPy runs each as its
own elementwise kernel, so nothing is contracted into an FMA. A port that fused the
reconstruction into one kernel, or replaced the division by a multiplication with ``1/(2·eb)``,
could move values whose quotient lies within one float64 ulp of a tie ``k + 1/2`` (the documented
rounding ties, docs/codec.md).
"""

from __future__ import annotations

import math
import struct
import zlib
from dataclasses import dataclass
from typing import Any

import numpy as np

from . import codec_v2 as _v2
from .geometry import LamValueError, validate_int, validate_real

try:  # the compiled twin (lam_ref/_codec.c, optional like L0's _l0); the numpy path serves without it
    from . import _codec as _c
except ImportError:  # pragma: no cover - exercised only without a C compiler
    _c = None

__all__ = [
    "BACKENDS",
    "BLOCK_SIZE",
    "C_BUILT",
    "CODEC_ID",
    "DEFAULT_REL_EB",
    "FORMAT_VERSION",
    "HEADER_SIZE",
    "MAGIC",
    "Q_MAX",
    "CodecHeader",
    "CuSZpPlain",
    "StorageReport",
    "assemble_stream",
    "decode_blocks",
    "encode_blocks",
    "split_stream",
    "codec_decode",
    "codec_encode",
    "codec_encode_rel",
    "codec_dequantize",
    "codec_quantize",
    "error_slack",
    "read_header",
    "relative_eb",
    "storage_report",
    "validate_eb",
    "within_error_bound",
]

MAGIC = b"LSZP"
FORMAT_VERSION = 1
#: The stream versions this reader decodes (SPEC §9.5 version 1, normative default; §9.6 version 2).
VERSIONS = (1, 2)
#: ``backend`` of :func:`codec_encode` / :func:`codec_decode`: C when built (CPU only), else numpy.
BACKENDS = ("auto", "c", "numpy")
#: Whether the C extension ``lam_ref._codec`` is built.
C_BUILT = _c is not None
#: Values per block (cuSZp's 32; SPEC §9).
BLOCK_SIZE = 32
#: The default relative error bound (Table 20's shipped setting, SPEC §9).
DEFAULT_REL_EB = 0.001
#: The largest ``|q|`` the format accepts (cuSZp quantizes into int32), so ``|d| < 2**32`` and ``r <= 32``.
Q_MAX = 2**31 - 1
MAX_RATE = 32
CODEC_ID = "lam_ref.cuszp_plain"
_HEADER = struct.Struct("<4sBBHQd")  # magic, version, flags, block, n, eb (24 bytes), then crc32 (4 bytes)
HEADER_SIZE = _HEADER.size + 4
_MAX_BLOCK = 4096
#: ``float32(v)`` is ``inf`` iff ``|v| >= 2**128 - 2**103`` (round half to even at FLT_MAX).
_F32_OVERFLOW = 2.0**128 - 2.0**103


# ----------------------------------------------------------------------------------------------
# validation


def validate_eb(eb: Any, name: str = "eb") -> float:
    """An error bound as a positive finite float (``2·eb`` finite too); else :class:`LamValueError` naming ``name``."""
    value = validate_real(eb, name, positive=True)
    if not math.isfinite(2.0 * value):
        raise LamValueError(f"{name} must be a positive finite number (and 2*{name} finite), got {value!r}")
    return value


def _validate_block(block_size: Any) -> int:
    b = validate_int(block_size, "block_size", minimum=None)
    if b < 8 or b > _MAX_BLOCK or b % 8:
        raise LamValueError(f"block_size must be a multiple of 8 in [8, {_MAX_BLOCK}], got {b}")
    return b


def _as_float32_vector(x: Any, name: str = "x") -> np.ndarray:
    """``x`` as a C-contiguous native float32 1-D array (any shape is flattened in C order).

    float32 input (either byte order) is taken as is; other float dtypes are accepted only when
    every value is exactly representable in float32, integer dtypes only when every value lies
    within ``±2**24`` (where every integer is exact in float32), so no precision is lost silently.
    """
    if isinstance(x, (bytes, bytearray, memoryview)):
        raise LamValueError(f"{name} must be a float32 array, got {type(x).__name__} (use codec_decode for bytes)")
    try:
        arr = np.asarray(x)
    except Exception as exc:
        raise LamValueError(f"{name} must be a float32 array, could not convert: {exc}") from exc
    if arr.dtype == object or arr.dtype.kind not in "fiu":
        raise LamValueError(f"{name} must be a float32 array, got dtype {arr.dtype}")
    flat = arr.reshape(-1)
    if arr.dtype.kind == "f" and arr.dtype.itemsize == 4:
        out = np.ascontiguousarray(flat, dtype=np.float32)
    elif arr.dtype.kind in "iu":
        big = np.abs(flat.astype(np.float64)) > 2.0**24 if flat.size else np.zeros(0, dtype=bool)
        if big.any():
            bad = int(np.flatnonzero(big)[0])
            raise LamValueError(
                f"{name} must be float32; got dtype {arr.dtype} whose value {flat[bad].item()!r} at index {bad} "
                "exceeds 2**24 in magnitude (integers are taken only up to 2**24; convert explicitly)"
            )
        out = flat.astype(np.float32)
    else:
        with np.errstate(invalid="ignore", over="ignore"):  # an overflow to inf is reported below, not warned
            out = flat.astype(np.float32)
            differ = (out.astype(arr.dtype) != flat) & np.isfinite(flat)
        if differ.any():
            bad = int(np.flatnonzero(differ)[0])
            raise LamValueError(
                f"{name} must be float32; got dtype {arr.dtype} whose value {flat[bad].item()!r} at index {bad} "
                "is not exactly representable in float32 (convert explicitly)"
            )
    if out.size and not np.isfinite(out).all():
        bad = int(np.flatnonzero(~np.isfinite(out))[0])
        raise LamValueError(f"{name}[{bad}] is {float(out[bad])!r}: the codec needs finite values")
    return out


# ----------------------------------------------------------------------------------------------
# quantizer (step 1) and reconstruction (step 6)


def codec_quantize(x: Any, eb: float, *, xp: Any = np) -> Any:
    """Quantization codes ``q = round_half_up(x / (2·eb))`` as int64 (SPEC §9, step 1): the L2
    codec's, not the band index's :func:`~lam_ref.bands.band_quantize` (half to even, int16).

    Exactly: ``y = float64(x) / (2.0*eb)`` (IEEE division), ``q = floor(y) + (y - floor(y) >= 0.5)``.
    ``y - floor(y)`` is exact in float64, so ties (``y = k + 1/2``) always go up: ``2.5 -> 3``,
    ``-2.5 -> -2``, ``-0.5 -> 0``. Raises unless ``|q| <= Q_MAX`` (``2**31 - 1``) and the
    reconstruction of every code is finite in float32. ``xp`` is the array module (numpy or cupy).
    """
    e = validate_eb(eb)
    s = 2.0 * e
    x64 = xp.asarray(x).astype(xp.float64)
    y = x64 / s
    f = xp.floor(y)
    q = f + (y - f >= 0.5)
    if q.size:
        _check_range(e, float(xp.abs(q).max()))
    return q.astype(xp.int64)


def _check_range(e: float, qmax: float) -> None:
    """Refuse codes outside ``|q| <= Q_MAX`` or whose reconstruction overflows float32 (SPEC §9.4)."""
    if not qmax <= Q_MAX:
        raise LamValueError(
            f"eb = {e!r} is too small for the data: max |x|/(2*eb) rounds to {qmax:.6g} > {Q_MAX} "
            "(the format stores int32 quantization codes)"
        )
    if qmax * 2.0 * e >= _F32_OVERFLOW:
        raise LamValueError(f"eb = {e!r} is too large: a reconstruction q*2*eb would overflow float32")


def codec_dequantize(q: Any, eb: float, *, xp: Any = np) -> Any:
    """Reconstruction ``x' = float32(float64(q) * (2.0*eb))`` (round to nearest even; SPEC §9, step 6)."""
    s = 2.0 * validate_eb(eb)
    with np.errstate(over="ignore"):  # an overflow to inf is reported by the caller, never returned
        return (xp.asarray(q).astype(xp.float64) * s).astype(xp.float32)


def error_slack(x: Any, x_rec: Any, eb: float) -> np.ndarray:
    """The allowed excess over ``eb`` per value: ``ulp32(x')/2 + 2**-52·(|x| + eb)`` (float64).

    ``ulp32(x') = numpy.spacing(float32(|x'|))`` is the float32 rounding of the reconstruction;
    ``2**-52·(|x| + eb)`` bounds the float64 rounding of the quotient ``x/s`` and of the product
    ``q·s`` (each at most ``2**-53`` relative). docs/codec.md has the derivation.
    """
    e = validate_eb(eb)
    xr = np.abs(np.asarray(x_rec, dtype=np.float32))
    x64 = np.abs(np.asarray(x, dtype=np.float64))
    return np.spacing(xr).astype(np.float64) / 2.0 + 2.0**-52 * (x64 + e)


def within_error_bound(x: Any, x_rec: Any, eb: float) -> np.ndarray:
    """Exact per-value test ``|x - x'| <= eb + error_slack`` (rational arithmetic near the boundary).

    The float64 comparison decides every value whose margin exceeds ``1e-9`` of the bound; the
    few within that margin are decided with :class:`fractions.Fraction` (exact).
    """
    from fractions import Fraction

    e = validate_eb(eb)
    x64 = np.asarray(x, dtype=np.float32).astype(np.float64).reshape(-1)
    r64 = np.asarray(x_rec, dtype=np.float32).astype(np.float64).reshape(-1)
    if x64.shape != r64.shape:
        raise LamValueError(f"x and x_rec differ in size: {x64.size} vs {r64.size}")
    half_ulp = np.spacing(np.abs(r64.astype(np.float32))).astype(np.float64) / 2.0
    bound = e + half_ulp + 2.0**-52 * (np.abs(x64) + e)
    err = np.abs(x64 - r64)
    ok = err <= bound
    close = np.abs(err - bound) <= 1e-9 * bound
    for i in np.flatnonzero(close).tolist():
        fx, fr, fe = Fraction(float(x64[i])), Fraction(float(r64[i])), Fraction(e)
        exact_bound = fe + Fraction(float(half_ulp[i])) + Fraction(1, 2**52) * (abs(fx) + fe)
        ok[i] = abs(fx - fr) <= exact_bound
    return ok


def relative_eb(x: Any, rel_eb: float = DEFAULT_REL_EB) -> float:
    """Absolute bound of relative mode: ``eb = rel_eb · max|x|`` in float64 (SPEC §9, Table 20).

    For an empty or all-zero ``x`` any positive bound reconstructs exactly; ``rel_eb`` itself is
    then used so that the stream still carries a valid ``eb``.
    """
    r = validate_eb(rel_eb, "rel_eb")
    arr = _as_float32_vector(x)
    m = float(np.abs(arr).max()) if arr.size else 0.0
    return r * m if m > 0.0 else r


# ----------------------------------------------------------------------------------------------
# the block layer (steps 2-5), written against an array module ``xp`` (numpy, or cupy on a GPU)


def _pack_rows(bits: Any, xp: Any) -> Any:
    """``(m, B)`` 0/1 array -> ``(m, B/8)`` uint8, most significant bit first."""
    if xp is np:
        return np.packbits(bits.astype(np.uint8), axis=1, bitorder="big")
    m, b = bits.shape
    w = xp.asarray(np.array([128, 64, 32, 16, 8, 4, 2, 1], dtype=np.uint16))
    return (bits.astype(xp.uint16).reshape(m, b // 8, 8) * w).sum(axis=2).astype(xp.uint8)


def _unpack_rows(packed: Any, xp: Any) -> Any:
    """``(m, B/8)`` uint8 -> ``(m, B)`` uint8 bits, most significant bit first."""
    if xp is np:
        return np.unpackbits(packed, axis=1, bitorder="big")
    m, nbytes = packed.shape
    shifts = xp.asarray(np.arange(7, -1, -1, dtype=np.uint8))
    return ((packed[:, :, None] >> shifts) & 1).astype(xp.uint8).reshape(m, nbytes * 8)


def _bit_length(v: Any, xp: Any) -> Any:
    """``bit_length`` of non-negative int64 values below ``2**53`` (exact through ``frexp``)."""
    _, exp = xp.frexp(v.astype(xp.float64))
    return xp.where(v > 0, exp, 0).astype(xp.int64)


def _segment_mask(rates: Any, xp: Any) -> Any:
    """``(nb, R+1)`` bool: segment ``k`` (0 = signs, ``1+i`` = plane ``i``) of block ``j`` is stored."""
    top = int(rates.max()) if rates.size else 0
    k = xp.arange(top + 1)[None, :]
    return (k <= rates[:, None]) & (rates[:, None] > 0)


def encode_blocks(q: Any, block: int, xp: Any) -> tuple[Any, Any]:
    """Rate bytes and payload (both uint8 arrays of ``xp``) for int64 codes ``q`` (steps 2-5)."""
    n = int(q.size)
    nb = -(-n // block)
    qp = xp.zeros(nb * block, dtype=xp.int64)
    qp[:n] = q
    qp = qp.reshape(nb, block)
    d = xp.empty_like(qp)
    d[:, :1] = qp[:, :1]
    d[:, 1:] = qp[:, 1:] - qp[:, :-1]
    if n % block:
        d[nb - 1, n % block :] = 0  # padding carries no delta (cuSZp writes absQuant = 0 there)
    a = xp.abs(d)
    rates = _bit_length(a.max(axis=1) if nb else xp.zeros(0, dtype=xp.int64), xp)
    top = int(rates.max()) if nb else 0
    seg = xp.zeros((nb, top + 1, block // 8), dtype=xp.uint8)
    seg[:, 0, :] = _pack_rows(d < 0, xp)
    for i in range(top):  # one pass per bit-plane, vectorised over all values
        seg[:, 1 + i, :] = _pack_rows((a >> i) & 1, xp)
    keep = xp.flatnonzero(_segment_mask(rates, xp).reshape(-1))
    payload = seg.reshape(-1, block // 8)[keep].reshape(-1)
    return rates.astype(xp.uint8), payload


def decode_blocks(rates: Any, payload: Any, n: int, block: int, xp: Any) -> Any:
    """int64 codes from rate bytes and payload; raises on a non-canonical stream (steps 2-5 inverted)."""
    nb = int(rates.size)
    r = rates.astype(xp.int64)
    top = int(r.max()) if nb else 0
    seg = xp.zeros((nb, top + 1, block // 8), dtype=xp.uint8)
    keep = xp.flatnonzero(_segment_mask(r, xp).reshape(-1))
    flat = seg.reshape(-1, block // 8)
    flat[keep] = payload.reshape(-1, block // 8)
    sign = _unpack_rows(seg[:, 0, :], xp).astype(bool)
    a = xp.zeros((nb, block), dtype=xp.int64)
    for i in range(top):
        a |= _unpack_rows(seg[:, 1 + i, :], xp).astype(xp.int64) << i
    if nb:
        got = _bit_length(a.max(axis=1), xp)
        bad = xp.flatnonzero(got != r)
        if bad.size:
            j = int(bad[0])
            raise LamValueError(
                f"corrupt codec stream: block {j} has rate byte {int(r[j])} but its largest |delta| has "
                f"{int(got[j])} bits (non-canonical)"
            )
        if bool((sign & (a == 0)).any()):
            j = int(xp.flatnonzero((sign & (a == 0)).any(axis=1))[0])
            raise LamValueError(f"corrupt codec stream: block {j} has a sign bit on a zero delta (non-canonical)")
        if n % block and bool((a[nb - 1, n % block :] != 0).any() or sign[nb - 1, n % block :].any()):
            raise LamValueError("corrupt codec stream: the padding of the last block is not zero")
    d = xp.where(sign, -a, a)
    q = xp.cumsum(d, axis=1).reshape(-1)[:n]
    if n and float(xp.abs(q).max()) > Q_MAX:
        raise LamValueError(f"corrupt codec stream: a reconstructed code exceeds |q| <= {Q_MAX}")
    return q


# ----------------------------------------------------------------------------------------------
# the byte stream


@dataclass(frozen=True)
class CodecHeader:
    """The fixed 28-byte header of a codec stream (see the module docstring)."""

    version: int
    block_size: int
    n: int
    eb: float
    crc32: int
    flags: int = 0

    @property
    def cols(self) -> int:
        """Version 2: the uint16 at offset 6 is the number of columns (SPEC §9.6)."""
        return self.block_size

    @property
    def strict(self) -> bool:
        return bool(self.flags & _v2.FLAG_STRICT)

    @property
    def blocks(self) -> int:
        return -(-self.n // self.block_size)


def _header_bytes(n: int, eb: float, block: int, version: int = FORMAT_VERSION, flags: int = 0) -> bytes:
    return _HEADER.pack(MAGIC, version, flags, block, n, eb)


def assemble_stream(n: int, eb: float, block: int, rates: bytes, payload: bytes, *, version: int = FORMAT_VERSION,
                    flags: int = 0) -> bytes:
    """Header, CRC-32 and body (version 1: rate bytes then payload; version 2: ``rates`` is the body)."""
    head = _header_bytes(n, eb, block, version, flags)
    crc = zlib.crc32(payload, zlib.crc32(rates, zlib.crc32(head)))
    return b"".join([head, struct.pack("<I", crc), rates, payload])


def _as_bytes_view(b: Any) -> memoryview:
    if isinstance(b, np.ndarray):
        if b.dtype.kind not in "uiS" and b.dtype != np.uint8:
            raise LamValueError(f"b must be bytes-like, got an array of dtype {b.dtype}")
        b = np.ascontiguousarray(b).view(np.uint8).reshape(-1)
    try:
        view = memoryview(b)
    except TypeError as exc:
        raise LamValueError(f"b must be bytes-like (bytes, bytearray, memoryview), got {type(b).__name__}") from exc
    if not view.c_contiguous:
        view = memoryview(view.tobytes())
    return view.cast("B") if view.format != "B" or view.ndim != 1 else view


def read_header(b: Any) -> CodecHeader:
    """Parse and validate the header of a codec stream (magic, version, flags, block size, ``eb``)."""
    view = _as_bytes_view(b)
    if len(view) < HEADER_SIZE:
        raise LamValueError(f"truncated codec stream: {len(view)} bytes, the header alone needs {HEADER_SIZE}")
    magic, version, flags, block, n, eb = _HEADER.unpack_from(view, 0)
    (crc,) = struct.unpack_from("<I", view, _HEADER.size)
    if magic != MAGIC:
        raise LamValueError(f"not a lam_ref codec stream: magic {bytes(magic)!r}, expected {MAGIC!r}")
    if version not in VERSIONS:
        raise LamValueError(f"unsupported codec stream version {version} (this reader knows {VERSIONS})")
    if version == 1 and flags != 0:
        raise LamValueError(f"corrupt codec stream: reserved flags byte is {flags}, expected 0")
    if version == 2 and flags & ~_v2.FLAG_STRICT:
        raise LamValueError(f"corrupt codec stream: flags byte is {flags}, only bit 0 (strict) is defined")
    if version == 1 and (block < 8 or block > _MAX_BLOCK or block % 8):
        raise LamValueError(f"corrupt codec stream: block size {block} is not a multiple of 8 in [8, {_MAX_BLOCK}]")
    if version == 2 and (block < 1 or n % block):
        raise LamValueError(f"corrupt codec stream: {block} columns do not divide n = {n}")
    if not math.isfinite(eb) or eb <= 0.0 or not math.isfinite(2.0 * eb):
        raise LamValueError(f"corrupt codec stream: error bound eb = {eb!r} is not a positive finite number")
    return CodecHeader(version, block, n, eb, crc, flags)


def split_stream(b: Any) -> tuple[CodecHeader, np.ndarray, np.ndarray]:
    """Validate a whole stream and return its header, rate bytes and payload (host arrays)."""
    view = _as_bytes_view(b)
    h = read_header(view)
    if h.version != 1:
        raise LamValueError(f"split_stream reads version 1 streams, this one is version {h.version}")
    nb = h.blocks
    total = len(view)
    if total < HEADER_SIZE + nb:
        raise LamValueError(
            f"truncated codec stream: {total} bytes, header and {nb} rate bytes need {HEADER_SIZE + nb}"
        )
    body = np.frombuffer(view, dtype=np.uint8, offset=HEADER_SIZE)
    rates = body[:nb]
    if nb and int(rates.max()) > MAX_RATE:
        j = int(np.flatnonzero(rates > MAX_RATE)[0])
        raise LamValueError(f"corrupt codec stream: block {j} has rate {int(rates[j])} > {MAX_RATE}")
    r = rates.astype(np.int64)
    need = int(np.where(r > 0, r + 1, 0).sum()) * (h.block_size // 8)
    have = total - HEADER_SIZE - nb
    if have < need:
        raise LamValueError(f"truncated codec stream: payload has {have} bytes, the rate bytes announce {need}")
    if have > need:
        raise LamValueError(f"corrupt codec stream: {have - need} trailing bytes after the payload ({need} expected)")
    crc = zlib.crc32(view[HEADER_SIZE:], zlib.crc32(view[: _HEADER.size]))
    if crc != h.crc32:
        raise LamValueError(f"corrupt codec stream: CRC-32 is {crc:#010x}, the header says {h.crc32:#010x}")
    return h, rates, body[nb:]


def _xp_vector(x: Any, xp: Any) -> Any:
    """``x`` as a contiguous float32 1-D array of ``xp`` (finite values only)."""
    arr = xp.asarray(x)
    if arr.dtype != xp.float32:
        raise LamValueError(f"x must be a float32 array, got dtype {arr.dtype}")
    arr = xp.ascontiguousarray(arr).reshape(-1)
    if arr.size and not bool(xp.isfinite(arr).all()):
        bad = int(xp.flatnonzero(~xp.isfinite(arr))[0])
        raise LamValueError(f"x[{bad}] is {float(arr[bad])!r}: the codec needs finite values")
    return arr


def _host(a: Any) -> np.ndarray:
    return a.get() if hasattr(a, "get") else np.asarray(a)


def _use_c(backend: Any, xp: Any) -> bool:
    """Whether the C extension runs: ``backend`` is ``"auto"`` (C when built, CPU only), ``"c"`` or ``"numpy"``."""
    if backend not in BACKENDS:
        raise LamValueError(f"backend must be one of {BACKENDS}, got {backend!r}")
    on_cpu = xp is None or xp is np
    if backend == "c":
        if _c is None:
            raise LamValueError("backend='c': the extension lam_ref._codec is not built (reinstall with a C compiler)")
        if not on_cpu:
            raise LamValueError("backend='c' runs on the CPU only; use backend='numpy' (or 'auto') with xp=cupy")
    return backend != "numpy" and _c is not None and on_cpu


def _validate_version(version: Any, strict: Any, xp: Any) -> int:
    v = validate_int(version, "version", minimum=None)
    if v not in VERSIONS:
        raise LamValueError(f"version must be one of {VERSIONS}, got {v}")
    if not isinstance(strict, (bool, np.bool_)):
        raise LamValueError(f"strict must be a bool, got {strict!r}")
    if v == 1 and strict:
        raise LamValueError("strict=True needs version=2 (version 1 has no flags; SPEC §9.6)")
    if v == 2 and not (xp is None or xp is np):
        raise LamValueError("version 2 is encoded on the CPU only (xp=None or numpy)")
    return v


def _validate_cols(cols: Any, n: int) -> int:
    c = validate_int(cols, "cols", minimum=None)
    if c < 1 or c > 65535 or n % c:
        raise LamValueError(f"cols must be in [1, 65535] and divide the {n} values, got {c}")
    return c


def codec_encode(x: Any, eb: float, *, block_size: int = BLOCK_SIZE, xp: Any = None, backend: str = "auto",
                 version: int = FORMAT_VERSION, strict: bool = False, cols: int = 1) -> bytes:
    """Encode float32 values with absolute error bound ``eb`` (SPEC §9, §15 conformance signature).

    ``x`` is flattened in C order; the stream records ``n``, ``eb`` and the block size, so
    :func:`codec_decode` needs only the bytes. Deterministic: equal inputs give equal bytes.

    Args:
        x: float32 values (any shape; with ``xp``, an array of that module, e.g. on the GPU).
        eb: the absolute error bound.
        block_size: values per block (multiple of 8; default 32; version 1 only).
        xp: the array module to compute with: ``None`` (numpy, with the input checks of the
            CPU reference), ``numpy``, or ``cupy`` (:func:`lam_ref.devices.array_module`). Every module writes the
            same bytes: the steps are the same IEEE float64 operations (see docs/codec.md).
        backend: ``"auto"`` (the C extension when built and on the CPU, else numpy), ``"c"`` or
            ``"numpy"``; every backend writes the same bytes (SPEC §9.5).
        version: 1 (cuSZp plain, the default, SPEC §9.5) or 2 (Huffman-coded, SPEC §9.6).
        strict: version 2 only: every reconstruction within ``eb`` exactly (SPEC §9.6).
        cols: version 2 only: columns of the row-major matrix ``x`` (its codes per column group).

    Returns:
        The stream (host ``bytes``; the header and CRC-32 are always built on the host).

    Examples:
        >>> x = np.array([0.1, -0.25, 3.0], dtype=np.float32)
        >>> y = codec_decode(codec_encode(x, 0.01))
        >>> y.dtype, bool(np.all(np.abs(y - x) <= 0.01 * (1 + 1e-6)))
        (dtype('float32'), True)
    """
    use_c = _use_c(backend, xp)
    v = _validate_version(version, strict, xp)
    if xp is None:
        arr = _as_float32_vector(x)
        xp = np
    else:
        arr = _xp_vector(x, xp)
    e = validate_eb(eb)
    if v == 2:
        c = _validate_cols(cols, int(arr.size))
        return _encode_v2(arr, e, c, bool(strict), use_c)
    block = _validate_block(block_size)
    if use_c:
        body = _c.v1_encode(arr, 2.0 * e, block)
        if isinstance(body, tuple):
            _check_range(e, body[1])
        return assemble_stream(int(arr.size), e, block, body, b"")  # rate bytes then payload, one buffer
    q = codec_quantize(arr, e, xp=xp)
    rates, payload = encode_blocks(q, block, xp)
    return assemble_stream(int(arr.size), e, block, _host(rates).tobytes(), _host(payload).tobytes())


def _encode_v2(arr: np.ndarray, e: float, cols: int, strict: bool, use_c: bool) -> bytes:
    """A version-2 stream (SPEC §9.6): the C body, or the reference body of :mod:`lam_ref.codec_v2`."""
    if use_c:
        body = _c.v2_encode(arr, 2.0 * e, e, cols, int(strict))
        if isinstance(body, tuple):
            _check_range(e, body[1])
    else:
        body = _v2.encode_body(codec_quantize(arr, e), arr, e, cols, strict)
    flags = _v2.FLAG_STRICT if strict else 0
    return assemble_stream(int(arr.size), e, cols, body, b"", version=2, flags=flags)


def codec_encode_rel(x: Any, rel_eb: float = DEFAULT_REL_EB, *, block_size: int = BLOCK_SIZE, xp: Any = None,
                     **kw: Any) -> bytes:
    """Relative mode: :func:`codec_encode` with ``eb = rel_eb · max|x|`` (:func:`relative_eb`, float64)."""
    if xp is None:
        return codec_encode(x, relative_eb(x, rel_eb), block_size=block_size, **kw)
    arr = _xp_vector(x, xp)
    r = validate_eb(rel_eb, "rel_eb")
    m = float(xp.abs(arr).max()) if arr.size else 0.0
    return codec_encode(arr, r * m if m > 0.0 else r, block_size=block_size, xp=xp, **kw)


#: Messages of the C decoder's codes (SPEC §9.6 version 2; version 1 re-runs numpy for its message).
_C_V2_ERRORS = {
    10: "truncated codec stream (version 2): the body is shorter or longer than its tables and codes",
    11: "corrupt codec stream (version 2): a column class > 64",
    12: "corrupt codec stream (version 2): a code table is too large or not a prefix code",
    13: "corrupt codec stream (version 2): a value has no valid code",
    14: "corrupt codec stream (version 2): a reconstructed code exceeds |q| <= 2**31 - 1",
    15: "corrupt codec stream (version 2): a reconstructed value overflows float32",
    16: "corrupt codec stream (version 2): an exception index or value is invalid (non-canonical)",
    17: "corrupt codec stream (version 2): classes, code lengths or padding differ from the encoder's (non-canonical)",
}


def _decode_v2(view: memoryview, h: CodecHeader, use_c: bool) -> np.ndarray:
    body = view[HEADER_SIZE:]
    crc = zlib.crc32(body, zlib.crc32(view[: _HEADER.size]))
    if crc != h.crc32:
        raise LamValueError(f"corrupt codec stream: CRC-32 is {crc:#010x}, the header says {h.crc32:#010x}")
    _v2.check_capacity(body, h.n, h.cols, h.strict)  # refuse before allocating n floats
    if not use_c:
        return _v2.decode_body(bytes(body), h.n, h.cols, h.eb, h.strict)
    out = _v2.output_array(h.n)
    rc = _c.v2_decode(body, h.n, h.cols, 2.0 * h.eb, int(h.strict), out)
    if rc:
        raise LamValueError(_C_V2_ERRORS.get(rc, f"corrupt codec stream (version 2): error {rc}"))
    return out


def codec_decode(b: Any, *, xp: Any = None, backend: str = "auto") -> Any:
    """Decode a stream of :func:`codec_encode` to ``float32[n]`` (SPEC §9, §15).

    Raises :class:`~lam_ref.geometry.LamValueError` for anything that is not exactly one valid
    stream: bad magic/version/flags, truncation, trailing bytes, CRC mismatch, or a payload the
    encoder could not have written (non-canonical rate, sign on a zero delta, non-zero padding).
    The stream is validated on the host (header, lengths, CRC-32); with ``xp`` (e.g. ``cupy``)
    the blocks are decoded by that module and an array of it is returned. ``backend`` as in
    :func:`codec_encode` (version 2 is decoded on the CPU).
    """
    use_c = _use_c(backend, xp)
    view = _as_bytes_view(b)
    if read_header(view).version == 2:
        h = read_header(view)
        if not (xp is None or xp is np):
            raise LamValueError("version 2 streams are decoded on the CPU only (xp=None or numpy)")
        return _decode_v2(view, h, use_c)
    h, rates, payload = split_stream(view)
    if use_c:
        out = np.empty(h.n, dtype=np.float32)
        if _c.v1_decode(view[HEADER_SIZE:], h.n, h.block_size, 2.0 * h.eb, out) == 0:
            return out
    mod = np if xp is None else xp  # also the C path's refusals: numpy names the first fault exactly
    if mod is not np:
        rates, payload = mod.asarray(rates), mod.asarray(payload)
    q = decode_blocks(rates, payload, h.n, h.block_size, mod)
    out = codec_dequantize(q, h.eb, xp=mod)
    if out.size and not bool(mod.isfinite(out).all()):
        raise LamValueError("corrupt codec stream: a reconstructed value overflows float32")
    if use_c:  # pragma: no cover - the two decoders disagree: never return a value either doubts
        raise LamValueError("corrupt codec stream: the C decoder refused a stream numpy accepts")
    return out


# ----------------------------------------------------------------------------------------------
# storage report (§F.7, Table 20)


@dataclass(frozen=True)
class StorageReport:
    """Codec storage on a set of embeddings (§F.7): raw fp32 bytes against the encoded stream."""

    vectors: int
    dim: int
    rel_eb: float
    eb: float
    raw_bytes: int
    encoded_bytes: int
    max_abs_error: float
    bound_holds: bool

    @property
    def ratio(self) -> float:
        """``raw_bytes / encoded_bytes`` (Table 20's "codec" column)."""
        return self.raw_bytes / self.encoded_bytes

    def to_json(self) -> dict[str, Any]:
        out = {k: getattr(self, k) for k in self.__dataclass_fields__}
        out["ratio"] = self.ratio
        return out


def storage_report(embeddings: Any, rel_eb: float = DEFAULT_REL_EB) -> StorageReport:
    """Encode retained embeddings ``(N, D)`` as one stream in relative mode and report the ratio.

    The whole matrix (C order) is one stream with ``eb = rel_eb · max|x|``; the reconstruction is
    checked against the bound (:func:`within_error_bound`).
    """
    arr = np.asarray(embeddings)
    if arr.ndim != 2:
        raise LamValueError(f"embeddings must be 2-D (N, D), got shape {arr.shape}")
    flat = _as_float32_vector(arr, "embeddings")
    eb = relative_eb(flat, rel_eb)
    enc = codec_encode(flat, eb)
    dec = codec_decode(enc)
    err = float(np.abs(dec.astype(np.float64) - flat.astype(np.float64)).max()) if flat.size else 0.0
    return StorageReport(
        vectors=int(arr.shape[0]),
        dim=int(arr.shape[1]),
        rel_eb=float(rel_eb),
        eb=eb,
        raw_bytes=int(flat.size) * 4,
        encoded_bytes=len(enc),
        max_abs_error=err,
        bound_holds=bool(within_error_bound(flat, dec, eb).all()),
    )


# ----------------------------------------------------------------------------------------------
# numcodecs


try:  # numcodecs is an optional dependency (the "encoder" extra); the functions above need only numpy
    from numcodecs.abc import Codec as _CodecBase
    from numcodecs.compat import ensure_ndarray, ndarray_copy
    from numcodecs.registry import register_codec as _register_codec
except ImportError:  # pragma: no cover - exercised only without numcodecs
    _CodecBase = object  # type: ignore[assignment,misc]
    ensure_ndarray = ndarray_copy = _register_codec = None  # type: ignore[assignment]


class CuSZpPlain(_CodecBase):  # type: ignore[misc,valid-type]
    """numcodecs codec ``"lam_ref.cuszp_plain"``: the L2 codec for zarr/numcodecs users (SPEC §9).

    Give exactly one of ``eb`` (absolute bound) or ``rel_eb`` (relative to each buffer's
    ``max|x|``); with neither, ``rel_eb = 0.001``. Input rules (docs/codec.md "numcodecs / zarr"),
    so that no buffer is silently misread wherever numcodecs codecs are used (zarr, issue 23 §4):

    * a **numpy array** must have dtype native float32 (any shape or memory order, flattened in
      memory order as numcodecs does); any other dtype is refused, 1-byte arrays (``u1``, ``i1``,
      ``S1``, ``V1``) included: they are integers or strings, not float32 bytes. Big-endian
      ``>f4`` is refused: the stream does not record byte order and ``decode`` returns native
      float32, which zarr or numcodecs would then read back as ``>f4``;
    * a **bytes-like object** that is not a numpy array (``bytes``, ``bytearray``, ``memoryview``,
      ``array.array``, ``mmap``) with 1-byte items is raw little-endian float32 bytes; with float32
      items (format ``'f'``) it is float32 values; any other item format is refused.

    ``decode`` returns native ``float32[n]``, or fills ``out``: a native float32 numpy array, or a
    bytes-like object of 1-byte or float32 items (it receives the little-endian float32 bytes); an
    ``out`` of another dtype is refused rather than reinterpreted.

    ``version=2`` writes the Huffman-coded stream (SPEC §9.6), ``strict=True`` (version 2 only) its
    strict mode; ``cols`` is version 2's column count: ``None`` takes ``shape[-1]`` of a numpy array
    flattened in C order (an embedding matrix's dimension), else 1 (1-D and Fortran-order arrays,
    bytes-like input). ``decode`` reads every version whatever the configuration.
    """

    codec_id = CODEC_ID

    def __init__(self, eb: float | None = None, rel_eb: float | None = None, block_size: int = BLOCK_SIZE,
                 version: int = FORMAT_VERSION, strict: bool = False, cols: int | None = None):
        if _register_codec is None:  # pragma: no cover
            raise ImportError("numcodecs is not installed: pip install numcodecs (lam_ref[encoder])")
        if eb is not None and rel_eb is not None:
            raise LamValueError(f"give eb or rel_eb, not both (eb={eb!r}, rel_eb={rel_eb!r})")
        self.eb = None if eb is None else validate_eb(eb)
        self.rel_eb = None if rel_eb is None and eb is not None else validate_eb(
            DEFAULT_REL_EB if rel_eb is None else rel_eb, "rel_eb"
        )
        self.block_size = _validate_block(block_size)
        self.version = _validate_version(version, strict, None)
        self.strict = bool(strict)
        if self.version == 1 and cols is not None:
            raise LamValueError(f"cols is a version-2 setting, got cols={cols!r} with version=1")
        self.cols = None if cols is None else _validate_cols(cols, 0)

    def _cols(self, buf: Any) -> int:
        """Version 2's columns: the configured ``cols``, else ``shape[-1]`` of a numpy array read in C order."""
        if self.cols is not None:
            return self.cols
        if not isinstance(buf, np.ndarray) or buf.ndim < 2 or buf.size == 0:
            return 1
        return 1 if buf.flags.f_contiguous and not buf.flags.c_contiguous else int(buf.shape[-1])

    def _values(self, buf: Any) -> np.ndarray:
        if isinstance(buf, np.ndarray):
            if buf.dtype == object:
                raise TypeError("CuSZpPlain cannot encode an object array")
            _check_float32_array(buf.dtype, "buf")
            if not (buf.flags.c_contiguous or buf.flags.f_contiguous):
                buf = np.ascontiguousarray(buf)
            return _as_float32_vector(buf.reshape(-1, order="A"), "buf")
        arr = _bytes_like(buf, "buf")
        if arr.dtype.itemsize == 1:
            if arr.size % 4:
                raise LamValueError(f"buf has {arr.size} bytes, not a whole number of float32 values")
            return _as_float32_vector(arr.view(np.uint8).view("<f4"), "buf")
        return _as_float32_vector(arr, "buf")

    def encode(self, buf: Any) -> bytes:
        x = self._values(buf)
        eb = self.eb if self.eb is not None else relative_eb(x, self.rel_eb)
        if self.version == 2:
            return codec_encode(x, eb, version=2, strict=self.strict, cols=self._cols(buf))
        return codec_encode(x, eb, block_size=self.block_size)

    def decode(self, buf: Any, out: Any = None) -> Any:
        if isinstance(buf, np.ndarray) and buf.dtype == object:
            raise TypeError("CuSZpPlain cannot decode an object array")
        dec = codec_decode(ensure_ndarray(buf).reshape(-1, order="A").view(np.uint8))
        if out is not None:
            if isinstance(out, np.ndarray):
                if out.dtype == object:
                    raise TypeError("CuSZpPlain cannot decode into an object array")
                _check_float32_array(out.dtype, "out")
            else:
                _bytes_like(out, "out")
            return ndarray_copy(dec, out)
        return dec

    def get_config(self) -> dict[str, Any]:
        cfg: dict[str, Any] = {"id": self.codec_id, "block_size": self.block_size}
        if self.eb is not None:
            cfg["eb"] = self.eb
        else:
            cfg["rel_eb"] = self.rel_eb
        if self.version != FORMAT_VERSION:  # version 1's configuration is unchanged (committed fixtures)
            cfg.update(version=self.version, strict=self.strict, cols=self.cols)
        return cfg

    def __repr__(self) -> str:
        mode = f"eb={self.eb!r}" if self.eb is not None else f"rel_eb={self.rel_eb!r}"
        extra = "" if self.block_size == BLOCK_SIZE else f", block_size={self.block_size}"
        if self.version != FORMAT_VERSION:
            extra += f", version={self.version}, strict={self.strict}, cols={self.cols!r}"
        return f"CuSZpPlain({mode}{extra})"


def _check_float32_array(dtype: np.dtype, name: str) -> None:
    """Refuse a numpy dtype other than native float32, naming ``name`` (``CuSZpPlain``'s rule)."""
    if dtype.kind == "f" and dtype.itemsize == 4:
        if dtype.isnative:
            return
        raise LamValueError(
            f"{name} has dtype {dtype.str} (non-native byte order): CuSZpPlain stores and returns native "
            f"float32 and cannot record byte order; convert with .astype('=f4')"
        )
    raise LamValueError(
        f"{name} must be a float32 numpy array, got dtype {dtype}; raw float32 bytes are taken only from a "
        "bytes-like object that is not a numpy array (bytes, bytearray, memoryview, array.array)"
    )


def _bytes_like(obj: Any, name: str) -> np.ndarray:
    """A non-numpy buffer-protocol object as an ndarray of its items: 1-byte items or float32."""
    try:
        mv = memoryview(obj)
    except TypeError as exc:
        raise LamValueError(
            f"{name} must be a float32 numpy array or bytes-like (bytes, bytearray, memoryview), got "
            f"{type(obj).__name__}"
        ) from exc
    if mv.itemsize != 1 and mv.format not in ("f", "<f", "=f"):
        raise LamValueError(
            f"{name} is a {type(obj).__name__} of item format {mv.format!r}: bytes-like input must have "
            "1-byte items (raw little-endian float32 bytes) or float32 items ('f')"
        )
    arr = ensure_ndarray(obj)
    return arr.reshape(-1, order="A")


if _register_codec is not None:
    _register_codec(CuSZpPlain)

