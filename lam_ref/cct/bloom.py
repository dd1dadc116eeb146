r"""Bloom filters and the membership error curves of Appendix A (claim ``CCT-BLOOM``).

A Bloom filter of ``m`` bits with ``k`` hash functions over ``N`` members has false-positive rate
``(1 - (1 - 1/m)^{kN})^k`` for ideal hashes, ``≈ (1 - e^{-kN/m})^k``; with ``b = m/N`` bits per item
the approximation is least at ``k = b·ln 2`` where it equals ``2^{-b ln 2} = e^{-(ln 2)^2 b}``
(checked symbolically in ``proofs/test_cct_bloom_sympy.py``). On the case study's workload (half
the queries members, half not) a Bloom filter of ``B`` bits errs ``½·e^{-(ln 2)^2 B/N}`` and a
no-false-negative tester errs at least ``½·2^{-B/N}`` (Carter et al.; Pagh, Segev and Wieder).

Hashing: ``k`` indices by double hashing ``((h1 + i·h2) mod 2^64) mod m`` from the two 64-bit
halves of XXH3-128 of the UTF-8 item with a per-filter seed (``h2`` forced odd). ``k`` is capped
at :data:`MAX_K` (the cap only binds where the false-positive rate is below ``2^-64``).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import xxhash

from ..geometry import LamValueError, validate_positive_int

__all__ = [
    "BloomFilter",
    "bloom_error_curve",
    "bloom_fpr",
    "bloom_fpr_exact",
    "membership_lower_bound",
    "item_hashes",
    "optimal_k",
]

#: Upper limit on the number of hash functions chosen by :meth:`BloomFilter.for_budget`.
MAX_K = 64
_MASK = np.uint64(0xFFFFFFFFFFFFFFFF)


def item_hashes(items: Any, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """``(h1, h2)`` as uint64 arrays: the halves of XXH3-128 of each UTF-8 item (``h2`` odd)."""
    hs = [xxhash.xxh3_128_intdigest(str(it).encode("utf-8", errors="surrogatepass"), seed=int(seed)) for it in items]
    h1 = np.array([h & 0xFFFFFFFFFFFFFFFF for h in hs], dtype=np.uint64)
    h2 = np.array([(h >> 64) | 1 for h in hs], dtype=np.uint64)
    return h1, h2


def _pos(value: Any, name: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise LamValueError(f"{name} must be a number > 0, got {value!r}")
    v = float(value)
    if not math.isfinite(v) or v <= 0:
        raise LamValueError(f"{name} must be a finite number > 0, got {value!r}")
    return v


def bloom_fpr(m: float, n: float, k: float) -> float:
    """``(1 - e^{-kn/m})^k``: the standard approximation of a Bloom filter's false-positive rate."""
    m, k = _pos(m, "m"), _pos(k, "k")
    n = float(n) if n == 0 else _pos(n, "n")
    return float((1.0 - math.exp(-k * n / m)) ** k)


def bloom_fpr_exact(m: int, n: int, k: int) -> float:
    """``(1 - (1 - 1/m)^{kn})^k``: the false-positive rate with ideal independent hashes (bits set
    by ``kn`` uniform throws; the usual approximation of independent bit events)."""
    m = validate_positive_int(m, "m")
    k = validate_positive_int(k, "k")
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 0:
        raise LamValueError(f"n must be an integer >= 0, got {n!r}")
    return float((1.0 - (1.0 - 1.0 / m) ** (k * int(n))) ** k)


def optimal_k(bits_per_item: float) -> float:
    """``k* = b·ln 2`` (real-valued optimum of :func:`bloom_fpr` over ``k``)."""
    return _pos(bits_per_item, "bits_per_item") * math.log(2.0)


def bloom_error_curve(budget_bits: Any, n: int) -> np.ndarray:
    """``½·e^{-(ln 2)^2 B/N}``: error of an optimal Bloom filter on half-member query sets (App. A)."""
    b = np.asarray(budget_bits, dtype=np.float64)
    if np.any(b < 0) or not np.all(np.isfinite(b)):
        raise LamValueError("budget_bits must be finite and >= 0")
    return 0.5 * np.exp(-(math.log(2.0) ** 2) * b / validate_positive_int(n, "n"))


def membership_lower_bound(budget_bits: Any, n: int) -> np.ndarray:
    """``½·2^{-B/N}``: the information-theoretic floor for no-false-negative testers (App. A)."""
    b = np.asarray(budget_bits, dtype=np.float64)
    if np.any(b < 0) or not np.all(np.isfinite(b)):
        raise LamValueError("budget_bits must be finite and >= 0")
    return 0.5 * np.exp2(-b / validate_positive_int(n, "n"))


class BloomFilter:
    """A Bloom filter of ``m`` bits and ``k`` hash functions (``seed`` selects the hash family)."""

    def __init__(self, m: int, k: int, seed: int = 0) -> None:
        self.m = validate_positive_int(m, "m")
        self.k = validate_positive_int(k, "k")
        self.seed = int(seed)
        self.bits = np.zeros(self.m, dtype=bool)

    @classmethod
    def for_budget(cls, budget_bits: int, n: int, seed: int = 0) -> BloomFilter:
        """``m = budget`` bits and ``k = max(1, round(b·ln 2))`` with ``b = m/n`` (:func:`optimal_k`)."""
        m = validate_positive_int(budget_bits, "budget_bits")
        k = max(1, min(MAX_K, round(optimal_k(m / validate_positive_int(n, "n")))))
        return cls(m, k, seed)

    def _index_matrix(self, h1: np.ndarray, h2: np.ndarray) -> np.ndarray:
        i = np.arange(self.k, dtype=np.uint64)
        with np.errstate(over="ignore"):
            return ((h1[:, None] + i[None, :] * h2[:, None]) % np.uint64(self.m)).astype(np.int64)

    def add_hashes(self, h1: np.ndarray, h2: np.ndarray) -> BloomFilter:
        """Insert items given by :func:`item_hashes` (same ``seed``)."""
        self.bits[self._index_matrix(h1, h2).ravel()] = True
        return self

    def contains_hashes(self, h1: np.ndarray, h2: np.ndarray) -> np.ndarray:
        """Membership answers for items given by :func:`item_hashes` (same ``seed``)."""
        return self.bits[self._index_matrix(h1, h2)].all(axis=1)

    def update(self, items: Any) -> BloomFilter:
        """Insert ``items`` (strings)."""
        return self.add_hashes(*item_hashes(list(items), self.seed))

    def add(self, item: str) -> None:
        self.update([item])

    def __contains__(self, item: str) -> bool:
        return bool(self.contains_hashes(*item_hashes([item], self.seed))[0])

    def to_bytes(self) -> bytes:
        """The bit array, packed (the message a GEN condenser sends)."""
        return np.packbits(self.bits).tobytes()
