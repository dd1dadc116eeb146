"""Hypothesis properties of the metrics (SPEC §12), each checked against a brute-force oracle or
an independent code path of the foundation."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
from hypothesis import assume, given
from hypothesis import strategies as st

from lam_ref.metrics import (
    OperatingPoint,
    ecr_at,
    merge_distance_stats,
    merge_distances,
    recall_at_k_per_query,
    weighted_quantile,
)
from lam_ref.substitution import oracle


@given(
    pairs=st.lists(st.tuples(st.floats(0, 2, allow_nan=False), st.integers(0, 6)), min_size=1, max_size=12),
    q=st.one_of(
        st.sampled_from([Fraction(0), Fraction(1, 4), Fraction(1, 3), Fraction(1, 2), Fraction(99, 100), Fraction(1)]),
        st.fractions(min_value=0, max_value=1, max_denominator=100),
    ),
)
def test_weighted_quantile_equals_expanded_sample(pairs, q):
    """Claim (Table 11, "token-weighted"): the weighted quantile is the order statistic of the
    sample in which each distance is repeated once per token: element ``max(1, ceil(q·W))`` (1-based).

    Shown to fail on: comparing cumulative weight with ``>`` instead of ``>=`` (the median of
    [a, b] becomes b), and on letting a zero-weight value answer (``q = 0`` then returns it).
    """
    values = [v for v, _ in pairs]
    weights = [w for _, w in pairs]
    assume(sum(weights) > 0)
    expanded = sorted(v for v, w in pairs for _ in range(w))
    k = max(1, math.ceil(q * len(expanded)))
    assert weighted_quantile(values, weights, q) == expanded[k - 1], f"q={q}: expected {expanded[k - 1]}"


@given(
    points=st.lists(
        st.tuples(st.floats(-0.5, 1, allow_nan=False), st.integers(0, 50), st.integers(0, 50)), min_size=1, max_size=8
    ),
    taus=st.lists(st.fractions(min_value=0, max_value=1, max_denominator=60), min_size=2, max_size=5),
)
def test_ecr_is_inclusive_and_monotone(points, taus):
    """Claim (eq. 8): each point qualifies at its own micro retention (``>=``, inclusive), and
    ``ECR@τ`` is non-increasing in ``τ`` with ``ECR@0 = max ρ``.

    Shown to fail on: a strict comparison ``micro > τ`` (a point does not qualify at its own micro).
    """
    pts = [OperatingPoint(f"m{i}", rho, min(k, w), w) for i, (rho, k, w) in enumerate(points)]
    for m in pts:
        got = ecr_at(pts, m.micro)
        assert got is not None and got >= m.rho, f"{m.label} must qualify at its own micro {m.micro}"
    assert ecr_at(pts, 0) == max(m.rho for m in pts), "ECR@0 is the unconstrained maximum"
    values = [ecr_at(pts, t) for t in sorted(taus)]
    for lo, hi in zip(values, values[1:]):
        assert hi is None or (lo is not None and hi <= lo), f"ECR not monotone over {sorted(taus)}: {values}"
    assert all(isinstance(m.micro, Fraction) for m in pts), "micro must be exact"


@given(seed=st.integers(0, 2**32 - 1), n=st.integers(1, 30), t=st.sampled_from([0.5, 0.8, 0.95]))
def test_merge_distances_match_substitution_and_bound(seed, n, t):
    """Claim (THM1, SPEC §1): the distances recomputed from π equal those the compactor reported,
    so ``δ̂`` agrees, and ``δ̂ <= δ``.

    Shown to fail on: distances computed in float32 (``np.linalg.norm`` of the float32 difference),
    which differ from the exact float64 rule in the last bits. Exact equality holds on every BLAS
    kernel: both sides are ``sqrt`` of :func:`lam_ref.geometry.sq_dist_rows` of the same rows (a
    numpy row reduction in an order fixed by ``D``, no BLAS).
    """
    rng = np.random.default_rng(seed)
    e = rng.normal(size=(n, 3)).astype(np.float64)
    e[:, 0] += 2.0  # cluster so that merges happen
    e = (e / np.linalg.norm(e, axis=1, keepdims=True)).astype(np.float32)
    res = oracle(e, t)
    ids, d = merge_distances(e, res.pi)
    assert ids.tolist() == res.deleted_ids.tolist(), "merged ids differ from the compactor's deletion set"
    assert np.array_equal(d, res.distances[ids]), "recomputed distances differ from the reported ones"
    stats = merge_distance_stats(d, np.full(d.size, 7, dtype=np.int64), t)
    assert stats.delta_hat == res.delta_hat and stats.within_bound, f"delta_hat {stats.delta_hat} vs {res.delta_hat}"


@given(seed=st.integers(0, 2**32 - 1), n=st.integers(1, 12), nq=st.integers(1, 4), k=st.integers(1, 6))
def test_recall_at_k_equals_brute_force(seed, n, nq, k):
    """Claim (Table 11 "R@10"): recall@k = share of the full top-k whose representative is in the
    retained top-k, ranks by float64 score then lower id.

    Shown to fail on: counting only top-k items that are themselves retained (ignoring π), and on
    breaking score ties in the retained index toward the higher id (duplicate rows create ties).
    """
    rng = np.random.default_rng(seed)
    base = rng.normal(size=(max(1, n // 2), 4))
    e = base[rng.integers(0, base.shape[0], size=n)]  # repeated rows: exact score ties
    e = (e / np.linalg.norm(e, axis=1, keepdims=True)).astype(np.float32)
    qs = rng.normal(size=(nq, 4))
    qs = (qs / np.linalg.norm(qs, axis=1, keepdims=True)).astype(np.float32)
    pi = list(range(n))
    for i in range(1, n):  # a valid map: merge i into a random earlier retained id, half the time
        kept = [j for j in range(i) if pi[j] == j]
        if rng.random() < 0.5:
            pi[i] = int(rng.choice(kept))
    got = recall_at_k_per_query(e, qs, pi, k)
    for j in range(nq):
        score = [float(np.dot(qs[j].astype(np.float64), e[i].astype(np.float64))) for i in range(n)]
        full = sorted(range(n), key=lambda i: (-score[i], i))[:k]
        retained = sorted((i for i in range(n) if pi[i] == i), key=lambda i: (-score[i], i))[:k]
        want = sum(1 for x in full if pi[x] in retained) / len(full)
        assert got[j] == want, f"query {j}: recall {got[j]} != brute force {want}"
