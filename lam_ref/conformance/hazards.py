"""Inputs at the boundaries that ports get wrong (issue 38): the data the checks and vectors share.

* SPEC §7.1 compares a line by its exact UTF-8 bytes (a 64-bit key at least): lines that collide
  under the common 32-bit string hashes (Java ``String.hashCode``, FNV-1a 32, djb2; the colliding
  pairs are computed, :data:`HASH32_COLLISIONS`), lines holding NUL and lone CR, and lines equal to
  the names a dynamic language's plain map already holds (JavaScript ``Object.prototype``, Python
  dunders) are ordinary lines (check ``lines.key_collisions``; vectors flagged ``HashCollision32``,
  ``NulInLine``, ``LoneCR``, ``PrototypeName`` in ``l0.json`` and ``l0-stubs.json``);
* docs/conformance.md §6: request ids are echoed exactly, past 2²⁴ (where a float32 rounds) and
  past 2³² (where a 32-bit integer wraps) up to 2⁵³ - 1 (check ``substitute.request_ids``).
"""

from __future__ import annotations

__all__ = [
    "EXACT_TIES",
    "HASH32",
    "HASH32_COLLISIONS",
    "PROTOTYPE_NAMES",
    "REQUEST_IDS",
    "djb2",
    "fnv1a32",
    "java_hash",
    "l0_key_cases",
]


# -------------------------------------------------------------------------------------------
# 32-bit string hashes, as ports write them, and lines that collide under each
# -------------------------------------------------------------------------------------------
def java_hash(line: str) -> int:
    """Java's ``String.hashCode`` (over UTF-16 code units, ``h = 31 h + c`` mod 2³²)."""
    raw = line.encode("utf-16-le", "surrogatepass")
    h = 0
    for k in range(0, len(raw), 2):
        h = (31 * h + int.from_bytes(raw[k : k + 2], "little")) & 0xFFFFFFFF
    return h


def fnv1a32(line: str) -> int:
    """FNV-1a, 32 bits, over the UTF-8 bytes."""
    h = 0x811C9DC5
    for b in line.encode("utf-8", "surrogatepass"):
        h = ((h ^ b) * 0x01000193) & 0xFFFFFFFF
    return h


def djb2(line: str) -> int:
    """Bernstein's djb2 (``h = 33 h + c`` from 5381, mod 2³²) over the UTF-8 bytes."""
    h = 5381
    for b in line.encode("utf-8", "surrogatepass"):
        h = (h * 33 + b) & 0xFFFFFFFF
    return h


#: Distinct lines with equal 32-bit hashes (found by a birthday search over random 12-character
#: lines for FNV-1a and djb2; ``tests/conformance/test_outsider.py`` recomputes every collision).
HASH32_COLLISIONS: dict[str, tuple[tuple[str, ...], ...]] = {
    "java": (("Aa", "BB"), ("AaAa", "BBBB", "AaBB", "BBAa")),
    "fnv1a32": (("m r03 89li1t", "h4c1zu0i yxx"),),
    "djb2": (("Ez", "FY"), ("rk0i0e57jcsu", "c3de7q0x0jr1")),
}
#: The hash functions by the names of :data:`HASH32_COLLISIONS`.
HASH32 = {"java": java_hash, "fnv1a32": fnv1a32, "djb2": djb2}

#: Names a plain JavaScript object or a Python object already holds: a seen-set written as
#: ``const seen = {}; if (seen[line]) ...`` or ``hasattr`` drops such a line on its first occurrence.
PROTOTYPE_NAMES: tuple[str, ...] = (
    "constructor", "__proto__", "toString", "toLocaleString", "hasOwnProperty", "isPrototypeOf",
    "propertyIsEnumerable", "valueOf", "__defineGetter__", "__defineSetter__", "__lookupGetter__",
    "__lookupSetter__", "__init__", "__class__", "__dict__", "__hash__", "__eq__", "__len__", "__doc__",
    "__module__", "__getattribute__",
)


