"""GEMLINK (beyond the paper; links GEM, seed 002 eq. 3): any δ-substitution captures energy
``E(R) = (1/n) Σ ||Q_Rᵀ x_i||² >= 1 - (|D|/n)·δ̂² >= 1 - (|D|/n)·δ²``."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.linalg
from hypothesis import given

from lam_ref.strategies import embeddings_and_threshold, near_duplicate_clusters
from lam_ref.substitution import substitute
from lam_ref.theory import captured_energy, gem_energy_bound

from ._support import REG, _ctx, _fan, must_fail

pytestmark = pytest.mark.claim("GEMLINK")


def energy_by_orth(e: np.ndarray, kept: np.ndarray) -> float:
    """E(R) via scipy.linalg.orth (an independent basis of span R)."""
    q = scipy.linalg.orth(e[kept].astype(np.float64).T)
    proj = e.astype(np.float64) @ q
    return float((proj**2).sum() / e.shape[0])


def prop_energy(data, make_kept) -> None:
    """E(R) (two independent computations agree to 1e-9) >= 1 - (|D|/n)·δ̂², up to the rows'
    norm error, and δ̂ <= δ makes the δ form weaker."""
    e, t = data
    res = substitute(e, t)
    kept = make_kept(e, t, res)
    n = e.shape[0]
    energy = captured_energy(e, kept)
    assert abs(energy - energy_by_orth(e, kept)) <= 1e-9, "captured_energy disagrees with orth()"
    norms = np.einsum("ij,ij->i", e.astype(np.float64), e.astype(np.float64))
    slack = float(np.abs(norms - 1).max()) + 1e-12
    n_del = int((~kept).sum())
    bound = gem_energy_bound(n, n_del, res.delta_hat)
    assert energy >= bound - slack, f"E(R) = {energy!r} < 1 - |D|/n delta_hat² = {bound!r}"
    assert bound >= gem_energy_bound(n, n_del, res.delta) - 1e-15, "delta_hat form must be tighter"


@given(embeddings_and_threshold(min_n=1, max_n=30))
def test_substitution_captures_energy(data):
    """GEMLINK for Algorithm 2. Shown to fail on a wrong input: a retained set that is one whole
    cluster of several orthogonal ones (not a δ-substitution), :func:`test_gemlink_fails_for_non_substitutions`."""
    prop_energy(data, lambda e, t, res: res.kept)


def test_gemlink_fails_for_non_substitutions():
    def first_cluster_only(e, t, res):
        # keep the rows the real map keeps *in the first retained row's cluster only*
        first = int(np.flatnonzero(res.kept)[0])
        close = np.linalg.norm(e.astype(np.float64) - e[first], axis=1) < 1.0
        return res.kept & close

    must_fail(near_duplicate_clusters(min_clusters=2).map(lambda c: (c.embeddings, c.t)), prop_energy, first_cluster_only)


def test_energy_bound_by_hand():
    """n = 4, two deletions at δ² = 0.1: bound 1 - (2/4)·0.1 = 0.95; one deletion at δ̂ = 0: 1."""
    assert abs(gem_energy_bound(4, 2, np.sqrt(0.1)) - 0.95) < 1e-15, "1 - 0.5*0.1"
    assert gem_energy_bound(4, 1, 0.0) == 1.0, "no distance, no loss"


# ------------------------------------------------------------------------------------------------
# GEMLINK's row of ``lam-ref verify`` (:mod:`lam_ref.claims.gemlink`): its measure on a set worked by hand.
# ------------------------------------------------------------------------------------------------


@pytest.mark.claim("GEMLINK")
def test_gemlink_measure_counts_the_deleted_rows():
    """GEMLINK's bounds use ``|D|``, the deleted rows (``n - |R|``), and ``δ̂``/``δ``; the margin is
    the energy above the ``δ̂`` bound; the slack is the rows' norm error plus 1e-12."""
    from lam_ref.geometry import delta_from_t

    e, t = _fan(), 0.99
    ctx = _ctx(e, t)
    m = REG["GEMLINK"].measure(ctx).values
    dh = ctx.result.delta_hat
    assert m["bound_delta_hat"] == pytest.approx(1 - 4 / 5 * dh * dh, abs=1e-12), f"4 of 5 rows deleted: {m}"
    assert m["bound_delta"] == pytest.approx(1 - 4 / 5 * delta_from_t(t) ** 2, abs=1e-12), f"{m}"
    assert m["energy"] == pytest.approx((1 + 4 * np.cos(0.1) ** 2) / 5, abs=1e-6), f"span R is the first axis: {m}"
    assert m["min_margin"] == pytest.approx(m["energy"] - m["bound_delta_hat"], abs=1e-15), f"{m}"
    e32 = ctx.e.astype(np.float64)
    slack = float(np.abs((e32 * e32).sum(axis=1) - 1).max()) + 1e-12
    assert m["norm_slack"] == pytest.approx(slack, rel=1e-9), f"{m['norm_slack']} vs {slack}"
