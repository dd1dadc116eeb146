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

__all__ = ["DIRECT", "ALPHABET", "LMAX", "ROWS_MIN", "row_repeats", "canonical_codes", "column_classes", "decode_body", "encode_body",
           "huffman_lengths", "symbols", "zigzag"]

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


def huffman_lengths(counts: list[int]) -> list[int]:
    """Code lengths of SPEC §9.6: two-queue Huffman over the used symbols sorted by (count, symbol),
    ties to the leaf; one used symbol gets length 1; while a length exceeds 15 every non-zero count
    ``c`` becomes ``(c + 1) >> 1`` and the tree is rebuilt."""
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
        if max(depth[: len(leaves)]) <= LMAX:
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
        w = (distinct - 1).bit_length() if distinct > 1 else 0
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


def decode_body(body: bytes, n: int, cols: int, eb: float, strict: bool) -> tuple[np.ndarray, np.ndarray]:
    """Codes ``q`` (int64) and reconstruction (float32) of a version-2 body; raises on anything non-canonical."""
    pos = 0

    def take(k: int, what: str) -> bytes:
        nonlocal pos
        if len(body) - pos < k:
            raise LamValueError(f"truncated codec stream (version 2): {what} needs {k} bytes, {len(body) - pos} left")
        pos += k
        return body[pos - k : pos]

    rows = n // cols
    reps = [-1] * rows
    if cols >= ROWS_MIN:
        (distinct,) = struct.unpack("<Q", take(8, "the distinct row count"))
        if distinct > rows or (rows and not distinct):
            raise _corrupt(f"{distinct} distinct rows of {rows}")
        w = (distinct - 1).bit_length() if distinct > 1 else 0
        nbits = rows + (rows - distinct) * w
        rbits = np.unpackbits(np.frombuffer(take((nbits + 7) // 8, "the row repeats"), dtype=np.uint8)).tolist()
        bp = seen = 0
        for r in range(rows):
            bp += 1
            if rbits[bp - 1]:
                if seen == distinct:
                    raise _corrupt("more new rows than the distinct row count")
                seen += 1
                continue
            k = int("".join(map(str, rbits[bp : bp + w])) or "0", 2)
            bp += w
            if k >= seen:
                raise _corrupt(f"row {r} repeats distinct row {k}, only {seen} seen")
            reps[r] = k
        if seen != distinct or any(rbits[bp:]):
            raise _corrupt("the row repeats are inconsistent or their padding is not zero")
    n_all, n = n, cols * sum(r < 0 for r in reps)
    classes = list(take(cols, "the column classes"))
    if max(classes) > 64:
        raise _corrupt(f"column class {max(classes)} > 64")
    tables: dict[int, list[int]] = {}
    for g in sorted(set(classes)):
        (a,) = struct.unpack("<H", take(2, "a table size"))
        if a > ALPHABET:
            raise _corrupt(f"table of class {g} has {a} symbols > {ALPHABET}")
        raw = take((a + 1) // 2, "a table")
        lens = [v for byte in raw for v in (byte >> 4, byte & 15)]
        if a % 2 and lens[-1]:
            raise _corrupt("the padding nibble of a table is not zero")
        lens = lens[:a]
        if sum(2 ** (LMAX - n) for n in lens if n) > 2**LMAX:
            raise _corrupt(f"the code lengths of class {g} are not a prefix code")
        tables[g] = lens
    exc_i: list[int] = []
    exc_v = np.zeros(0, dtype=np.float32)
    if strict:
        (ne,) = struct.unpack("<Q", take(8, "the exception count"))
        if ne > n_all:
            raise _corrupt(f"{ne} exceptions for {n_all} values")
        exc_i = np.frombuffer(take(8 * ne, "the exception indices"), dtype="<u8").tolist()
        exc_v = np.frombuffer(take(4 * ne, "the exception values"), dtype="<f4").astype(np.float32)
    decoders = {g: {(n, c): s for s, (n, c) in enumerate(zip(lens, canonical_codes(lens))) if n}
                for g, lens in tables.items()}
    bits = np.unpackbits(np.frombuffer(body, dtype=np.uint8, offset=pos)).tolist()
    nbits, bp = len(bits), 0
    z = np.zeros(n, dtype=np.int64)
    for i in range(n):
        table, code, length = decoders[classes[i % cols]], 0, 0
        while (length, code) not in table:
            if length >= LMAX or bp >= nbits:
                raise _corrupt(f"value {i} has no valid code (or the bit stream is truncated)")
            code, length, bp = (code << 1) | bits[bp], length + 1, bp + 1
        sym = table[(length, code)]
        if sym < DIRECT:
            z[i] = sym
        else:
            k = sym - DIRECT + 12
            if bp + k > nbits:
                raise LamValueError("truncated codec stream (version 2): the bit stream ends inside a value")
            z[i] = int("1" + "".join(map(str, bits[bp : bp + k])), 2)
            bp += k
    if nbits - bp >= 8 or any(bits[bp:]):
        raise _corrupt("bytes or non-zero bits after the last value")
    q = np.where(z % 2 == 1, -(z >> 1) - 1, z >> 1)
    if n and int(np.abs(q).max()) > 2**31 - 1:
        raise _corrupt("a reconstructed code exceeds |q| <= 2**31 - 1")
    if row_repeats(z, cols) != [-1] * (n // cols):
        raise _corrupt("two distinct rows are equal (non-canonical row repeats)")
    if column_classes(z, cols) != classes:
        raise _corrupt("the column classes are not those of the codes (non-canonical)")
    sym, _ = symbols(z)
    col_cls = np.tile(np.array(classes, dtype=np.int64), n // cols) if n else np.zeros(0, dtype=np.int64)
    if _tables(sym, col_cls, classes) != tables:
        raise _corrupt("the code lengths are not those of the symbol counts (non-canonical)")
    with np.errstate(over="ignore"):
        rec = (q.astype(np.float64) * (2.0 * eb)).astype(np.float32)
    if n and not np.isfinite(rec).all():
        raise _corrupt("a reconstructed value overflows float32")
    first = [r for r in range(rows) if reps[r] < 0]
    pick = np.array([first[k] if k >= 0 else r for r, k in enumerate(reps)], dtype=np.int64)
    order = np.cumsum([k < 0 for k in reps]) - 1  # the distinct row of each new row
    src = np.array([order[p] for p in pick], dtype=np.int64)
    q = q.reshape(-1, cols)[src].reshape(-1) if rows else q
    rec = rec.reshape(-1, cols)[src].reshape(-1) if rows else rec
    if exc_i:
        idx = np.array(exc_i, dtype=np.int64)
        if idx.min() < 0 or idx.max() >= n_all or (np.diff(idx) <= 0).any():
            raise _corrupt("exception indices are not strictly increasing below n")
        if not np.isfinite(exc_v).all() or (exc_v == rec[idx]).any():
            raise _corrupt("an exception value is not finite or equals its reconstruction (non-canonical)")
        rec[idx] = exc_v
    return q, rec