def l0_key_cases() -> list[tuple[str, list[str], list[str]]]:
    """(label, records, vector flags) for SPEC §7.1's key: every line distinct by its bytes is kept."""
    cases: list[tuple[str, list[str], list[str]]] = []
    for name, groups in HASH32_COLLISIONS.items():
        for group in groups:
            first = list(group)
            cases.append((f"lines with one {name} 32-bit hash are different lines: {', '.join(map(repr, group))}",
                          ["\n".join(first), "\n".join(first[::-1] + first)], ["HashCollision32"]))
    cases += [
        ("a NUL inside a line: 'a\\0b' and 'a\\0c' differ, and both differ from 'a'",
         ["a\x00b\na\x00c\na", "a\x00c\na\x00b\na\x00"], ["NulInLine"]),
        ("lines of one and two NULs, and a NUL at the start", ["\x00\n\x00\x00\n\x00x", "\x00x\n\x00\x00\n\x00\nx"], ["NulInLine"]),
        ("a lone CR: 'p\\rq', 'p\\r', '\\rq' and 'p' are four lines", ["p\rq\np\r\n\rq\np", "p\nq\np\rq\n\rq\np\r"], ["LoneCR"]),
        ("lines equal to JavaScript Object.prototype and Python dunder names are ordinary lines",
         ["\n".join(PROTOTYPE_NAMES), "\n".join(PROTOTYPE_NAMES[::-1])], ["PrototypeName"]),
        ("prototype names next to their near twins", ["constructor\nConstructor\n__proto__\n__proto", "__proto\nconstructor "],
         ["PrototypeName"]),
    ]
    return cases



#: Request ids the exec checks send (docs/conformance.md §6: integers in [0, 2⁵³ - 1], echoed exactly):
#: 2^k ± 1 for the widths ports use (8, 16, 24: float32's mantissa, 31, 32), and 2⁵³ - 1, the largest
#: integer every JSON reader holds exactly.
REQUEST_IDS = tuple(n for k in (8, 16, 24, 31, 32) for n in (2**k - 1, 2**k + 1)) + (2**53 - 1,)


_H = 0.5

#: Exactly representable cases: (name, rows, t, π). Every sq and δ² here is exact in binary.
EXACT_TIES: list[tuple[str, list[list[float]], float, list[int]]] = [
    ("SPEC §2 example: (1,0), (0,1) at t=0: sq = 2 = δ²", [[1, 0], [0, 1]], 0.0, [0, 0]),
    ("(1,0), (0,1) at t=0.5: sq = 2 > δ² = 1", [[1, 0], [0, 1]], 0.5, [0, 1]),
    ("antipodes at t=-1: sq = 4 = δ²", [[1, 0], [-1, 0]], -1.0, [0, 0]),
    ("antipodes at t=0: sq = 4 > δ² = 2", [[1, 0], [-1, 0]], 0.0, [0, 1]),
    ("three axes at t=0: sq = 2 = δ² for every pair", [[1, 0, 0], [0, 1, 0], [0, 0, 1]], 0.0, [0, 0, 0]),
    ("duplicates at t=1: sq = 0 = δ²", [[0, 1, 0], [1, 0, 0], [0, 1, 0]], 1.0, [0, 1, 0]),
    ("half vectors at t=0.5: sq = 1 = δ²", [[_H, _H, _H, _H], [_H, _H, _H, -_H]], 0.5, [0, 0]),
    ("half vectors at t=0.75: sq = 1 > δ² = 0.5", [[_H, _H, _H, _H], [_H, _H, _H, -_H]], 0.75, [0, 1]),
    (
        "two retained at sq = 1 = δ² from the arrival: the lower id wins",
        [[_H, _H, _H, _H], [_H, -_H, -_H, _H], [_H, _H, -_H, _H]],
        0.5,
        [0, 1, 0],
    ),
    ("a tie with a dropped chunk does not count: only retained chunks represent", [[1, 0], [0, 1], [-1, 0]], 0.0, [0, 0, 2]),
]
