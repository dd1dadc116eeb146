"""STAB (decision-margin stability, docs/determinism.md) in sympy, plus the combinatorial step checked
exhaustively for small n.

The lemma: ``margin_i = min_{j ∈ R_i} |sq(e_i, e_j) − δ²|``; if every ``|Δsq(i, j)|, j ∈ R_i`` is
below ``margin_i``, the greedy map is unchanged. The proof has an arithmetic part (a perturbation
below the gap cannot move ``sq`` across ``δ²``; how ``|Δsq|`` is bounded by coordinate and cosine
jitter) checked here symbolically, and an induction on arrivals whose step (the decision of
arrival i depends only on the merge bits against ``R_i``) is checked exhaustively for n <= 4.

Run as a script (``python proofs/test_stab_sympy.py``) or under pytest.
"""

from __future__ import annotations

import itertools

import pytest
import sympy as sp

pytestmark = pytest.mark.claim("STAB")


def test_perturbation_below_the_gap_keeps_the_side_of_delta_squared():
    """With ``s`` the distance, ``c = δ²``, ``m = |s − c| > 0`` and ``|h| < m``: ``s + h − c`` has the
    sign of ``s − c``. Written with ``s − c = ±m`` and ``h = λm``, ``|λ| < 1``."""
    m, lam = sp.symbols("m lambda", real=True)
    below = sp.expand((-m) + lam * m)  # s - c = -m (merge side), perturbed
    above = sp.expand(m + lam * m)  # s - c = +m (no-merge side), perturbed
    assert sp.factor(below) == m * (lam - 1), f"below: {sp.factor(below)}"
    assert sp.factor(above) == m * (lam + 1), f"above: {sp.factor(above)}"
    # m > 0 and -1 < λ < 1: m(λ-1) < 0 and m(λ+1) > 0
    for v in (sp.Rational(-999, 1000), 0, sp.Rational(999, 1000)):
        assert (below.subs({m: 1, lam: v}) < 0) and (above.subs({m: 1, lam: v}) > 0), f"sign kept at λ={v}"
    assert sp.solve_univariate_inequality(lam - 1 < 0, lam, relational=False).is_superset(sp.Interval.open(-1, 1))
    assert sp.solve_univariate_inequality(lam + 1 > 0, lam, relational=False).is_superset(sp.Interval.open(-1, 1))


@pytest.mark.parametrize("dim", [1, 2, 3, 4])
def test_delta_sq_under_coordinate_perturbation(dim):
    """``sq(a+u, b+v) − sq(a, b) = 2(a−b)·(u−v) + |u−v|²`` exactly, hence
    ``|Δsq| <= 2‖a−b‖·w + w²`` with ``w = ‖u−v‖ <= 2η√D`` for a coordinate jitter η."""
    a = sp.symbols(f"a0:{dim}", real=True)
    b = sp.symbols(f"b0:{dim}", real=True)
    u = sp.symbols(f"u0:{dim}", real=True)
    v = sp.symbols(f"v0:{dim}", real=True)
    sq = sum((x - y) ** 2 for x, y in zip(a, b))
    sq2 = sum((x + p - y - q) ** 2 for x, y, p, q in zip(a, b, u, v))
    rhs = 2 * sum((x - y) * (p - q) for x, y, p, q in zip(a, b, u, v)) + sum((p - q) ** 2 for p, q in zip(u, v))
    assert sp.expand(sq2 - sq - rhs) == 0, f"identity fails in dimension {dim}"


def test_delta_sq_is_bounded_by_four_times_the_cosine_jitter():
    """``sq = a·a + b·b − 2a·b`` so ``Δsq = Δ(a·a) + Δ(b·b) − 2Δ(a·b)``; with every dot product
    moving by at most γ, the linear form attains its extremes at the vertices of the box:
    ``max |Δsq| = 4γ`` (the bound of ``lam_ref.determinism.risk_bound``), attained."""
    g = sp.symbols("gamma", positive=True)
    x, y, z = sp.symbols("x y z", real=True)
    form = x + y - 2 * z
    values = {form.subs({x: sx * g, y: sy * g, z: sz * g}) for sx, sy, sz in itertools.product((-1, 1), repeat=3)}
    assert sp.Max(*values) == 4 * g and sp.Min(*values) == -4 * g, f"extremes {values}"
    dim = 3
    a = sp.symbols(f"a0:{dim}", real=True)
    b = sp.symbols(f"b0:{dim}", real=True)
    dot = lambda p, q: sum(i * j for i, j in zip(p, q))  # noqa: E731
    assert sp.expand(sum((i - j) ** 2 for i, j in zip(a, b)) - (dot(a, a) + dot(b, b) - 2 * dot(a, b))) == 0


def greedy(bits: dict[tuple[int, int], bool], n: int) -> tuple[int, ...]:
    """The greedy rule on merge bits ``bits[(i, j)] = [sq(e_i, e_j) <= δ²]`` for ``j < i``."""
    pi, kept = [], []
    for i in range(n):
        rep = next((j for j in kept if bits[(i, j)]), i)
        pi.append(rep)
        if rep == i:
            kept.append(i)
    return tuple(pi)


@pytest.mark.parametrize("n", [1, 2, 3, 4])
def test_induction_step_exhaustively(n):
    """The induction: if two runs agree on the merge bits of every pair (i, j) with j retained
    before i *in the first run*, they have the same π, whatever the other bits are. Checked for
    every pair of bit matrices with n <= 4 arrivals (4096 pairs at n = 4)."""
    pairs = [(i, j) for i in range(n) for j in range(i)]
    patterns = [dict(zip(pairs, bs)) for bs in itertools.product((False, True), repeat=len(pairs))]
    checked = 0
    for b1 in patterns:
        pi = greedy(b1, n)
        kept_before = {i: [j for j in range(i) if pi[j] == j] for i in range(n)}
        for b2 in patterns:
            if all(b1[(i, j)] == b2[(i, j)] for i in range(n) for j in kept_before[i]):
                checked += 1
                assert greedy(b2, n) == pi, f"π differs although the bits on R_i agree: {b1} vs {b2}"
    assert checked >= len(patterns), "every pattern is compared at least with itself"


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(pytest.main([__file__, "-q"]))
