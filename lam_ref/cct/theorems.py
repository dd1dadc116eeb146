r"""Closed forms of Context Compaction Theory's separations, in exact arithmetic.

* Theorem 3 (§4.2, claim ``CCT-THM3``): ``n = 2^k``, ``k >= 2``, items of ``log2 n`` bits, one query
  "output X". Zero error: GEN needs ``n`` bits, SELECT ``n·log2 n``. For ``ε > 0`` (ours, checked
  by LP up to ``n = 8``):

  - GEN: a deterministic protocol with ``m = 2^{B+1} - 1`` messages is right on at most ``m`` inputs,
    and public coins spread that evenly, so the least worst-case error is
    ``max(0, 1 - (2^{B+1} - 1)/2^n)`` and the least budget at error ``ε`` is ``⌊log2⌈(1-ε)2^n⌉⌋``;
  - SELECT: with ``j = ⌊B / log2 n⌋`` items retained a deterministic selector is right on at most
    ``A(j) = Σ_{i<=j} C(n, i)`` inputs (one per retained subset), so the least worst-case error is
    ``1 - A(j)/2^n`` and the least budget at error ``ε`` is ``log2 n · min{j : A(j) >= (1-ε)2^n}``.

* The count query (claim ``CCT-COUNT``): ``n + 1`` distinct rows, so zero-error GEN needs
  ``⌈log2(n+2)⌉ - 1`` bits while zero-error SELECT must keep every item (induction on ``|X|``:
  every proper subset already decodes to its own smaller count).
* The Kraft generalization (claim ``CCT-KRAFT``): Theorem 3's lower bound forces ``S(Y) = Y``, so
  zero-error SELECT costs ``Σ_i s(x_i)``; if the sizes are lengths of a uniquely decodable code
  (Kraft: ``Σ 2^{-s_i} <= 1``) then ``Σ s_i >= n·log2 n`` (Gibbs), for every ``n``, not only powers
  of two — while GEN still needs only ``n`` bits.
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Any

import numpy as np

from ..geometry import LamValueError
from .games import validate_bits_budget, validate_budget

__all__ = [
    "count_gen_budget",
    "kraft_lower_bound",
    "kraft_sum",
    "subsets_up_to",
    "thm3_gen_budget",
    "thm3_gen_error",
    "thm3_item_bits",
    "thm3_select_budget",
    "thm3_select_error",
    "validate_epsilon",
]


def thm3_item_bits(n: Any) -> int:
    """``k = log2 n`` for ``n = 2^k`` with ``k >= 2`` (Theorem 3); anything else raises."""
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 4 or (int(n) & (int(n) - 1)):
        raise LamValueError(f"n must be a power of two 2^k with k >= 2 (Theorem 3), got n = {n!r}")
    return int(n).bit_length() - 1


def validate_epsilon(eps: Any, name: str = "eps") -> Fraction:
    """``ε`` as an exact fraction, or :class:`LamValueError` unless ``0 <= ε < 1``."""
    if isinstance(eps, bool) or not isinstance(eps, (int, float, Fraction, np.integer, np.floating)):
        raise LamValueError(f"{name} must be a number in [0, 1), got {eps!r}")
    if isinstance(eps, (float, np.floating)) and not math.isfinite(float(eps)):
        raise LamValueError(f"{name} must be a finite number in [0, 1), got {eps!r}")
    e = Fraction(eps) if not isinstance(eps, (np.floating,)) else Fraction(float(eps))
    if not 0 <= e < 1:
        raise LamValueError(f"{name} must be in [0, 1), got {eps!r}")
    return e


def subsets_up_to(n: int, j: int) -> int:
    """``A(j) = Σ_{i<=j} C(n, i)``: the subsets of ``Y`` of at most ``j`` items."""
    return sum(math.comb(n, i) for i in range(0, min(max(j, -1), n) + 1))


def thm3_gen_error(n: int, budget: int) -> Fraction:
    """Least worst-case (= uniform-distributional) error of GEN at ``budget`` bits on "output X"."""
    thm3_item_bits(n)
    m = (1 << (validate_bits_budget(budget) + 1)) - 1
    return max(Fraction(0), 1 - Fraction(m, 1 << n))


def thm3_select_error(n: int, budget: float) -> Fraction:
    """Least worst-case error of SELECT within ``budget`` bits (items of ``log2 n`` bits)."""
    k = thm3_item_bits(n)
    j = math.floor(Fraction(validate_budget(budget)) / k)
    return 1 - Fraction(subsets_up_to(n, j), 1 << n)


def thm3_gen_budget(n: int, eps: Any = 0) -> int:
    """Least GEN budget (bits) at worst-case error ``<= ε``: ``⌊log2⌈(1-ε)2^n⌉⌋`` (``n`` at ``ε = 0``)."""
    thm3_item_bits(n)
    need = math.ceil((1 - validate_epsilon(eps)) * (1 << n))
    return need.bit_length() - 1


def thm3_select_budget(n: int, eps: Any = 0) -> int:
    """Least SELECT budget (bits) at worst-case error ``<= ε`` (``n·log2 n`` at ``ε = 0``)."""
    k = thm3_item_bits(n)
    need = (1 - validate_epsilon(eps)) * (1 << n)
    total, c = 0, 1  # A(j) summed as j grows, C(n, j) updated in place: O(n) big-integer steps, not O(n²)
    for j in range(n + 1):
        total += c
        if total >= need:
            return k * j
        c = c * (n - j) // (j + 1)
    return k * n  # unreachable: A(n) = 2^n >= need


def count_gen_budget(n: int) -> int:
    """Zero-error GEN budget of the count query: ``⌈log2(n+2)⌉ - 1`` (``n + 1`` distinct rows)."""
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 0:
        raise LamValueError(f"n must be an integer >= 0, got {n!r}")
    return (int(n) + 1).bit_length() - 1


def kraft_sum(sizes: Any) -> float:
    """``Σ 2^{-s_i}`` (Kraft–McMillan: at most 1 for the lengths of a uniquely decodable code)."""
    s = np.asarray(sizes, dtype=np.float64)
    if s.ndim != 1 or s.size == 0 or not np.all(np.isfinite(s)) or s.min() <= 0:
        raise LamValueError(f"sizes must be a non-empty list of finite numbers > 0, got {sizes!r}")
    return float(np.sum(np.exp2(-s)))


def kraft_lower_bound(n: int) -> float:
    """``n·log2 n``: the least ``Σ s_i`` over sizes with ``Σ 2^{-s_i} <= 1`` (equality at ``s_i = log2 n``)."""
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 1:
        raise LamValueError(f"n must be an integer >= 1, got {n!r}")
    return float(n * math.log2(n))
