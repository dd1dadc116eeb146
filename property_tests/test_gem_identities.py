"""GEM-A (seed 002, Appendix A): the identities behind GEM's residual-greedy completion, checked on
generated unit vectors against independent computations.

* A.2: ``r_i(B) = ||(I - P_B) x_i||² = 1 - ||Q_Bᵀ x_i||²`` and ``0 <= r_i <= 1``;
* A.3: ``E(B) = ||X Q_B||_F² / n = 1 - ||X (I - P_B)||_F² / n`` (oracle:
  :func:`lam_ref.theory.captured_energy`, an ``orth``-based basis);
* A.5–A.7: after adding ``q``, ``P' = P + q qᵀ``, ``E' - E = Σ (qᵀx_i)² / n >= r_j / n`` and
  ``r_i' = r_i - (qᵀ x_i)²`` (the incremental update equals a recomputation);
* A.9: ``P ⊆ B ⊆ S`` and the forwarded request keeps ``>= (1 - δ)`` of its characters;
* the selection order with an empty protected set is the column order of
  ``scipy.linalg.qr(Xᵀ, pivoting=True)`` (pivoted QR picks the largest remaining column norm,
  which for unit rows is the largest residual); with a protected set, the order of pivoted QR
  on the residuals ``(I - P_P) Xᵀ``.
"""

from __future__ import annotations

import numpy as np
import pytest
import scipy.linalg
from hypothesis import assume, given
from hypothesis import strategies as st

from lam_ref.peers import gem as G
from lam_ref.theory import captured_energy

from ._support import must_fail

pytestmark = pytest.mark.claim("GEM-A")


@st.composite
def unit_rows(draw, min_n: int = 2, max_n: int = 10, min_d: int = 2, max_d: int = 8):
    n = draw(st.integers(min_n, max_n))
    d = draw(st.integers(min_d, max_d))
    seed = draw(st.integers(0, 2**32 - 1))
    x = np.random.default_rng(seed).standard_normal((n, d))
    x /= np.linalg.norm(x, axis=1, keepdims=True)
    k = draw(st.integers(0, min(n, d) - 1))
    protected = sorted(draw(st.sets(st.integers(0, n - 1), max_size=k)))
    return x, protected


def _basis(x: np.ndarray, idx) -> np.ndarray:
    q = np.zeros((x.shape[1], 0))
    for i in idx:
        q, _ = G.mgs_extend(q, x[i])
    return q


def prop_residual_energy(data, residual_fn=G.residuals) -> None:
    """A.2 and A.3 against projector and orth() oracles."""
    x, protected = data
    q = _basis(x, protected)
    p = q @ q.T
    e = x - x @ p  # rows (I - P) x_i
    r = residual_fn(x, q)
    assert np.allclose(r, np.einsum("ij,ij->i", e, e), atol=1e-9), "A.2: r_i = ||(I - P_B) x_i||²"
    assert np.all(r >= -1e-12) and np.all(r <= 1 + 1e-12), "A.2: 0 <= r_i <= 1"
    energy = G.captured_energy(x, q)
    assert energy == pytest.approx(1 - np.sum(e**2) / x.shape[0], abs=1e-9), "A.3: E = 1 - ||X(I-P)||²/n"
    if protected:
        mask = np.zeros(x.shape[0], dtype=bool)
        mask[protected] = True
        assert energy == pytest.approx(captured_energy(x.astype(np.float32), mask), abs=1e-6), \
            "A.3: E agrees with lam_ref.theory.captured_energy (orth basis)"


@given(unit_rows())
def test_residual_and_energy_identities(data):
    """GEM-A: eq. A.2, A.3 (Appendix A.1)."""
    prop_residual_energy(data)


def test_residual_identity_fails_on_a_wrong_residual():
    """The A.2 property catches a residual that forgets one basis direction."""
    must_fail(unit_rows(min_n=3), prop_residual_energy,
              lambda x, q: G.residuals(x, q[:, :-1]) if q.shape[1] else G.residuals(x, q))


def prop_update(data) -> None:
    """A.5–A.7 for one added block j (the largest-residual candidate)."""
    x, protected = data
    q = _basis(x, protected)
    r = G.residuals(x, q)
    cand = [i for i in range(x.shape[0]) if i not in protected and r[i] > 1e-6]
    assume(cand)
    j = max(cand, key=lambda i: r[i])
    q2, added = G.mgs_extend(q, x[j])
    assert added, "a candidate with r_j > 0 adds a direction"
    qn = q2[:, -1]
    assert np.allclose(q2 @ q2.T, q @ q.T + np.outer(qn, qn), atol=1e-9), "A.5: P' = P + q qᵀ"
    gain = G.captured_energy(x, q2) - G.captured_energy(x, q)
    proj = (x @ qn) ** 2
    assert gain == pytest.approx(proj.sum() / x.shape[0], abs=1e-9), "A.6: E' - E = Σ (qᵀx_i)² / n"
    assert gain >= r[j] / x.shape[0] - 1e-12, "A.6: the gain is at least r_j / n"
    assert np.allclose(G.residuals(x, q2), r - proj, atol=1e-9), "A.7: r_i' = r_i - (qᵀx_i)²"


@given(unit_rows())
def test_incremental_update_identities(data):
    """GEM-A: eq. A.5–A.7 (Appendix A.2)."""
    prop_update(data)


def _pivot_order(m: np.ndarray, steps: int) -> list[int]:
    _, _, piv = scipy.linalg.qr(m, pivoting=True, mode="economic")
    return [int(i) for i in piv[:steps]]


@given(unit_rows(min_n=3, max_n=9))
def test_selection_order_is_pivoted_qr(data):
    """GEM-A: greedy completion picks blocks in the column order of pivoted QR of the residuals."""
    x, protected = data
    sel = G.greedy_completion(x, protected, tau=1.0, k=x.shape[0])
    assume(sel.picks)
    # the picks up to the first near-tie (rounding may order near-equal residuals either way)
    chosen, m = list(protected), 0
    for pick in sel.picks:
        rem = [i for i in range(x.shape[0]) if i not in chosen]
        srt = np.sort(G.residuals(x, _basis(x, chosen))[rem])[::-1]
        if srt.size >= 2 and srt[0] - srt[1] <= 1e-6:
            break
        chosen.append(pick)
        m += 1
    assume(m >= 1)
    q = _basis(x, protected)
    cols = [i for i in range(x.shape[0]) if i not in protected]
    resid = x[cols].T - q @ (q.T @ x[cols].T)  # columns (I - P_P) x_i of the candidates
    order = [cols[i] for i in _pivot_order(resid, m)]
    assert list(sel.picks[:m]) == order, f"greedy picks {sel.picks[:m]} vs pivoted QR columns {order}"


@given(unit_rows(min_n=3, max_n=10), st.floats(0.05, 1.0), st.integers(0, 6))
def test_core_contains_protected_and_energy_is_monotone(data, tau, k):
    """GEM-A: P ⊆ B, |B| <= max(K, |P|), E non-decreasing, stop at τ (Appendix A.2–A.3)."""
    x, protected = data
    sel = G.greedy_completion(x, protected, tau=tau, k=k)
    assert set(protected) <= set(sel.core), "A.9: P ⊆ B"
    assert len(sel.core) <= max(k, len(protected)), "capacity K_t = max(K, |P|)"
    assert all(b >= a - 1e-12 for a, b in zip(sel.energy, sel.energy[1:])), f"E is monotone: {sel.energy}"
    assert all(e < tau for e in sel.energy[:-1]), "completion stops as soon as E >= τ"
