"""Shared helpers of the property tests: the "shown to fail on a broken input" harness.

Every property in this folder is written as a plain function ``prop(data, impl)`` that asserts;
the real test runs it against lam_ref, and a companion test runs the *same* property against a
deliberately broken implementation or input and requires Hypothesis to find a failure
(:func:`must_fail`). That records, permanently, that each property can fail.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pytest
from hypothesis import Phase, given, settings
from hypothesis import strategies as st

from lam_ref.claims import registry
from lam_ref.substitution import substitute


def must_fail(strategy: st.SearchStrategy, prop: Callable[..., None], *args, max_examples: int = 60) -> None:
    """Assert that ``prop(example, *args)`` raises ``AssertionError`` for some generated example.

    Runs with generation only (no shrinking) and derandomised, so it is fast and deterministic.
    """

    @settings(
        max_examples=max_examples,
        phases=[Phase.generate],
        derandomize=True,
        database=None,
        deadline=None,
        report_multiple_bugs=False,
    )
    @given(strategy)
    def run(example):
        prop(example, *args)

    with pytest.raises(AssertionError):
        run()


def greedy_pi(e: np.ndarray, t: float) -> np.ndarray:
    """π of greedy first-occurrence (exhaustive Algorithm 2 = the oracle)."""
    return substitute(e, t, exhaustive=True).pi


def kept_mask(pi: np.ndarray) -> np.ndarray:
    return pi == np.arange(pi.shape[0])


# ------------------------------------------------------------------------------------------------
# Sets worked by hand for the measures of the claims (lam_ref.claims), and their contexts.
# ------------------------------------------------------------------------------------------------

REG = registry()


def _ctx(e, t, pi=None, **kw):
    """A real :class:`SetContext`: the exhaustive compactor's map, or ``pi`` when given."""
    from lam_ref.claims._context import SetContext
    from lam_ref.geometry import validate_embeddings
    from lam_ref.substitution import SubstitutionResult, substitute

    e = validate_embeddings(np.asarray(e, dtype=np.float32))
    greedy = substitute(e, t, exhaustive=True)
    res = greedy
    if pi is not None:
        pi = np.asarray(pi, dtype=np.int64)
        d = np.linalg.norm(e.astype(np.float64) - e[pi].astype(np.float64), axis=1)
        res = SubstitutionResult(pi, d, t, "given", 0, 0, 0.0)
    return SetContext(e, t, res, greedy, exhaustive=True, **kw)


def _fan(theta=0.1):
    """Row 0 retained, four rows at angle ``theta`` around it (±x2, ±x3) merged into it."""
    c, s = np.cos(theta), np.sin(theta)
    return np.array([[1, 0, 0], [c, s, 0], [c, -s, 0], [c, 0, s], [c, 0, -s]], dtype=np.float64)


def _banded_ctx(e, t, pi, **kw):
    """A :class:`SetContext` in banded mode whose map under test is ``pi`` (any map)."""
    from lam_ref.claims._context import SetContext
    from lam_ref.geometry import validate_embeddings
    from lam_ref.substitution import SubstitutionResult, substitute

    e = validate_embeddings(np.asarray(e, dtype=np.float32))
    greedy = substitute(e, t, exhaustive=True)
    pi = np.asarray(pi, dtype=np.int64)
    d = np.linalg.norm(e.astype(np.float64) - e[pi].astype(np.float64), axis=1)
    res = SubstitutionResult(pi, d, t, "banded", 7, 11, 0.0)
    return SetContext(e, t, res, greedy, exhaustive=False, **kw)


def _bounded(value, lower, upper):
    """The record of a MILP stopped by its time limit with a feasible, unproven solution."""
    from lam_ref.covering import ExactResult

    return ExactResult(float(value), np.zeros(0, dtype=np.int64), False, float(lower), float(upper), "milp", 0.0)

