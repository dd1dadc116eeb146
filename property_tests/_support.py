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
