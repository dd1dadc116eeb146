"""The assertion vocabulary for writing conformance checks (SPEC §15), public and shared by every
module of :mod:`lam_ref.conformance.checks`.

A check (``@check``, :mod:`lam_ref.conformance.harness`) receives a loaded implementation and a
:class:`~lam_ref.conformance.harness.Context`; it raises ``AssertionError`` naming the SPEC item,
the claim and the offending values. These helpers say the recurring things once:

* calling the implementation: :func:`call_substitute` (return type ``int64[N]``, input left
  alone), :func:`accepts` (valid input must not be refused), :func:`expect_value_error` (bad input
  must raise ``ValueError`` naming the value, SPEC §2);
* judging a map π: :func:`as_pi`, :func:`assert_valid_map` (a δ-substitution, Definition 1),
  :func:`assert_equal_pi`, :func:`assert_map` (oracle equality if ``COMPLETE``, else soundness);
* reference answers that never come from the implementation under test: :func:`oracle_pi`
  (lam_ref's oracle, SPEC §5), :func:`expected_pi` (the oracle, or for an incomplete
  implementation its own π on the plain C-ordered float32 array, itself checked sound);
* :func:`two_inputs` (two different valid inputs, for aliasing checks) and :func:`short` (a
  value shortened for a message).

Example, a check written with them::

    @check("substitute.copies", claim="DEF1", spec="§5 ...", parts=("substitute",), shown_to_fail_on=(...))
    def check_substitute_copies(impl, ctx):
        '''An exact copy of an earlier row maps to it.'''
        e = np.repeat(np.eye(4, dtype=np.float32), 2, axis=0)
        pi = assert_map(impl, e, 0.9, "substitute on copies")
        assert_equal_pi(pi, np.repeat(np.arange(0, 8, 2), 2), "substitute on copies", "the construction")
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import numpy as np

from ..geometry import LamValueError, delta_sq, kept_mask, short_repr, sq_dist_rows, validate_map
from ..substitution import oracle

__all__ = [
    "accepts",
    "as_pi",
    "assert_equal_pi",
    "assert_map",
    "assert_valid_map",
    "bad_rows",
    "call_substitute",
    "case_embeddings",
    "expect_value_error",
    "expected_pi",
    "oracle_pi",
    "short",
    "two_inputs",
]


def short(obj: Any) -> str:
    """``obj`` as a repr of at most 120 characters, for assertion messages."""
    return short_repr(obj, 120)


def as_pi(out: Any, n: int, where: str) -> np.ndarray:
    """Check the SPEC §15 return type ``int64[N]`` and return it as an array."""
    assert isinstance(out, np.ndarray), f"{where} must return a numpy int64 array (SPEC §15), got {type(out).__name__}"
    assert out.dtype == np.int64, f"{where} must return dtype int64 (SPEC §1, §15), got {out.dtype}"
    assert out.shape == (n,), f"{where} must return shape ({n},) for {n} rows, got {out.shape}"
    return out


def assert_valid_map(e: np.ndarray, t: float, pi: np.ndarray, where: str) -> None:
    """π is a δ-substitution of the rows in arrival order (Definition 1, SPEC §1/§5)."""
    try:
        validate_map(pi, e.shape[0], "π")
    except LamValueError as exc:
        raise AssertionError(
            f"{where}: {exc}; a representative is an earlier or the same id and is itself retained (SPEC §1)"
        ) from None
    merged = np.flatnonzero(~kept_mask(pi))
    if merged.size:
        sq = sq_dist_rows(e, merged, e[pi[merged]])
        d2 = delta_sq(t)
        over = np.flatnonzero(sq > d2)
        assert over.size == 0, (
            f"{where}: chunk {merged[over[0]]} was merged into {pi[merged[over[0]]]} at sq = {sq[over[0]]!r} > "
            f"δ² = {d2!r} (t = {t!r}); every merge must be within δ (Definition 1, SPEC §2/§5)"
        )


def assert_equal_pi(got: np.ndarray, want: np.ndarray, where: str, source: str) -> None:
    """``got`` equals ``want`` (which came from ``source``: the oracle, the construction, ...)."""
    diff = np.flatnonzero(got != want)
    assert diff.size == 0, (
        f"{where}: π differs from {source} at {diff.size} position(s); first at i = {diff[0]}: "
        f"got π[i] = {got[diff[0]]}, expected {want[diff[0]]} (SPEC §5: the lowest retained id within δ)"
    )


def call_substitute(impl: Any, e: np.ndarray, t: float, where: str = "substitute") -> np.ndarray:
    """``impl.substitute(e, t)``, held to the return type ``int64[N]`` and to leaving ``e`` alone."""
    before = e.copy()
    out = impl.substitute(e, t)
    assert np.array_equal(e, before, equal_nan=True), f"{where} modified its input embeddings (it must not)"
    return as_pi(out, e.shape[0], where)


def oracle_pi(e: np.ndarray, t: float) -> np.ndarray:
    """The reference π: lam_ref's oracle (:func:`lam_ref.substitution.oracle`, SPEC §5)."""
    return oracle(e, t).pi


