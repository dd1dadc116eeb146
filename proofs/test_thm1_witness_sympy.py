"""Theorem 1's tightness witness (App. C.2) and the HULL 60° example, in exact arithmetic."""

from __future__ import annotations

import pytest
import sympy as sp

theta = sp.symbols("theta", positive=True)


@pytest.mark.claim("THM1")
def test_witness_attains_delta():
    """``a = (1, 0)``, ``b = (cos θ, sin θ)``, ``δ = |a - b| = 2 sin(θ/2)``, ``q = (a - b)/δ``:
    ``|q| = 1`` and ``max_S q·x - max_R q·z = q·a - q·b = δ`` for every θ in (0, π]."""
    a = sp.Matrix([1, 0])
    b = sp.Matrix([sp.cos(theta), sp.sin(theta)])
    delta = sp.sqrt(((a - b).T * (a - b))[0])
    assert sp.simplify(delta**2 - (2 * sp.sin(theta / 2)) ** 2) == 0, "delta = 2 sin(theta/2)"
    q = (a - b) / delta
    assert sp.simplify((q.T * q)[0] - 1) == 0, "q is a unit vector"
    gap = sp.simplify((q.T * a)[0] - (q.T * b)[0])
    assert sp.simplify(gap - delta) == 0, f"deficit {gap} != delta"
    # q·a is the maximum over S = {a, b}: q·a - q·b = δ > 0
    assert sp.simplify(gap.subs(theta, sp.pi / 3) - 1) == 0, "at 60° the chord is 1"


@pytest.mark.claim("THM1")
def test_cauchy_schwarz_step():
    """The proof's step ``q·(x - π(x)) <= |x - π(x)|`` for unit q: in 2-D the gap is
    ``|d|(1 - cos φ) >= 0`` where φ is the angle between q and d."""
    phi, r = sp.symbols("phi r", nonnegative=True)
    q = sp.Matrix([sp.cos(phi), sp.sin(phi)])
    d = sp.Matrix([r, 0])
    gap = sp.simplify(r - (q.T * d)[0])
    assert sp.simplify(gap - r * (1 - sp.cos(phi))) == 0, f"gap {gap}"


@pytest.mark.claim("HULL")
def test_sixty_degree_example():
    """a, c at ∓30°, b at 0°: ``dist(b, conv{a, c}) = 1 - cos 30° = 1 - √3/2 ≈ 0.1340``; every
    chord is at least ``2 sin 15° = (√6 - √2)/2 ≈ 0.5176 > δ = sqrt(1/10)``, so ``N(S, δ) = 3``."""
    a = sp.Matrix([sp.cos(sp.pi / 6), -sp.sin(sp.pi / 6)])
    c = sp.Matrix([sp.cos(sp.pi / 6), sp.sin(sp.pi / 6)])
    b = sp.Matrix([1, 0])
    lam = sp.symbols("lam", real=True)
    p = lam * a + (1 - lam) * c
    f = sp.expand(((b - p).T * (b - p))[0])
    lam_star = sp.solve(sp.diff(f, lam), lam)[0]
    assert lam_star == sp.Rational(1, 2), f"nearest point weight {lam_star}"
    dist = sp.sqrt(sp.simplify(f.subs(lam, lam_star)))
    assert sp.simplify(dist - (1 - sp.sqrt(3) / 2)) == 0, f"distance {dist}"
    chord = sp.sqrt(sp.simplify(((a - b).T * (a - b))[0]))
    assert sp.simplify(chord**2 - ((sp.sqrt(6) - sp.sqrt(2)) / 2) ** 2) == 0, "chord 2 sin 15°"
    delta = sp.sqrt(sp.Rational(1, 10))
    assert sp.N(dist) < sp.N(delta) < sp.N(chord), "0.134 < 0.316 < 0.518"
    assert abs(sp.N(dist, 20) - sp.Float("0.13397459621556135324")) < 1e-18, "1 - cos 30° ≈ 0.134"


if __name__ == "__main__":
    test_witness_attains_delta()
    test_sixty_degree_example()
    print("THM1 witness and 60° example verified")
