"""EQ1 (paper §2.1, eq. 1) in sympy, and the δ columns of Tables 3 and 23.

Run as a script (``python proofs/test_eq1_sympy.py``) or under pytest.
"""

from __future__ import annotations

import pytest
import sympy as sp

pytestmark = pytest.mark.claim("EQ1")


def identity_residual(dim: int) -> sp.Expr:
    """``||a-b||² - (2 - 2a·b) - (|a|²-1) - (|b|²-1)``, expanded: zero means the identity holds
    exactly on the unit sphere in dimension ``dim``."""
    a = sp.symbols(f"a0:{dim}", real=True)
    b = sp.symbols(f"b0:{dim}", real=True)
    sq = sum((x - y) ** 2 for x, y in zip(a, b))
    dot = sum(x * y for x, y in zip(a, b))
    na = sum(x**2 for x in a)
    nb = sum(y**2 for y in b)
    return sp.expand(sq - (2 - 2 * dot) - (na - 1) - (nb - 1))


@pytest.mark.parametrize("dim", [1, 2, 3, 5, 8])
def test_identity_on_the_unit_sphere(dim):
    """``||a-b||² = 2 - 2a·b`` whenever ``|a| = |b| = 1`` (exact polynomial identity)."""
    assert identity_residual(dim) == 0, f"identity fails in dimension {dim}"


def test_cosine_threshold_equivalence():
    """``c >= t ⟺ sqrt(2-2c) <= sqrt(2-2t)`` on [-1, 1]: ``sqrt(2-2c)`` is strictly decreasing
    (derivative ``-1/sqrt(2-2c) < 0`` for c < 1)."""
    c = sp.symbols("c", real=True)
    f = sp.sqrt(2 - 2 * c)
    df = sp.simplify(sp.diff(f, c))
    assert sp.simplify(df + 1 / sp.sqrt(2 - 2 * c)) == 0, f"derivative {df} is not -1/sqrt(2-2c)"
    assert sp.ask(sp.Q.negative(df.subs(c, sp.Rational(1, 2)))), "derivative must be negative"
    assert sp.solve(sp.Eq(f, sp.sqrt(sp.Rational(1, 10))), c) == [sp.Rational(19, 20)], "delta = sqrt(0.1) at t = 0.95"


# Table 3 (t, δ printed) and Table 23 (t, δ printed), §3.3 and App. J
TABLE3 = [("0.99", "0.1414"), ("0.98", "0.2000"), ("0.96", "0.2828"), ("0.95", "0.3162"), ("0.90", "0.4472")]
TABLE23 = [
    ("0.995", "0.1000"), ("0.990", "0.1414"), ("0.980", "0.2000"), ("0.970", "0.2449"), ("0.960", "0.2828"),
    ("0.950", "0.3162"), ("0.930", "0.3742"), ("0.900", "0.4472"), ("0.850", "0.5477"), ("0.800", "0.6325"),
    ("0.700", "0.7746"), ("0.600", "0.8944"),
]  # fmt: skip


@pytest.mark.parametrize("t, printed", TABLE3 + TABLE23)
def test_delta_columns_of_tables_3_and_23(t, printed):
    """Every printed δ is ``sqrt(2 - 2t)`` rounded half-up to 4 decimals (exact arithmetic)."""
    exact = sp.sqrt(2 - 2 * sp.Rational(t))
    rounded = sp.floor(exact * 10**4 + sp.Rational(1, 2)) / 10**4
    assert rounded == sp.Rational(printed), f"t={t}: sqrt(2-2t) = {sp.N(exact, 12)} rounds to {rounded}, table says {printed}"


if __name__ == "__main__":
    for d in (1, 2, 3, 5, 8):
        print(f"D={d}: residual {identity_residual(d)}")
    for t, printed in TABLE3 + TABLE23:
        print(f"t={t}: delta={sp.N(sp.sqrt(2 - 2 * sp.Rational(t)), 8)} printed {printed}")