def assert_map(impl: Any, e: np.ndarray, t: float, where: str) -> np.ndarray:
    """Run ``substitute`` and hold it to SPEC §15: oracle equality if COMPLETE, else soundness."""
    pi = call_substitute(impl, e, t, where)
    assert_valid_map(e, t, pi, where)
    if impl.complete:
        assert_equal_pi(pi, oracle_pi(e, t), where, "the oracle")
    return pi


def expected_pi(impl: Any, e: np.ndarray, t: float) -> tuple[np.ndarray, str]:
    """The π an implementation must return on valid input, and where it came from: the oracle's
    (COMPLETE) or its own on the plain C-ordered float32 array (soundness only)."""
    if impl.complete:
        return oracle(e, t).pi, "the oracle"
    base = call_substitute(impl, np.ascontiguousarray(e, dtype=np.float32), t)
    assert_valid_map(e, t, base, "substitute")
    return base, "this implementation on the same values as a C-ordered float32 array"


def accepts(call: Callable[[], Any], what: str) -> Any:
    """Run ``call``; valid input must not be refused (any exception is the violation)."""
    try:
        return call()
    except Exception as exc:  # noqa: BLE001 - every exception on valid input is the violation
        raise AssertionError(f"{what}: valid input was refused with {type(exc).__name__}: {exc}") from exc


def expect_value_error(call: Callable[[], Any], what: str, must_mention: str | None = None) -> None:
    """``call()`` must raise ``ValueError`` with a non-empty message (SPEC §2); with ``must_mention``,
    the message names that value or row (as a whole number, case-insensitively)."""
    try:
        result = call()
    except ValueError as exc:
        message = str(exc)
        assert message.strip(), f"{what}: raised ValueError with an empty message; it must name the argument and value"
        if must_mention is not None:
            assert re.search(rf"(?<![\d.]){re.escape(must_mention)}(?![\d])", message, re.IGNORECASE), (
                f"{what}: the ValueError message {message!r} does not name the offending value/row "
                f"{must_mention!r} (SPEC §2)"
            )
        return
    except Exception as exc:  # noqa: BLE001 - any other exception type is the violation we report
        raise AssertionError(
            f"{what}: expected ValueError (SPEC §2), got {type(exc).__name__}: {exc}"
        ) from exc
    raise AssertionError(f"{what}: expected ValueError (SPEC §2), but the call returned {short(result)}")


def two_inputs() -> list[tuple[np.ndarray, float]]:
    """Two different valid inputs ``(E, t)`` (for aliasing checks: a result must not change when
    the next call runs on the other)."""
    a = np.array([[1, 0, 0], [1, 0, 0], [0, 1, 0], [0, 1, 0], [0, 0, 1]], dtype=np.float32)
    b = np.array([[0, 0, 1], [0, 1, 0], [1, 0, 0]], dtype=np.float32)
    return [(a, 0.9), (b, 0.9)]


def case_embeddings(case: Any) -> tuple[np.ndarray, float]:
    """``(E, t)`` of a drawn case: a pair as drawn, a star ``(E, t, centre)``, or a cluster record."""
    if isinstance(case, tuple) and len(case) == 3:  # stars: (E, t, centre)
        return case[0], case[1]
    if hasattr(case, "embeddings"):  # Clusters
        return case.embeddings, case.t
    return case


def bad_rows(e: np.ndarray, row: int) -> list[tuple[str, np.ndarray, str | None]]:
    """Variants of ``e`` with one bad row (SPEC §2.3: NaN, ±inf, a zero row, norms off 1): (name, array,
    text the message must contain)."""
    out = []
    mention = str(row) if row >= 1 else None  # "0" is too common in messages to prove anything
    for label, value in (("NaN", np.nan), ("+inf", np.inf), ("-inf", -np.inf)):
        bad = e.copy()
        bad[row, 0] = value
        out.append((f"a {label} in row {row}", bad, mention))
    zero = e.copy()
    zero[row] = 0.0
    out.append((f"a zero row {row}", zero, mention))
    for scale in (1.01, 0.98, 2.0):
        bad = e.copy()
        bad[row] = (e[row].astype(np.float64) * scale).astype(np.float32)
        out.append((f"row {row} with norm {scale}", bad, mention))
    return out
