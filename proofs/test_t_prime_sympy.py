"""THM2's reparameterisation ``sqrt(2-2t') = 2 sqrt(2-2t) ⟺ t' = 4t - 3`` (App. C.3), the
radius-δ/2 threshold of Proposition 2, and Table 23's dash rule, in sympy."""

from __future__ import annotations

import pytest
import sympy as sp

from lam_ref.covering import t_half
from lam_ref.geometry import t_prime

t, tp = sp.symbols("t tp", real=True)


@pytest.mark.claim("THM2")
def test_t_prime_solves_twice_the_radius():
    """Solving ``sqrt(2-2t') = 2·sqrt(2-2t)`` for ``t'`` gives exactly ``4t - 3``, and
    :func:`lam_ref.geometry.t_prime` agrees at sample points (exact rationals)."""
    sol = sp.solve(sp.Eq(sp.sqrt(2 - 2 * tp), 2 * sp.sqrt(2 - 2 * t)), tp)
    assert sol == [4 * t - 3], f"solution {sol}"
    for v in ("0.99", "0.95", "0.9", "0.5"):
        assert sp.Rational(t_prime(float(v))).limit_denominator(10**6) == 4 * sp.Rational(v) - 3, f"t_prime({v})"


@pytest.mark.claim("PROP2")
def test_half_radius_threshold():
    """Radius ``δ/2`` (Proposition 2's right-hand side) is ``t_h = (3 + t)/4``."""
    sol = sp.solve(sp.Eq(sp.sqrt(2 - 2 * tp), sp.sqrt(2 - 2 * t) / 2), tp)
    assert sol == [(t + 3) / 4], f"solution {sol}"
    assert sp.Rational(t_half(0.95)).limit_denominator(10**6) == (3 + sp.Rational("0.95")) / 4, "t_half(0.95)"


@pytest.mark.claim("COR3")
def test_table23_dash_rule():
    """Table 23 dashes the 2δ column when ``t' = 4t - 3 < 0.2``, i.e. exactly when ``t < 0.8``:
    the rows 0.7 and 0.6 (dashed) and not 0.8 (printed 9.23)."""
    region = sp.solve_univariate_inequality(4 * t - 3 < sp.Rational(1, 5), t, relational=False)
    assert region == sp.Interval.open(-sp.oo, sp.Rational(4, 5)), f"region {region}"
    rows = ["0.995", "0.990", "0.980", "0.970", "0.960", "0.950", "0.930", "0.900", "0.850", "0.800", "0.700", "0.600"]
    dashed = [r for r in rows if sp.Rational(r) in region]
    assert dashed == ["0.700", "0.600"], f"dashed rows {dashed}"


if __name__ == "__main__":
    print("t' =", sp.solve(sp.Eq(sp.sqrt(2 - 2 * tp), 2 * sp.sqrt(2 - 2 * t)), tp))
    print("t_half =", sp.solve(sp.Eq(sp.sqrt(2 - 2 * tp), sp.sqrt(2 - 2 * t) / 2), tp))
