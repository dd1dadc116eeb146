"""COR1 (App. C.2, Corollary 1): for every unit q and k, each member of the true top-k is retained
or has its representative in R within δ, and its score is reproduced to within δ."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from lam_ref.geometry import delta_from_t, t_prime
from lam_ref.strategies import embeddings_and_threshold
from lam_ref.substitution import substitute
from lam_ref.theory import FP_TOL, random_queries, top_k_cover

from ._support import REG, _ctx, kept_mask, must_fail

pytestmark = pytest.mark.claim("COR1")

DATA = st.tuples(embeddings_and_threshold(min_n=1, max_n=30), st.integers(0, 2**31))


def prop_top_k(data, make_pi) -> None:
    """Direct check for 16 random queries and every k, plus agreement of :func:`top_k_cover`."""
    (e, t), seed = data
    pi = make_pi(e, t)
    kept = kept_mask(pi)
    delta = delta_from_t(t)
    e64 = e.astype(np.float64)
    for q in random_queries(e.shape[1], 16, seed):
        scores = e64 @ q
        order = np.argsort(-scores, kind="stable")
        for k in (1, 3, e.shape[0]):
            for x in order[:k]:
                assert kept[pi[x]], f"top-{k} member {x} maps to deleted {pi[x]}"
                assert np.linalg.norm(e64[x] - e64[pi[x]]) <= delta + FP_TOL, f"top-{k} member {x} is beyond delta"
                assert abs(scores[x] - scores[pi[x]]) <= delta + FP_TOL, f"score of {x} not reproduced within delta"
            assert top_k_cover(e, pi, q, k, t), f"top_k_cover disagrees for k={k}"


@given(DATA)
def test_top_k_members_are_covered(data):
    """COR1 for banded Algorithm 2. Shown to fail on a map made at radius 2δ
    (:func:`test_cor1_fails_at_twice_the_radius`)."""
    prop_top_k(data, lambda e, t: substitute(e, t).pi)


def test_cor1_fails_at_twice_the_radius():
    must_fail(DATA, prop_top_k, lambda e, t: substitute(e, max(-1.0, t_prime(t)), exhaustive=True).pi)


# ------------------------------------------------------------------------------------------------
# COR1's row of ``lam-ref verify`` (:mod:`lam_ref.claims.cor1`): its measure on a set worked by hand.
# ------------------------------------------------------------------------------------------------


@pytest.mark.claim("COR1")
def test_cor1_measure_checks_only_the_top_k():
    """COR1 looks at the top-``k`` of each query only: a row mapped far away (row 2, the
    antipode of its representative) fails exactly the queries that rank it first when ``k = 1``."""
    e = np.array([[1.0, 0.0], [0.0, 1.0], [-1.0, 0.0]])
    ctx = _ctx(e, 0.9, pi=[0, 1, 0], n_queries=64, top_k=1)
    m = REG["COR1"].measure(ctx).values
    q = ctx.random_queries[:64]
    expected = int(np.sum(np.argmax(q @ e.T, axis=1) != 2))
    assert 0 < expected < 64, f"the test needs both kinds of query: {expected}"
    assert (m["k"], m["queries"], m["covered"]) == (1, 64, expected), f"{m} vs {expected} covered"
