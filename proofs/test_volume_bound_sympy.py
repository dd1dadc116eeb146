"""The volume bound on packings quoted after Theorem 2 (App. C.3): a δ-packing of the unit
sphere in R^D has ``log2 M <= D log2(1 + 2/δ)``; at D = 768, δ = 0.316 that is ≈ 2,207 bits
(the paper writes ≈ 2^2200)."""

from __future__ import annotations

import pytest
import sympy as sp

pytestmark = pytest.mark.claim("PROP2")

D, delta = sp.symbols("D delta", positive=True)


def test_volume_argument_algebra():
    """Disjoint balls of radius δ/2 around packing points fit in the ball of radius 1 + δ/2:
    ``M (δ/2)^D <= (1 + δ/2)^D`` gives ``log2 M <= D log2((1 + δ/2)/(δ/2)) = D log2(1 + 2/δ)``."""
    ratio = (1 + delta / 2) / (delta / 2)
    assert sp.simplify(ratio - (1 + 2 / delta)) == 0, "ratio is 1 + 2/delta"


def test_bits_at_768_and_0316():
    """``768 log2(1 + 2/0.316) = 2207.0`` (to 0.1), and with δ = sqrt(0.1) exactly 2206.3: both
    "about 2,207" and within 0.35% of the paper's 2^2200."""
    bits = sp.N(768 * sp.log(1 + 2 / sp.Rational("0.316"), 2), 30)
    assert abs(bits - 2207) < 0.1, f"bits {bits}"
    bits_exact = sp.N(768 * sp.log(1 + 2 / sp.sqrt(sp.Rational(1, 10)), 2), 30)
    assert abs(bits_exact - sp.Float("2206.3")) < 0.05, f"bits at sqrt(0.1): {bits_exact}"
    assert abs(bits - 2200) / 2200 < 0.0035, "the paper's 2^2200 is a rounding of 2207"


if __name__ == "__main__":
    print("bits:", sp.N(768 * sp.log(1 + 2 / sp.Rational("0.316"), 2), 10))
