"""CCT-BLOOM (Context Compaction Theory, App. A): for a Bloom filter of m bits, N members and k
hash functions the false-positive rate f(k) = (1 - e^{-kN/m})^k is least at k = b·ln 2 (b = m/N),
where f = 2^{-b ln 2} = e^{-(ln 2)^2 b}; the half-member error is then ½·e^{-(ln 2)^2 B/N}.

Symbolically (sympy): d/dk ln f vanishes at k = b ln 2, ln f is convex there, and the minimum is
(1/2)^{b ln 2}. Numerically: simulated filters (lam_ref.cct.bloom.BloomFilter, xxhash double
hashing) match the exact formula (1 - (1 - 1/m)^{kN})^k within 99.9 % Wilson intervals, and a
wrong k (twice the optimum) is measurably worse than k*."""

from __future__ import annotations

import math

import numpy as np
import pytest
import sympy as sp

from lam_ref.cct.bloom import (
    BloomFilter,
    bloom_error_curve,
    bloom_fpr,
    bloom_fpr_exact,
    item_hashes,
    membership_lower_bound,
    optimal_k,
)
from lam_ref.cct.membership import wilson

pytestmark = pytest.mark.claim("CCT-BLOOM")

k, b = sp.symbols("k b", positive=True)
LOG_F = k * sp.log(1 - sp.exp(-k / b))


def test_stationary_point_is_b_ln2():
    d = sp.diff(LOG_F, k)
    at = sp.simplify(d.subs(k, b * sp.log(2)))
    assert at == 0, f"d/dk ln f at k = b ln 2 must vanish, got {at}"


def test_minimum_value_and_convexity():
    kstar = b * sp.log(2)
    log_fmin = LOG_F.subs(k, kstar)
    assert sp.simplify(log_fmin + sp.log(2) ** 2 * b) == 0, f"ln f(k*) = {log_fmin}, not -(ln 2)^2 b"
    assert sp.simplify(log_fmin - kstar * sp.log(sp.Rational(1, 2))) == 0, "f(k*) = (1/2)^{k*}"
    second = sp.diff(LOG_F, k, 2).subs(k, kstar)
    for bv in (1, 2, 5, 10, 40):
        assert float(second.subs(b, bv)) > 0, f"ln f must be convex at k* for b = {bv}"


def test_numeric_helpers_agree_with_the_algebra():
    for bits in (1.0, 4.0, 9.5):
        ks = optimal_k(bits)
        assert ks == pytest.approx(bits * math.log(2)), "optimal_k = b ln 2"
        assert bloom_fpr(bits * 1000, 1000, ks) == pytest.approx(2 ** (-ks)), "f(k*) = 2^-k*"
        assert bloom_fpr(bits * 1000, 1000, ks) <= bloom_fpr(bits * 1000, 1000, ks * 1.3), "k* beats 1.3 k*"
    curve = bloom_error_curve(np.array([0.0, 15000.0]), 15000)
    assert curve[0] == 0.5 and curve[1] == pytest.approx(0.5 * math.exp(-math.log(2) ** 2)), "½e^{-(ln2)^2 B/N}"
    assert float(membership_lower_bound(15000.0, 15000)) == pytest.approx(0.25), "½·2^{-1} at one bit per item"
    assert np.all(curve >= membership_lower_bound(np.array([0.0, 15000.0]), 15000)), "Bloom above the floor"


@pytest.mark.parametrize("bits_per_item,n", [(4, 3000), (8, 3000), (10, 1000)])
def test_simulated_false_positive_rate(bits_per_item, n):
    m = bits_per_item * n
    f = BloomFilter.for_budget(m, n, seed=7).update([f"member-{i}" for i in range(n)])
    assert f.k == round(optimal_k(bits_per_item)), "for_budget picks round(b ln 2)"
    probes = 200_000
    hits = int(f.contains_hashes(*item_hashes([f"probe-{i}" for i in range(probes)], 7)).sum())
    lo, hi = wilson(hits, probes, z=3.29)
    want = bloom_fpr_exact(m, n, f.k)
    assert lo <= want <= hi, f"simulated FPR {hits / probes:.5f} CI [{lo:.5f}, {hi:.5f}] excludes formula {want:.5f}"
    assert all(f"member-{i}" in f for i in range(0, n, 97)), "no false negatives"


def test_twice_the_optimal_k_is_worse():
    n, m = 2000, 16000
    probes = [f"p{i}" for i in range(100_000)]
    rates = {}
    for kk in (round(optimal_k(8)), 2 * round(optimal_k(8))):
        f = BloomFilter(m, kk, seed=3).update([f"m{i}" for i in range(n)])
        rates[kk] = f.contains_hashes(*item_hashes(probes, 3)).mean()
    lo_opt = sorted(rates)[0]
    assert rates[lo_opt] < rates[2 * lo_opt], f"k*={lo_opt} must beat 2k*: {rates}"
