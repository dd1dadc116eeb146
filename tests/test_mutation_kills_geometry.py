"""Tests written for the mutants of :mod:`lam_ref.geometry` that survived ``make mutation``
(docs/mutation.md, section ``geometry``): the merge rule's validators (SPEC §2) name the argument
and the value, accept exactly the documented domain, and check every row of large inputs."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from lam_ref.geometry import (
    LamValueError,
    delta_sq,
    merges,
    sq_dist,
    t_from_delta,
    validate_embeddings,
    validate_int,
    validate_real,
    validate_threshold,
)


def _unit_rows(n: int, d: int) -> np.ndarray:
    rng = np.random.default_rng(7)
    e = rng.standard_normal((n, d))
    return (e / np.linalg.norm(e, axis=1, keepdims=True)).astype(np.float32)


def test_validate_embeddings_checks_every_row_past_the_first_block():
    """Norms are computed in blocks of 4096 rows: a zero row, a non-unit row and a NaN just past
    the first block are found and named by their row number; a valid set of 8200 rows passes."""
    e = _unit_rows(8200, 3)
    out = validate_embeddings(e)
    assert out.shape == (8200, 3) and out.dtype == np.float32, f"a valid large set passes: {out.shape} {out.dtype}"
    for row in (4096, 4097, 8199):
        bad = e.copy()
        bad[row] = 0.0
        with pytest.raises(LamValueError, match=rf"^embeddings row {row} is a zero vector"):
            validate_embeddings(bad)
        bad = e.copy()
        bad[row] *= 2.0
        with pytest.raises(LamValueError, match=rf"^embeddings row {row} has norm 2, not 1 within 0\.0001; pass normalize=True"):
            validate_embeddings(bad)
    normed = validate_embeddings(e * 3.0, normalize=True)
    assert np.allclose(np.linalg.norm(normed.astype(np.float64), axis=1), 1.0, atol=1e-6), "rows past 4096 are normalised too"
    assert normed.dtype == np.float32 and normed.flags.c_contiguous, f"normalize=True returns C-contiguous float32: {normed.dtype}"


def test_validate_embeddings_messages_name_the_argument_and_the_row():
    """Every refusal starts with the argument's name (here a custom one) and shows the offending
    value: the dtype, the shape, the dimension, the first six values of a non-finite row."""
    with pytest.raises(LamValueError, match=r"^queries must be a 2-D numeric array, could not convert: "):
        validate_embeddings([[1.0, 0.0], [1.0]], "queries")
    with pytest.raises(LamValueError, match=r"^queries must be a numeric \(float\) array, got dtype complex128$"):
        validate_embeddings(np.ones((1, 2), dtype=np.complex128), "queries")
    with pytest.raises(LamValueError, match=r"^queries must be a numeric \(float\) array, got dtype bool$"):
        validate_embeddings(np.ones((1, 2), dtype=bool), "queries")
    with pytest.raises(LamValueError, match=r"^queries has empty dimension D = 0 \(shape \(2, 0\)\)$"):
        validate_embeddings(np.zeros((2, 0)), "queries")
    with pytest.raises(LamValueError, match=r"^queries has dimension D = 3, expected 2 \(dimension mismatch\)$"):
        validate_embeddings(_unit_rows(2, 3), "queries", dim=2)
    with pytest.raises(LamValueError, match=r"^queries is empty \(shape \(0, 2\)\)$"):
        validate_embeddings(np.zeros((0, 2)), "queries", allow_empty=False)
    row = np.full((2, 8), 0.25)
    row[1, 7] = np.nan
    with pytest.raises(LamValueError) as err:
        validate_embeddings(row, "queries")
    assert str(err.value) == "queries row 1 has a non-finite value (NaN or inf): [0.25, 0.25, 0.25, 0.25, 0.25, 0.25]", (
        f"the row number and its first six values: {err.value}"
    )
    with pytest.raises(LamValueError, match=r"^queries row 0 is too large: its squared norm overflows float64$"):
        validate_embeddings(np.array([[1e200, 0.0]]), "queries")


def test_validate_embeddings_accepts_one_dimension_and_the_matching_dim():
    """``D = 1`` is a valid dimension (only ``D = 0`` is refused); ``dim`` equal to ``D`` passes;
    an empty set keeps its dimension and is float32 like every result."""
    one = validate_embeddings(np.array([[1.0], [-1.0]]))
    assert one.tolist() == [[1.0], [-1.0]] and one.dtype == np.float32, f"D = 1 rows: {one!r}"
    assert validate_embeddings(_unit_rows(2, 3), dim=3).shape == (2, 3), "dim equal to D passes"
    empty = validate_embeddings(np.zeros((0, 5)), dim=5)
    assert empty.shape == (0, 5) and empty.dtype == np.float32, f"empty result: {empty.shape} {empty.dtype}"
    f64 = validate_embeddings(np.array([[0.6, 0.8]], dtype=np.float64))
    assert f64.dtype == np.float32 and f64.flags.c_contiguous, "float64 unit rows come back as C-contiguous float32"
    fortran = validate_embeddings(np.asfortranarray(_unit_rows(4, 3)))
    assert fortran.flags.c_contiguous, "a Fortran-ordered input comes back C-contiguous"


def test_validate_embeddings_overflow_raises_without_warnings():
    """An overflowing row is refused with an error, never with a RuntimeWarning on the way
    (overflow and invalid operations in the norm are expected and handled)."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(LamValueError, match="row 0 is too large"):
            validate_embeddings(np.array([[1e200, 1e200], [1.0, 0.0]]))
        with pytest.raises(LamValueError, match="row 1 has a non-finite value"):
            validate_embeddings(np.array([[1.0, 0.0], [np.inf, -np.inf]]))


