"""The merge rule and its input validation (SPEC §2; claim EQ1)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from lam_ref import OnlineSession, oracle, substitute
from lam_ref.bands import BandSettings, band_recall
from lam_ref.geometry import (
    LamValueError,
    delta_from_t,
    delta_sq,
    merges,
    sq_dist,
    t_from_delta,
    t_prime,
    validate_embeddings,
)


def _unit(rows):
    a = np.asarray(rows, dtype=np.float64)
    return (a / np.linalg.norm(a, axis=1, keepdims=True)).astype(np.float32)


@pytest.mark.claim("EQ1")
def test_inclusive_tie_example_of_spec_2_merges():
    """SPEC §2 pins a=(1,0), b=(0,1), t=0: sq = 2 = δ² exactly, so they merge (inclusive <=)."""
    a, b = np.array([1.0, 0.0], np.float32), np.array([0.0, 1.0], np.float32)
    assert sq_dist(a, b) == 2.0, "sq((1,0),(0,1)) must be exactly 2"
    assert delta_sq(0.0) == 2.0, "δ² at t=0 must be exactly 2"
    assert merges(a, b, 0.0), "the tie sq == δ² must merge (inclusive rule)"
    res = substitute(np.stack([a, b]), 0.0, exhaustive=True)
    assert res.pi.tolist() == [0, 0], f"exhaustive must merge the tie, got {res.pi}"
    assert oracle(np.stack([a, b]), 0.0).pi.tolist() == [0, 0], "oracle must merge the tie"
    # a hair above t = 0 makes δ² < 2, so the same pair no longer merges
    assert not merges(a, b, 1e-12), "just above t=0 (δ² < 2) the pair must not merge"


@pytest.mark.claim("EQ1")
@pytest.mark.parametrize("t", [-1.0, -0.3, 0.0, 0.5, 0.9, 0.95, 0.99, 1.0])
def test_delta_t_round_trip(t):
    """EQ1: δ = sqrt(2-2t) and t = 1 - δ²/2 invert each other; values from the paper: δ(0.95) = 0.3162."""
    d = delta_from_t(t)
    assert math.isclose(t_from_delta(d), t, abs_tol=1e-12), f"t -> δ -> t lost precision at t={t}"
    if t == 0.95:
        assert round(d, 4) == 0.3162, f"δ(0.95) should be 0.3162 (paper Table 3), got {d}"


@pytest.mark.claim("THM2")
def test_t_prime_is_radius_two_delta():
    """THM2: sqrt(2 - 2t') = 2 sqrt(2 - 2t) for t' = 4t - 3 (checked numerically for t >= 0.5)."""
    for t in np.linspace(0.5, 1.0, 11):
        assert math.isclose(math.sqrt(max(0.0, 2 - 2 * t_prime(t))), 2 * delta_from_t(t), rel_tol=1e-12, abs_tol=1e-12), t
    assert t_prime(0.95) == pytest.approx(0.8), "t' at 0.95 must be 0.8"


@pytest.mark.parametrize(
    "bad, fragment",
    [
        (float("nan"), "t must be finite"),
        (float("inf"), "t must be finite"),
        (1.5, "t must be in [-1, 1], got 1.5"),
        (-1.0000001, "t must be in [-1, 1]"),
        ("0.9", "t must be a real number"),
        (None, "t must be a real number"),
        (True, "t must be a real number"),
    ],
)
def test_bad_threshold_is_named(bad, fragment):
    """SPEC §2: t outside [-1, 1] (or not a real number) → ValueError naming t and the value."""
    with pytest.raises(ValueError) as info:
        substitute(np.eye(2, dtype=np.float32), bad)
    assert fragment in str(info.value), f"message {info.value!r} should contain {fragment!r}"
    with pytest.raises(ValueError, match=r"\bt\b"):
        OnlineSession(bad)


E_GOOD = _unit(np.random.default_rng(0).standard_normal((5, 8)))


def _with_nan():
    e = E_GOOD.copy()
    e[3, 2] = np.nan
    return e


def _with_inf():
    e = E_GOOD.copy()
    e[1, 0] = np.inf
    return e


def _with_zero():
    e = E_GOOD.copy()
    e[2] = 0
    return e


def _not_unit():
    e = E_GOOD.copy()
    e[4] *= 1.01
    return e


@pytest.mark.parametrize(
    "make, fragments",
    [
        (_with_nan, ["embeddings row 3", "non-finite"]),
        (_with_inf, ["embeddings row 1", "non-finite"]),
        (_with_zero, ["embeddings row 2", "zero vector"]),
        (_not_unit, ["embeddings row 4", "norm 1.01", "normalize=True"]),
        (lambda: E_GOOD[0], ["embeddings must be 2-D", "(8,)"]),
        (lambda: E_GOOD[None], ["embeddings must be 2-D", "(1, 5, 8)"]),
        (lambda: np.zeros((3, 0), np.float32), ["empty dimension D = 0"]),
        (lambda: np.array([["a", "b"]]), ["numeric"]),
        (lambda: [[1.0, 0.0], [1.0]], ["embeddings"]),
    ],
    ids=["nan", "inf", "zero-row", "not-unit", "rank-1", "rank-3", "empty-D", "strings", "ragged"],
)
def test_bad_embeddings_are_named(make, fragments):
    """SPEC §2: every bad embeddings input raises ValueError naming the argument and the offending row/value."""
    for entry in (lambda e: substitute(e, 0.9), lambda e: oracle(e, 0.9), lambda e: substitute(e, 0.9, exhaustive=True)):
        with pytest.raises(ValueError) as info:
            entry(make())
        for frag in fragments:
            assert frag in str(info.value), f"message {info.value!r} should contain {frag!r}"


def test_online_dimension_mismatch_is_named():
    """SPEC §2: a turn whose D differs from the session's is refused, naming turn_embeddings and both D."""
    s = OnlineSession(0.9)
    s.admit(E_GOOD)
    with pytest.raises(ValueError) as info:
        s.admit(_unit(np.ones((2, 4))))
    msg = str(info.value)
    assert "turn_embeddings" in msg and "D = 4" in msg and "expected 8" in msg, msg


@pytest.mark.parametrize(
    "kwargs, fragment",
    [
        ({"rel": 0.0}, "rel must be a positive finite number, got 0.0"),
        ({"rel": -0.2}, "rel must be a positive finite number, got -0.2"),
        ({"rel": float("nan")}, "rel must be a positive finite number"),
        ({"r": 0}, "r must be a positive integer, got 0"),
        ({"r": -3}, "r must be a positive integer, got -3"),
        ({"r": 2.5}, "r must be a positive integer, got 2.5"),
    ],
)
def test_bad_band_settings_are_named(kwargs, fragment):
    """SPEC §2: non-positive rel or band width → ValueError naming it, in every entry point."""
    for call in (
        lambda: substitute(E_GOOD, 0.9, **kwargs),
        lambda: OnlineSession(0.9, **kwargs),
        lambda: BandSettings(**kwargs),
        lambda: band_recall(E_GOOD, 0.9, **{"r": 4, "rel": 0.2, **kwargs}),
    ):
        with pytest.raises(ValueError) as info:
            call()
        assert fragment in str(info.value), f"message {info.value!r} should contain {fragment!r}"


def test_normalize_true_rescales_instead_of_refusing():
    """SPEC §2: rows off the unit sphere are accepted only when the caller asks for normalize=True."""
    e = E_GOOD * 3.0
    with pytest.raises(LamValueError, match="norm 3"):
        validate_embeddings(e)
    out = validate_embeddings(e, normalize=True)
    assert np.allclose(np.linalg.norm(out.astype(np.float64), axis=1), 1.0, atol=1e-6), "rows must be unit after normalize"
    assert np.array_equal(substitute(e, 0.9, normalize=True).pi, substitute(out, 0.9).pi), "normalize=True must act as pre-normalised input"


def test_quantizer_overflow_is_refused():
    """SPEC §5: a Q_ε code that would overflow int16 raises instead of wrapping silently."""
    with pytest.raises(LamValueError, match="overflows int16"):
        substitute(E_GOOD, 0.9, rel=1e-6)


def test_empty_input_gives_empty_result():
    """N = 0 is valid: an empty map, δ̂ = 0, and the digest of the empty string."""
    res = substitute(np.zeros((0, 4), np.float32), 0.9)
    assert res.pi.shape == (0,) and res.delta_hat == 0.0, "empty input must give an empty map and δ̂ = 0"
    assert res.deletion_digest == "e3b0c44298fc1c14", "empty deletion set digests the empty string (SHA-256 e3b0c442...)"


def test_overflowing_row_is_refused_even_with_normalize():
    """A finite row whose squared norm overflows float64 is refused, never normalised to zeros."""
    e = np.array([[1e200, 0.0], [1.0, 0.0]])
    for normalize in (False, True):
        with pytest.raises(LamValueError, match="row 0 is too large"):
            validate_embeddings(e, normalize=normalize)
