"""L2 codec, stream version 2: the version-1 quantizer, then canonical Huffman codes (SPEC §9.6).

The readable reference of version 2 (numpy where it vectorises, plain Python for the Huffman rule
and the decoder, which is slow); the C twin is ``lam_ref._codec`` (``v2_encode`` / ``v2_decode``),
which the tests hold byte-equal to this module. The header is version 1's (``lam_ref.codec``), with
version byte 2, ``flags`` bit 0 = *strict*, and the uint16 at offset 6 = ``cols`` (columns of a
row-major ``(n/cols, cols)`` matrix; 1 for a plain vector). The body (docs/codec.md "Version 2"):

0. only when ``cols >= 16``, *row repeats*: ``R`` (uint64), the number of distinct rows of codes, then
   one bit per row, most significant first: 1 = a new row, 0 = an exact repeat of an earlier row
   followed by the ``bit_length(R - 1)`` bits of the distinct row it repeats (numbered in order of
   first appearance); zero bits pad to a byte. Everything below is about the ``R`` distinct rows;
1. ``cols`` class bytes: column ``j``'s class is ``bit_length(m*m)`` with ``m = floor(sum_i z_ij / rows)``
   the floor of the mean zigzag code ``z = 2q`` (``q >= 0``) or ``-2q - 1`` of the column;
2. per distinct class, ascending: ``A`` (uint16, one more than the largest symbol used), then ``A``
   4-bit code lengths, two per byte (high nibble first; an odd ``A`` leaves a zero low nibble);
3. strict only: ``E`` (uint64), ``E`` uint64 indices (strictly increasing), ``E`` float32 values:
   the values whose reconstruction would miss ``|x - x'| <= eb`` (float64) are stored verbatim;
4. the bit stream, most significant bit first: each value of the distinct rows (row-major) with its
   column's code; symbol
   ``z`` for ``z < 4096``, else ``4096 + bit_length(z) - 13`` followed by the ``bit_length(z) - 1``
   bits of ``z`` below its leading one; zero bits pad the last byte.

The code lengths are :func:`huffman_lengths` of the symbol counts; the decoder recounts and refuses a
stream whose classes, lengths or padding are not the ones the encoder writes (one stream per input).
"""

from __future__ import annotations

import struct

import numpy as np

from .geometry import LamValueError

__all__ = ["DIRECT", "ALPHABET", "LMAX", "ROWS_MIN", "Decoder", "row_repeats", "canonical_codes", "column_classes",
           "decode_body", "encode_body", "huffman_lengths", "check_capacity", "output_array", "repeat_width", "symbols", "zigzag"]

#: ``z < DIRECT`` is its own symbol; larger codes use one escape symbol per bit length 13..32.
DIRECT = 4096
ALPHABET = DIRECT + 20
#: The longest code (lengths are 4-bit nibbles).
LMAX = 15
FLAG_STRICT = 1
#: Row repeats are coded when a row has at least this many columns.
ROWS_MIN = 16


