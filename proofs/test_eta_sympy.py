"""The η(κ) algebra of eq. 9 and Table 18 (App. F.5), in exact arithmetic.

``η(κ) = ρ - repairs·κ·Δ/T`` with ``Δ = 636.8`` and ``T = 9,017,033``. Table 18 prints ρ and
η(1), η(3), η(8) to 4 decimals but not the repair counts; for each row we find every integer
``repairs`` for which some ρ inside the printed ρ's rounding interval reproduces all three printed
η values, and show it is unique (1 lost line at cos >= 0.95, as §F.5 says). With those counts
the break-even κ against "ours, cos >= 0.95" reproduces the printed column, and masking k = 5
turns negative near κ = 6.5 (§F.5). :func:`lam_ref.metrics.eta` and
:func:`lam_ref.metrics.break_even_kappa` are checked against the exact values.
"""

from __future__ import annotations

from fractions import Fraction

import pytest
import sympy as sp

from lam_ref.metrics import break_even_kappa, eta

pytestmark = pytest.mark.claim("ETA")

DELTA = Fraction("636.8")
T = 9_017_033
C = DELTA / T  # η lost per repair turn (exact rational)
HALF = Fraction(1, 20000)  # half a unit in the 4th decimal

# name: (ρ, η(1), η(3), η(8), break-even κ vs ours or None)
TABLE18 = {
    "ours 0.95": ("0.2247", "0.2246", "0.2245", "0.2241", None),
    "ours 0.90": ("0.3199", "0.3141", "0.3027", "0.2741", "16.9"),
    "masking k=20": ("0.3406", "0.3097", "0.2478", "0.0932", "3.8"),
    "masking k=10": ("0.6738", "0.5884", "0.4178", "-0.0087", "5.3"),
    "masking k=5": ("0.7794", "0.6603", "0.4222", "-0.1732", "4.7"),
}


def feasible_rho(row, repairs: int) -> tuple[Fraction, Fraction] | None:
    """``[lo, hi)`` of exact ρ that round to the printed ρ and make every η(κ) round as printed."""
    rho_p, *etas, _ = row
    lo, hi = Fraction(rho_p) - HALF, Fraction(rho_p) + HALF
    for kappa, e in zip((1, 3, 8), etas):
        shift = repairs * kappa * C
        lo, hi = max(lo, Fraction(e) - HALF + shift), min(hi, Fraction(e) + HALF + shift)
    return (lo, hi) if lo < hi else None


def solve_repairs(row) -> dict[int, tuple[Fraction, Fraction]]:
    return {r: reg for r in range(0, 3000) if (reg := feasible_rho(row, r)) is not None}


@pytest.mark.parametrize("name, expected", [("ours 0.95", 1), ("ours 0.90", 81), ("masking k=20", 438), ("masking k=10", 1208), ("masking k=5", 1686)])
def test_unique_repair_counts(name, expected):
    """Exactly one integer repair count fits each printed row. Expected counts derived by hand
    from ``(ρ - η(8))/(8Δ/T)`` and ``(η(1) - η(8))/(7Δ/T)``: 0.0006/5.65e-4 ≈ 1.06 -> 1;
    0.0400/4.94e-4 ≈ 80.9 -> 81; 0.2474/5.65e-4 ≈ 437.9 -> 438; 0.6825/5.65e-4 ≈ 1208.0;
    0.9526/5.65e-4 ≈ 1686.1 (Δ/T = 7.062e-5)."""
    sols = solve_repairs(TABLE18[name])
    assert list(sols) == [expected], f"{name}: repair counts {list(sols)}"


def test_break_even_column_and_negative_crossing():
    """Break-even κ solves ``ρ_m - n_m κ c = ρ_o - n_o κ c`` (sympy); over the feasible ρ
    intervals it covers the printed value's rounding interval; metrics.break_even_kappa and
    metrics.eta agree exactly at interior points; masking k=5 crosses zero at κ ≈ 6.5."""
    rm, ro, nm, no, kap, c = sp.symbols("rho_m rho_o n_m n_o kappa c", real=True)
    formula = sp.solve(sp.Eq(rm - nm * kap * c, ro - no * kap * c), kap)[0]
    assert sp.simplify(formula - (rm - ro) / ((nm - no) * c)) == 0, f"break-even formula {formula}"
    reps = {name: solve_repairs(row) for name, row in TABLE18.items()}
    ours_n, (ours_lo, ours_hi) = next(iter(reps["ours 0.95"].items()))
    for name, row in TABLE18.items():
        printed = row[4]
        if printed is None:
            continue
        n_m, (m_lo, m_hi) = next(iter(reps[name].items()))
        lo = (m_lo - ours_hi) / ((n_m - ours_n) * C)
        hi = (m_hi - ours_lo) / ((n_m - ours_n) * C)
        p = Fraction(printed)
        assert lo < p + Fraction(1, 20) and p - Fraction(1, 20) <= hi, f"{name}: [{float(lo)}, {float(hi)}] vs {printed}"
        rho_m, rho_o = (m_lo + m_hi) / 2, (ours_lo + ours_hi) / 2
        exact = formula.subs({rm: rho_m, ro: rho_o, nm: n_m, no: ours_n, c: sp.Rational(C.numerator, C.denominator)})
        k = break_even_kappa(float(rho_m), n_m, float(rho_o), ours_n, T, 636.8)
        assert k is not None and abs(k - float(exact)) < 1e-9, f"{name}: break_even_kappa {k} != {sp.N(exact)}"
        for kappa in (1, 3, 8):
            assert abs(eta(float(rho_m), n_m, kappa, T, 636.8) - float(rho_m - n_m * kappa * C)) < 1e-12, f"{name}: eta({kappa})"
    n5, (lo5, hi5) = next(iter(reps["masking k=5"].items()))
    zero = ((lo5 + hi5) / 2) / (n5 * C)
    assert abs(zero - Fraction("6.5")) < Fraction(1, 10), f"masking k=5 crosses zero at {float(zero)}"


if __name__ == "__main__":
    for name, row in TABLE18.items():
        print(name, {r: (float(lo), float(hi)) for r, (lo, hi) in solve_repairs(row).items()})