def test_validate_real_and_threshold_domains():
    """``t`` is any real in the closed interval ``[-1, 1]`` (SPEC §2); a non-finite value is
    refused naming it; ``positive`` refuses ``0`` and negative values but ``validate_real`` alone
    accepts them."""
    assert validate_threshold(1.0) == 1.0 and validate_threshold(-1.0) == -1.0, "both ends of [-1, 1] are valid"
    assert validate_threshold(np.float32(0.5), "t_prime") == 0.5, "numpy scalars are real numbers"
    with pytest.raises(LamValueError, match=r"^tau must be in \[-1, 1\], got 1\.0000001$"):
        validate_threshold(1.0000001, "tau")
    with pytest.raises(LamValueError, match=r"^tau must be finite, got nan$"):
        validate_threshold(float("nan"), "tau")
    with pytest.raises(LamValueError, match=r"^tau must be a real number, got True \(bool\)$"):
        validate_threshold(True, "tau")
    assert validate_real(-3, "x") == -3.0, "validate_real accepts negative values unless positive=True"
    assert validate_real(0, "x") == 0.0, "and zero"
    with pytest.raises(LamValueError, match=r"^x must be a positive finite number, got -2\.0$"):
        validate_real(-2, "x", positive=True)
    with pytest.raises(LamValueError, match=r"^x must be a positive finite number, got inf$"):
        validate_real(float("inf"), "x", positive=True)


def test_validate_int_accepts_exactly_the_integers_from_its_minimum():
    """``minimum`` is inclusive; ``None`` admits negative integers; bools and floats are refused
    whatever the minimum."""
    assert validate_int(1, "r", minimum=1) == 1, "minimum 1 admits 1"
    assert validate_int(8, "block", minimum=8) == 8, "the minimum itself is valid"
    assert validate_int(-5, "offset", minimum=None) == -5, "minimum None admits negative integers"
    with pytest.raises(LamValueError, match=r"^r must be a positive integer, got 0$"):
        validate_int(0, "r", minimum=1)
    with pytest.raises(LamValueError, match=r"^r must be a positive integer, got False \(bool\)$"):
        validate_int(False, "r", minimum=1)
    with pytest.raises(LamValueError, match=r"^k must be a non-negative integer, got 2\.0 \(float\)$"):
        validate_int(2.0, "k")


def test_t_from_delta_endpoints_and_sq_dist_dimension_check():
    """``δ = 0`` is ``t = 1`` (identical rows only); ``δ = 1`` is ``t = 1/2``; rows of different
    dimension are refused with both dimensions named (SPEC §2)."""
    assert t_from_delta(0) == 1.0 and t_from_delta(0.0) == 1.0, "δ = 0 gives t = 1"
    assert t_from_delta(1.0) == 0.5, "δ = 1 gives t = 1/2"
    assert t_from_delta(np.sqrt(2.0)) == pytest.approx(0.0, abs=1e-15), "δ = √2 is orthogonality"
    with pytest.raises(LamValueError, match=r"^b has dimension 3, expected 2 \(dimension mismatch\)$"):
        sq_dist(np.array([1.0, 0.0]), np.array([1.0, 0.0, 0.0]))
    a, b = np.array([1.0, 0.0], dtype=np.float32), np.array([0.0, 1.0], dtype=np.float32)
    assert merges(a, b, 0.0) and not merges(a, b, 1e-12), "sq = 2 = δ² at t = 0 merges (inclusive), not just above"
    assert delta_sq(0.5) == 1.0 and delta_sq(-1.0) == 4.0, "δ² = 2 - 2t"
