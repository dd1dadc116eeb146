"""STAB (decision-margin stability; App. D "Decision margins", docs/determinism.md): with
``margin_i = min_{j ∈ R_i} |sq(e_i, e_j) − δ²|``, a perturbation that keeps every
``|Δsq(i, j)|, j ∈ R_i`` below ``margin_i`` leaves the greedy map π unchanged; perturbations
above the margin can change it (Hypothesis finds them); the first decision that differs between
two runs is always at risk for the jitter between them (``|Δsq| <= 4γ``)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from lam_ref.covering import all_pairs_sq
from lam_ref.determinism import (
    MARGIN_SLACK,
    at_risk,
    decision_margins,
    first_divergence,
    greedy_map,
    jitter,
    risk_bound,
)
from lam_ref.geometry import delta_sq
from lam_ref.strategies import embeddings_and_threshold

from ._support import greedy_pi, must_fail

pytestmark = pytest.mark.claim("STAB")


def rule(sq: np.ndarray, t: float) -> np.ndarray:
    """The greedy rule of §2.4 over a given squared-distance matrix (the definition, written out)."""
    d2 = delta_sq(t)
    n = sq.shape[0]
    pi = np.arange(n)
    kept: list[int] = []
    for i in range(n):
        within = [j for j in kept if sq[i, j] <= d2]
        if within:
            pi[i] = within[0]
        else:
            kept.append(i)
    return pi


def exact_margins(sq: np.ndarray, pi: np.ndarray, t: float) -> np.ndarray:
    """Margins from the exact SPEC §2 distances (independent of lam_ref.determinism)."""
    d2 = delta_sq(t)
    out = np.full(sq.shape[0], np.inf)
    kept: list[int] = []
    for i in range(sq.shape[0]):
        if kept:
            out[i] = min(abs(sq[i, j] - d2) for j in kept)
        if pi[i] == i:
            kept.append(i)
    return out


def ratio(sq: np.ndarray, sq2: np.ndarray, pi: np.ndarray, m: np.ndarray) -> float:
    """``max_i max_{j ∈ R_i} |Δsq(i, j)| / margin_i`` (``< 1``: the lemma's premise holds)."""
    worst = 0.0
    kept: list[int] = []
    for i in range(sq.shape[0]):
        if kept:
            d = float(np.abs(sq2[i, kept] - sq[i, kept]).max())
            worst = max(worst, math.inf if m[i] == 0 else d / m[i])
        if pi[i] == i:
            kept.append(i)
    return worst


def perturbed(e: np.ndarray, seed: int, target: float, t: float) -> tuple[np.ndarray, np.ndarray, np.ndarray, float]:
    """A float64 perturbation ``E + s·U`` (random unit directions U) with the premise ratio as close
    to ``target`` from below as bisection on ``s`` gets; returns ``(E', sq, sq', ratio)``."""
    e64 = e.astype(np.float64)
    sq = all_pairs_sq(e64)
    pi = rule(sq, t)
    m = exact_margins(sq, pi, t)
    u = np.random.default_rng(seed).normal(size=e.shape)
    u /= np.linalg.norm(u, axis=1, keepdims=True)
    lo, hi = 0.0, 4.0
    best = (e64, sq, 0.0)
    for _ in range(60):
        s = (lo + hi) / 2
        e2 = e64 + s * u
        sq2 = all_pairs_sq(e2)
        r = ratio(sq, sq2, pi, m)
        if r < target:
            lo, best = s, (e2, sq2, r)
        else:
            hi = s
    return best[0], sq, best[1], best[2]


@given(embeddings_and_threshold(min_n=2, max_n=25), st.integers(0, 2**32 - 1), st.floats(0.05, 0.999))
def test_perturbations_below_the_margins_never_change_pi(data, seed, fraction):
    """STAB: if ``|Δsq(i, j)| < margin_i`` for every arrival i and every j retained before it, the
    perturbed run has the same π. The perturbation is pushed as close to the margins as bisection
    gets (premise ratio up to ``fraction`` < 1). Shown to fail above the margins
    (:func:`test_hypothesis_finds_perturbations_above_the_margin_that_change_pi`)."""
    e, t = data
    e2, sq, sq2, r = perturbed(e, seed, fraction, t)
    pi = rule(sq, t)
    assert np.array_equal(pi, greedy_pi(e, t)), "the written-out rule must equal lam_ref's exhaustive Algorithm 2"
    assert r < 1.0, f"premise must hold (ratio {r})"
    assert np.array_equal(rule(sq2, t), pi), f"π changed under a perturbation below every margin (ratio {r:.3f})"


def prop_unchanged(example) -> None:
    (e, t), seed, factor = example
    e2, sq, sq2, r = perturbed(e, seed, factor, t)
    assert np.array_equal(rule(sq2, t), rule(sq, t)), f"π changed at premise ratio {r:.3f}"


def test_hypothesis_finds_perturbations_above_the_margin_that_change_pi():
    """STAB is tight in scale: allowing ``|Δsq|`` up to a few times the margin, Hypothesis finds
    perturbations that change π (so the lemma's premise cannot be dropped)."""
    must_fail(st.tuples(embeddings_and_threshold(min_n=3, max_n=25), st.integers(0, 2**32 - 1), st.floats(1.5, 8.0)),
              prop_unchanged)


def test_crossing_the_smallest_margin_changes_pi():
    """Moving one arrival just across δ of its closest retained row changes its decision: the
    margin is the exact distance to a flip (a constructed example, two rows in the plane)."""
    t = 0.95
    d = math.sqrt(delta_sq(t))
    for side in (-1, 1):
        ang = 2 * math.asin((d + side * 1e-3) / 2)  # chord d ± 1e-3
        e = np.array([[1.0, 0.0], [math.cos(ang), math.sin(ang)]], dtype=np.float32)
        pi = greedy_pi(e, t)
        m = decision_margins(e, pi, t)
        ang2 = 2 * math.asin((d - side * 1e-3) / 2)
        e2 = np.array([[1.0, 0.0], [math.cos(ang2), math.sin(ang2)]], dtype=np.float32)
        assert (pi[1] == 0) == (side < 0), f"row 1 merges iff its chord is below δ (side {side})"
        assert greedy_pi(e2, t)[1] != pi[1], "crossing δ must flip the decision"
        sq, sq2 = all_pairs_sq(e)[1, 0], all_pairs_sq(e2)[1, 0]
        assert abs(sq2 - sq) >= m[1], f"the flip needs |Δsq| >= margin: {abs(sq2 - sq)} vs {m[1]}"


@given(embeddings_and_threshold(min_n=1, max_n=30))
def test_decision_margins_equal_the_definition(data):
    """``decision_margins`` (Gram-matrix form) equals the coordinate-wise definition within
    ``MARGIN_SLACK``, with ``+∞`` exactly where no row was retained before."""
    e, t = data
    pi = greedy_pi(e, t)
    got = decision_margins(e, pi, t)
    want = exact_margins(all_pairs_sq(e), pi, t)
    assert np.array_equal(np.isinf(got), np.isinf(want)), "∞ where R_i is empty, finite elsewhere"
    fin = np.isfinite(want)
    assert np.all(np.abs(got[fin] - want[fin]) <= MARGIN_SLACK), f"margins differ: {np.abs(got[fin] - want[fin]).max()}"


@given(embeddings_and_threshold(min_n=2, max_n=30), st.integers(0, 2**32 - 1), st.floats(-6.0, -1.0))
def test_first_divergence_is_at_risk_for_the_measured_jitter(data, seed, log_scale):
    """The certificate as the probe uses it: between E and a renormalised perturbation E', every
    ``|Δsq|`` is at most ``4γ`` (γ the pairwise-cosine jitter), no decision outside
    ``at_risk(margins, 4γ)`` changes, and in particular the first differing decision is at risk."""
    e, t = data
    rng = np.random.default_rng(seed)
    x = e.astype(np.float64) + 10.0**log_scale * rng.normal(size=e.shape)
    e2 = (x / np.linalg.norm(x, axis=1, keepdims=True)).astype(np.float32)
    pi, _ = greedy_map(e, t)
    pi2, _ = greedy_map(e2, t)
    jit = jitter(e, e2)
    assert jit["sq"] <= risk_bound(jit["cos"]) + MARGIN_SLACK, f"|Δsq| {jit['sq']} exceeds 4γ {risk_bound(jit['cos'])}"
    m = decision_margins(e, pi, t)
    risky = set(at_risk(m, jit["sq"]).tolist())
    first, cascade = first_divergence(pi, pi2)
    if first is None:
        assert cascade == 0, "no divergence, no cascade"
    else:
        assert first in risky, f"first divergence {first} (margin {m[first]}) not at risk for |Δsq| {jit['sq']}"
    if not risky:
        assert first is None, "with no decision at risk π must be unchanged"


def test_stab_property_fails_on_a_broken_margin():
    """The at-risk property is shown to fail when the margin ignores the retained rows (a margin
    taken only against the representative, i.e. an under-estimate of the set that matters)."""

    def prop(example):
        (e, t), seed, log_scale = example
        rng = np.random.default_rng(seed)
        x = e.astype(np.float64) + 10.0**log_scale * rng.normal(size=e.shape)
        e2 = (x / np.linalg.norm(x, axis=1, keepdims=True)).astype(np.float32)
        pi, _ = greedy_map(e, t)
        pi2, _ = greedy_map(e2, t)
        sq = all_pairs_sq(e)
        broken = np.abs(sq[np.arange(len(pi)), pi] - delta_sq(t))  # only the pair (i, π[i]); 2 for kept rows
        broken[pi == np.arange(len(pi))] = np.inf
        first, _ = first_divergence(pi, pi2)
        if first is not None:
            assert first in set(at_risk(broken, jitter(e, e2)["sq"]).tolist()), "first divergence not flagged"

    must_fail(st.tuples(embeddings_and_threshold(min_n=3, max_n=30), st.integers(0, 2**32 - 1), st.floats(-3.0, -1.0)),
              prop, max_examples=120)
