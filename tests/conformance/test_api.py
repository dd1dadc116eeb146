"""The suite from Python, scikit-learn style: checks usable from pytest *and* from a call."""

from __future__ import annotations

import types
import warnings

import numpy as np
import pytest

import lam_ref.conformance.witnesses.mutants.m02_nearest_witness as nearest
import lam_ref.conformance.witnesses.mutants.m03_strict_less as strict
from lam_ref.conformance import CHECKS, CheckSkipped, ConformanceFailure, assert_conforms, run_checks
from lam_ref.conformance.checks.lines import check_lines_semantics
from lam_ref.conformance.checks.substitute import check_substitute_equals_oracle, check_substitute_exact_ties
from lam_ref.conformance.harness import Context
from lam_ref.conformance.runner import UnmatchedIdWarning


def test_single_check_is_a_plain_function():
    """A check called directly: returns None on a conforming module, raises AssertionError naming the
    SPEC rule on a wrong one, raises CheckSkipped (with the reason) when the part is missing."""
    import lam_ref.conformance.witnesses.independent as independent

    assert check_substitute_exact_ties(independent) is None, "a conforming module must pass silently"
    with pytest.raises(AssertionError, match=r"expected π = \[0, 0\], got \[0, 1\]"):
        check_substitute_exact_ties(strict)
    ctx = Context(scale=0.2)
    with pytest.raises(AssertionError, match="lowest retained id"):
        check_substitute_equals_oracle(nearest, ctx)
    assert ctx.counterexample is not None and ctx.stats.failing >= 1, f"no counterexample recorded: {ctx}"
    bare = types.ModuleType("bare")
    bare.substitute = independent.substitute
    with pytest.raises(CheckSkipped, match="optional part 'lines' not provided"):
        check_lines_semantics(bare)


def test_assert_conforms_lists_every_failed_check():
    """assert_conforms raises ConformanceFailure naming each failed check with claim and SPEC item,
    and carries all results; run_checks honours select, skips and xfails."""
    with pytest.raises(ConformanceFailure) as info:
        assert_conforms(strict, select=["substitute."], scale=0.2)
    text = str(info.value)
    n_sub = len([c for c in CHECKS if c.id.startswith("substitute.")])
    # the strict-< mutant fails the inclusive-tie check and, since the edge checks, the t = 1 and
    # signed-zero checks too (each an exact tie sq = δ²); no other substitute check fails on it
    failed = sorted(r.id for r in info.value.results if r.outcome == "failed")
    assert failed == ["substitute.exact_ties", "substitute.signed_zeros", "substitute.threshold_ends"], failed
    assert "substitute.exact_ties [EQ1" in text and f"{len(failed)} of {n_sub} conformance checks failed" in text, text
    assert len(info.value.results) == n_sub, f"results missing: {info.value.results}"
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        results = run_checks(
            strict,
            select=["substitute.exact_ties", "substitute.chain"],
            skips={"substitute.chain": "not today"},
            xfails={"substitute.exact_ties": "known (our ties bug)", "substitute.typo": "x"},
        )
    outcomes = {r.id: (r.outcome, r.reason) for r in results}
    assert outcomes == {
        "substitute.exact_ties": ("xfailed", "known (our ties bug)"),
        "substitute.chain": ("skipped", "not today"),
    }, outcomes
    assert any(issubclass(w.category, UnmatchedIdWarning) and "substitute.typo" in str(w.message) for w in caught), (
        f"an unmatched xfail id must be warned about: {[str(w.message) for w in caught]}"
    )


def test_wrong_return_types_are_reported_clearly():
    """SPEC §15 return types: a list instead of an int64 array, or float ids, fail with a message that
    says what was expected."""
    as_list = types.ModuleType("as_list")
    as_list.substitute = lambda e, t: list(range(np.asarray(e).shape[0]))
    with pytest.raises(AssertionError, match="must return a numpy int64 array"):
        check_substitute_exact_ties(as_list)
    as_float = types.ModuleType("as_float")
    as_float.substitute = lambda e, t: np.zeros(np.asarray(e).shape[0])
    with pytest.raises(AssertionError, match="dtype int64"):
        check_substitute_exact_ties(as_float)