def row_repeats(z: np.ndarray, cols: int) -> list[int]:
    """Per row: -1 for the first appearance of its codes, else the number of the distinct row it repeats."""
    if cols < ROWS_MIN or z.size == 0:
        return [-1] * (z.size // cols)
    seen: dict[bytes, int] = {}
    out = []
    for row in z.reshape(-1, cols):
        key = row.tobytes()
        out.append(seen.get(key, -1))
        if key not in seen:
            seen[key] = len(seen)
    return out


def _bits(values: list[tuple[int, int]]) -> bytes:
    """``(value, width)`` pairs written most significant bit first, zero-padded to a byte."""
    text = "".join(format(v, f"0{w}b") for v, w in values if w)
    text += "0" * (-len(text) % 8)
    return bytes(int(text[k : k + 8], 2) for k in range(0, len(text), 8))


def zigzag(q: np.ndarray) -> np.ndarray:
    """``z = 2q`` for ``q >= 0``, ``-2q - 1`` otherwise, as int64."""
    q = q.astype(np.int64)
    return np.where(q >= 0, 2 * q, -2 * q - 1)


def symbols(z: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Huffman symbol and the count of raw bits that follow it, for each zigzag code."""
    bl = np.zeros(z.shape, dtype=np.int64)
    big = z >= DIRECT
    if big.any():
        bl[big] = np.frexp(z[big].astype(np.float64))[1]
    sym = np.where(big, DIRECT + bl - 13, z)
    return sym, np.where(big, bl - 1, 0)


def column_classes(z: np.ndarray, cols: int) -> list[int]:
    """Class ``bit_length(m*m)`` of each column, ``m`` the floor of its mean zigzag code (exact ints)."""
    rows = z.size // cols
    if rows == 0:
        return [0] * cols
    mat = z.reshape(rows, cols)
    sums = mat.sum(axis=0) if rows < 2**31 else mat.astype(object).sum(axis=0)  # int64 cannot overflow
    return [int((int(s) // rows) ** 2).bit_length() for s in sums]


def huffman_lengths(counts: list[int], limit: int = LMAX) -> list[int]:
    """Code lengths of SPEC §9.6: two-queue Huffman over the used symbols sorted by (count, symbol),
    ties to the leaf; one used symbol gets length 1; while a length exceeds ``limit`` (15) every non-zero
    count ``c`` becomes ``(c + 1) >> 1`` and the tree is rebuilt."""
    c = list(counts)
    while True:
        leaves = sorted((w, s) for s, w in enumerate(c) if w)
        out = [0] * len(c)
        if not leaves:
            return out
        if len(leaves) == 1:
            out[leaves[0][1]] = 1
            return out
        weight = [w for w, _ in leaves]
        parent = [-1] * (2 * len(leaves) - 1)
        li, ii = 0, len(leaves)
        for _ in range(len(leaves) - 1):
            pick = []
            for _ in range(2):
                if li < len(leaves) and (ii >= len(weight) or weight[li] <= weight[ii]):
                    pick.append(li)
                    li += 1
                else:
                    pick.append(ii)
                    ii += 1
            parent[pick[0]] = parent[pick[1]] = len(weight)
            weight.append(weight[pick[0]] + weight[pick[1]])
        depth = [0] * len(weight)
        for k in range(len(weight) - 2, -1, -1):
            depth[k] = depth[parent[k]] + 1
        if max(depth[: len(leaves)]) <= limit:
            for k, (_, s) in enumerate(leaves):
                out[s] = depth[k]
            return out
        c = [(w + 1) >> 1 if w else 0 for w in c]


def canonical_codes(lengths: list[int]) -> list[int]:
    """DEFLATE's canonical assignment: codes in order of (length, symbol)."""
    bl_count = [0] * (LMAX + 2)
    for n in lengths:
        bl_count[n] += 1
    bl_count[0] = 0
    nxt, code = [0] * (LMAX + 2), 0
    for b in range(1, LMAX + 1):
        code = (code + bl_count[b - 1]) << 1
        nxt[b] = code
    out = [0] * len(lengths)
    for s, n in enumerate(lengths):
        if n:
            out[s] = nxt[n]
            nxt[n] += 1
    return out


def _tables(sym: np.ndarray, col_cls: np.ndarray, classes: list[int]) -> dict[int, list[int]]:
    tables = {}
    for g in sorted(set(classes)):
        sel = sym[col_cls == g]
        counts = np.bincount(sel, minlength=0).tolist() if sel.size else []
        tables[g] = huffman_lengths(counts)
    return tables


def _table_bytes(lengths: list[int]) -> bytes:
    a = len(lengths)
    nib = lengths + [0] * (a % 2)
    return struct.pack("<H", a) + bytes((nib[k] << 4) | nib[k + 1] for k in range(0, len(nib), 2))


def encode_body(q: np.ndarray, x: np.ndarray, eb: float, cols: int, strict: bool) -> bytes:
    """The version-2 body of codes ``q`` (``codec_quantize`` of float32 ``x``) in ``cols`` columns."""
    z_all = zigzag(q)
    reps = row_repeats(z_all, cols)
    parts = []
    if cols >= ROWS_MIN:
        distinct = sum(r < 0 for r in reps)
        w = repeat_width(distinct)
        parts += [struct.pack("<Q", distinct), _bits([(1, 1) if r < 0 else (r, w + 1) for r in reps])]
    new = np.array([r < 0 for r in reps], dtype=bool)
    z = z_all.reshape(-1, cols)[new].reshape(-1) if z_all.size else z_all
    n = int(z.size)
    classes = column_classes(z, cols)
    col_cls = np.tile(np.array(classes, dtype=np.int64), n // cols) if n else np.zeros(0, dtype=np.int64)
    sym, extra = symbols(z)
    tables = _tables(sym, col_cls, classes)
    parts += [bytes(classes)] + [_table_bytes(tables[g]) for g in sorted(tables)]
    if strict:
        rec = (q.astype(np.float64) * (2.0 * eb)).astype(np.float32)
        bad = np.flatnonzero(np.abs(x.astype(np.float64) - rec.astype(np.float64)) > eb)
        parts += [struct.pack("<Q", bad.size), bad.astype("<u8").tobytes(), x[bad].astype("<f4").tobytes()]
    length = np.zeros(n, dtype=np.int64)
    code = np.zeros(n, dtype=np.uint64)
    for g, lens in tables.items():
        sel = col_cls == g
        length[sel] = np.array(lens, dtype=np.int64)[sym[sel]]
        code[sel] = np.array(canonical_codes(lens), dtype=np.uint64)[sym[sel]]
    low = (z.astype(np.uint64) & ((np.uint64(1) << extra.astype(np.uint64)) - np.uint64(1)))
    word = (code << extra.astype(np.uint64)) | low
    width = length + extra
    bits = np.unpackbits(word.astype(">u8").view(np.uint8).reshape(n, 8), axis=1)
    keep = np.arange(64)[None, :] >= (64 - width)[:, None]
    parts.append(np.packbits(bits[keep]).tobytes())
    return b"".join(parts)


def _corrupt(what: str) -> LamValueError:
    return LamValueError(f"corrupt codec stream (version 2): {what}")


def repeat_width(distinct: int) -> int:
    """Bits of a repeat's index: ``bit_length(R - 1)`` (0 when ``R <= 1``), most significant first."""
    return (distinct - 1).bit_length() if distinct > 1 else 0


def check_capacity(body: bytes, n: int, cols: int, strict: bool) -> None:
    """Refuse, before ``n`` values are allocated, a body too short for them (docs/codec.md "Canonical and
    refused", decision D-codec-capacity): every *coded* value takes at least one bit, every row (``cols >= 16``)
    at least its row mark, and the fixed parts their bytes. With row repeats ``n`` may exceed the body's bits
    (a repeat costs ``1 + bit_length(R - 1)`` bits for ``cols`` values), so ``n`` itself is no bound."""
    rows = n // cols
    fixed = cols + 2 + (8 if strict else 0)  # classes, at least one table size, the exception count
    coded, marks = n, 0
    if cols >= ROWS_MIN:
        if len(body) < 8:
            raise LamValueError(f"truncated codec stream (version 2): {len(body)} body bytes, the distinct row count needs 8")
        distinct = int.from_bytes(body[:8], "little")
        if distinct > rows or (rows and not distinct):
            raise _corrupt(f"{distinct} distinct rows of {rows}")
        coded, fixed = distinct * cols, fixed + 8
        marks = 8 * ((rows + (rows - distinct) * repeat_width(distinct) + 7) // 8)
    need = 8 * fixed + marks + coded
    if need > 8 * len(body):
        raise LamValueError(f"truncated codec stream (version 2): {len(body)} body bytes cannot hold {n} values in "
                            f"{cols} columns (at least {need} bits)")


def output_array(n: int) -> np.ndarray:
    """``float32[n]`` for a decoded stream; a stream announcing more than this machine can hold is refused
    with :class:`LamValueError` (a resource limit, named as such), never a ``MemoryError``."""
    try:
        return np.empty(n, dtype=np.float32)
    except (MemoryError, ValueError) as exc:
        raise LamValueError(f"codec stream announces {n} values ({4 * n} bytes): cannot allocate the output ({exc})") from None


class _Bits:
    """Bits of ``data`` from byte ``start``, most significant first, read without copying the stream."""

    def __init__(self, data: bytes, start: int, end: int) -> None:
        self.data, self.pos, self.end = data, 8 * start, 8 * end

    def left(self) -> int:
        return self.end - self.pos

    def bit(self) -> int:
        p = self.pos
        self.pos = p + 1
        return (self.data[p >> 3] >> (7 - (p & 7))) & 1

    def read(self, k: int) -> int:
        """The next ``k`` bits as an unsigned integer (the caller checked :meth:`left`)."""
        if not k:
            return 0
        p, self.pos = self.pos, self.pos + k
        lo, hi = p >> 3, (p + k + 7) >> 3
        word = int.from_bytes(self.data[lo:hi], "big")
        return (word >> (8 * (hi - lo) - (p - 8 * lo) - k)) & ((1 << k) - 1)


class Decoder:
    """The version-2 body decoder (SPEC §9.6): one method per rule, so that a rule is stated once.

    Memory (issue 39): besides the float32 output, 8 bytes per coded value (its code) and, with row
    repeats, 8 bytes per row and a digest per distinct row; the bit stream is read in place.
    """

    #: the longest code (lengths are 4-bit nibbles)
    lmax = LMAX

    def repeat_width(self, distinct: int) -> int:
        return repeat_width(distinct)

    def unzigzag(self, z: int) -> int:
        """``q`` of a zigzag code: ``z >> 1`` for even ``z``, ``-(z >> 1) - 1`` for odd (exact integers)."""
        return -(z >> 1) - 1 if z & 1 else z >> 1

    def exception_ok(self, v: float, q: int, rec: float, eb: float) -> bool:
        """An exception the encoder writes: finite, quantized to the stream's code ``q``, more than ``eb``
        (float64) from its plain reconstruction (docs/codec.md "Canonical and refused")."""
        if not np.isfinite(v):
            return False
        y = float(v) / (2.0 * eb)
        if not np.isfinite(y):  # |v| / (2eb) overflows: no code of the stream (|q| <= 2**31 - 1) is that far
            return False
        f = np.floor(y)
        return int(f + (y - f >= 0.5)) == q and abs(float(v) - float(rec)) > eb

    def lengths(self, counts: list[int]) -> list[int]:
        """The rule's code lengths of the decoded symbol counts (compared with the stream's table)."""
        return huffman_lengths(counts, self.lmax)

    # ---------------------------------------------------------------------------------------------
    def decode(self, body: bytes, n: int, cols: int, eb: float, strict: bool) -> np.ndarray:
        """float32[n] of a version-2 body; raises :class:`LamValueError` on anything the encoder never writes."""
        pos = 0

        def take(k: int, what: str) -> int:
            nonlocal pos
            if len(body) - pos < k:
                raise LamValueError(f"truncated codec stream (version 2): {what} needs {k} bytes, {len(body) - pos} left")
            pos += k
            return pos - k

        rows = n // cols
        rep = cols >= ROWS_MIN
        distinct = rows
        ref = None  # row repeats: ref[r] >= 0 repeats distinct row ref[r]; -1 - k is the k-th distinct row
        if rep:
            at = take(8, "the distinct row count")
            distinct = int.from_bytes(body[at : at + 8], "little")
            if distinct > rows or (rows and not distinct):
                raise _corrupt(f"{distinct} distinct rows of {rows}")
            w = self.repeat_width(distinct)
            nbits = rows + (rows - distinct) * w
            at = take((nbits + 7) // 8, "the row repeats")
            bits = _Bits(body, at, at + (nbits + 7) // 8)
            ref = np.empty(rows, dtype=np.int64)
            seen = 0
            for r in range(rows):
                if bits.left() < 1:
                    raise _corrupt(f"row {r}: the row marks run past their {nbits} bits (more repeats than rows - R)")
                if bits.bit():
                    if seen == distinct:
                        raise _corrupt("more new rows than the distinct row count")
                    ref[r] = -1 - seen
                    seen += 1
                    continue
                if bits.left() < w:
                    raise _corrupt(f"row {r}: the row marks run past their {nbits} bits (more repeats than rows - R)")
                k = bits.read(w)
                if k >= seen:
                    raise _corrupt(f"row {r} repeats distinct row {k}, only {seen} seen")
                ref[r] = k
            if seen != distinct or bits.read(bits.left()):
                raise _corrupt("the row marks disagree with the distinct row count, or their padding is not zero")
        m = distinct * cols  # the coded values
        at = take(cols, "the column classes")
        classes = list(body[at : at + cols])
        if max(classes) > 64:
            raise _corrupt(f"column class {max(classes)} > 64")
        tables: dict[int, list[int]] = {}
        for g in sorted(set(classes)):
            at = take(2, "a table size")
            a = int.from_bytes(body[at : at + 2], "little")
            if a > ALPHABET:
                raise _corrupt(f"table of class {g} has {a} symbols > {ALPHABET}")
            at = take((a + 1) // 2, "a table")
            lens = [v for byte in body[at : at + (a + 1) // 2] for v in (byte >> 4, byte & 15)]
            if a % 2 and lens[-1]:
                raise _corrupt("the padding nibble of a table is not zero")
            lens = lens[:a]
            if sum(2 ** (LMAX - k) for k in lens if k) > 2**LMAX:
                raise _corrupt(f"the code lengths of class {g} are not a prefix code")
            tables[g] = lens
        ne, exc_at = 0, 0
        if strict:
            at = take(8, "the exception count")
            ne = int.from_bytes(body[at : at + 8], "little")
            if ne > n:
                raise _corrupt(f"{ne} exceptions for {n} values")
            exc_at = take(12 * ne, "the exceptions")
        decoders = {g: {(k, c): s for s, (k, c) in enumerate(zip(lens, canonical_codes(lens))) if k}
                    for g, lens in tables.items()}
        counts = {g: [0] * len(lens) for g, lens in tables.items()}
        sums = [0] * cols
        bits = _Bits(body, pos, len(body))
        q = np.empty(m, dtype=np.int64)  # the codes of the distinct rows (zigzag is a bijection: rows compare alike)
        for i in range(m):
            j = i % cols
            g = classes[j]
            table, code, length = decoders[g], 0, 0
            while (length, code) not in table:
                if length >= LMAX or not bits.left():
                    raise _corrupt(f"value {i} has no valid code (or the bit stream is truncated)")
                code, length = (code << 1) | bits.bit(), length + 1
            sym = table[(length, code)]
            counts[g][sym] += 1
            if sym < DIRECT:
                zi = sym
            else:
                k = sym - DIRECT + 12
                if bits.left() < k:
                    raise LamValueError("truncated codec stream (version 2): the bit stream ends inside a value")
                zi = (1 << k) | bits.read(k)
            qi = self.unzigzag(zi)
            if not -(2**31 - 1) <= qi <= 2**31 - 1:
                raise _corrupt(f"value {i}: the code {qi} exceeds |q| <= 2**31 - 1")
            q[i] = qi
            sums[j] += zi
        if bits.left() >= 8 or bits.read(bits.left()):
            raise _corrupt("bytes or non-zero bits after the last value")
        if rep:
            self._distinct_rows_differ(q, cols)
        if [int((s // distinct) ** 2).bit_length() if distinct else 0 for s in sums] != classes:
            raise _corrupt("the column classes are not those of the codes (non-canonical)")
        for g, lens in tables.items():
            c = counts[g]
            while c and not c[-1]:
                c.pop()
            if len(c) != len(lens) or self.lengths(c) != lens:
                raise _corrupt("the code lengths are not those of the symbol counts (non-canonical)")
        out = output_array(n)
        s = 2.0 * eb
        first = np.flatnonzero(ref < 0) if rep else None
        dst = out.reshape(rows, cols) if rows else out.reshape(0, cols)
        step = max(1, (1 << 16) // cols)  # rows per chunk: a bounded float64 temporary
        for r0 in range(0, distinct, step):
            with np.errstate(over="ignore"):
                chunk = (q[r0 * cols : (r0 + step) * cols].astype(np.float64) * s).astype(np.float32)
            if not np.isfinite(chunk).all():
                raise _corrupt("a reconstructed value overflows float32")
            if rep:
                dst[first[r0 : r0 + step]] = chunk.reshape(-1, cols)
            else:
                out[r0 * cols : r0 * cols + chunk.size] = chunk
        if rep:
            again = np.flatnonzero(ref >= 0)
            for r0 in range(0, again.size, step):
                part = again[r0 : r0 + step]
                dst[part] = dst[first[ref[part]]]
        prev = -1
        for e in range(ne):
            idx = int.from_bytes(body[exc_at + 8 * e : exc_at + 8 * e + 8], "little")
            (v,) = struct.unpack_from("<f", body, exc_at + 8 * ne + 4 * e)
            if idx <= prev or idx >= n:
                raise _corrupt("exception indices are not strictly increasing below n")
            r, j = divmod(idx, cols)
            k = (int(ref[r]) if ref[r] >= 0 else -1 - int(ref[r])) if rep else r
            if not self.exception_ok(v, int(q[k * cols + j]), float(out[idx]), eb):
                raise _corrupt(f"exception {e} (value {idx}) is not one the encoder writes: not finite, not of the "
                               "stream's code, or within eb of its plain reconstruction (non-canonical)")
            out[idx] = v
            prev = idx
        return out

    @staticmethod
    def _distinct_rows_differ(q: np.ndarray, cols: int) -> None:
        """Refuse two equal distinct rows of codes (exact: digests first, equal digests compared row by row)."""
        import hashlib

        mat = q.reshape(-1, cols)
        seen: dict[bytes, int] = {}
        for k in range(mat.shape[0]):
            key = hashlib.blake2b(mat[k].tobytes(), digest_size=16).digest()
            if key in seen and np.array_equal(mat[seen[key]], mat[k]):
                raise _corrupt("two distinct rows are equal (non-canonical row repeats)")
            seen.setdefault(key, k)


def decode_body(body: bytes, n: int, cols: int, eb: float, strict: bool) -> np.ndarray:
    """float32[n] of a version-2 body (the reference :class:`Decoder`); raises on anything non-canonical."""
    return Decoder().decode(body, n, cols, eb, strict)
