"""The merge rule and its input validation (SPEC §2; claim EQ1)."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

from lam_ref import OnlineSession, oracle, substitute
from lam_ref.bands import BandSettings, band_recall
from lam_ref.geometry import (
    LamValueError,
    delta_from_t,
    delta_sq,
    kept_mask,
    merges,
    sq_dist,
    t_from_delta,
    t_prime,
    validate_embeddings,
    validate_int,
    validate_positive,
    validate_real,
    validate_threshold,
)


def _unit(rows):
    a = np.asarray(rows, dtype=np.float64)
    return (a / np.linalg.norm(a, axis=1, keepdims=True)).astype(np.float32)


# ------------------------------------------------------------------------------------------------
# The merge rule (SPEC §2, eq. 1): δ and t, the inclusive tie, squared distances in float64, the exact pair kernel
# ------------------------------------------------------------------------------------------------


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


def test_t_from_delta_range_is_closed_at_two():
    """``δ`` lies in ``[0, 2]`` for unit vectors (eq. 1): 2 maps to -1, anything above is refused
    naming ``delta``. Kills ``d > 2.0`` → ``d > 3.0`` and a lost argument name."""
    assert t_from_delta(2.0) == -1.0, "δ = 2 is antipodal: t = -1"
    with pytest.raises(LamValueError, match=r"delta must be in \[0, 2\]"):
        t_from_delta(2.5)
    with pytest.raises(LamValueError, match="^delta must be a positive"):
        t_from_delta(-0.5)


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


@pytest.mark.claim("THM2")
def test_t_prime_is_radius_two_delta():
    """THM2: sqrt(2 - 2t') = 2 sqrt(2 - 2t) for t' = 4t - 3 (checked numerically for t >= 0.5)."""
    for t in np.linspace(0.5, 1.0, 11):
        assert math.isclose(math.sqrt(max(0.0, 2 - 2 * t_prime(t))), 2 * delta_from_t(t), rel_tol=1e-12, abs_tol=1e-12), t
    assert t_prime(0.95) == pytest.approx(0.8), "t' at 0.95 must be 0.8"


def test_sq_dist_is_float64_for_float32_inputs():
    """``sq`` is computed in float64 from float32 rows (SPEC §2): the result differs from the
    float32 computation. Kills dropping the float64 casts."""
    a = np.array([1.0, 0.0], dtype=np.float32)
    b = np.array([np.float32(0.1), np.float32(0.3)], dtype=np.float32)
    d = a.astype(np.float64) - b.astype(np.float64)
    want = float((d * d).sum())
    in_float32 = float(((a - b) * (a - b)).sum(dtype=np.float32))
    assert want != in_float32, "the example must separate float64 from float32 arithmetic"
    assert sq_dist(a, b) == want, f"sq {sq_dist(a, b)!r} vs float64 {want!r} (float32 gives {in_float32!r})"


def test_within_delta_pairs_at_the_extremes():
    """The exact within-δ kernel (SPEC §2): antipodal rows at ``t = -1`` (δ² = 4) are a pair (the
    filter threshold is negative there); an exact tie ``sq == δ²`` is a pair (inclusive); a pair
    a hair beyond δ passes the float32 filter but not the exact rule; a block starting at row 1
    reports global row ids. Kills ``/ 2.0`` → ``/ 3.0``, ``<=`` → ``<``, a dropped exact
    confirmation and ``r + start`` → ``r - start``."""
    from lam_ref.geometry import delta_sq, within_delta_pairs

    anti = np.array([[1, 0], [-1, 0]], dtype=np.float32)
    rows, cols = within_delta_pairs(anti, 0, 2, delta_sq(-1.0))
    assert (rows.tolist(), cols.tolist()) == ([0], [1]), "antipodal rows are within δ = 2 at t = -1"
    tie = np.array([[1, 0], [0, 1]], dtype=np.float32)
    rows, cols = within_delta_pairs(tie, 0, 2, delta_sq(0.0))  # sq = 2.0 = δ² exactly
    assert (rows.tolist(), cols.tolist()) == ([0], [1]), "sq == δ² merges (inclusive rule)"
    hair = np.array([[1, 0], [-1e-8, 1]], dtype=np.float32)  # sq = 2 + 2e-8 > δ² = 2, dot within the filter's slack
    sq = float(((hair[0].astype(np.float64) - hair[1].astype(np.float64)) ** 2).sum())
    assert sq > delta_sq(0.0), f"the fixture must lie beyond δ: sq = {sq!r}"
    rows, cols = within_delta_pairs(hair, 0, 2, delta_sq(0.0))
    assert rows.size == 0, f"a pair at sq = {sq!r} > δ² = 2 is not within δ, got {rows.tolist()}"
    three = np.array([[0, 1], [1, 0], [1, 0]], dtype=np.float32)
    rows, cols = within_delta_pairs(three, 1, 3, delta_sq(0.9))
    assert (rows.tolist(), cols.tolist()) == ([1], [2]), f"global ids from start = 1, got {rows.tolist()}, {cols.tolist()}"
    assert rows.ndim == 1 and rows.dtype == np.int64, "int64 id arrays"


def test_kept_mask_with_offset_ids():
    """Global ids from ``first_id`` (a turn of Algorithm 1): a row is kept iff ``π[i] == i``."""
    assert kept_mask(np.array([5, 5, 7]), first_id=5).tolist() == [True, False, True], "offset ids"


# ------------------------------------------------------------------------------------------------
# The float32 filter's error bound (SPEC §5.3): Higham's γ_D with the norm tolerance, never rounded up
# ------------------------------------------------------------------------------------------------


def test_dot_error_bound_is_higham_gamma_with_the_norm_tolerance():
    """The float32 dot-product error bound is ``γ_D (1 + NORM_TOLERANCE)² + 1e-9`` with
    ``γ_D = D·u / (1 - D·u)``, ``u = 2⁻²⁴`` (Higham, Accuracy and Stability, §3.1), computed here
    from the formula; infinite once ``D·u >= 1``. Kills every arithmetic mutation of it."""
    from lam_ref.geometry import NORM_TOLERANCE, dot_error_bound

    u = 2.0**-24
    for dim in (1, 2, 384, 4096):
        gamma = dim * u / (1 - dim * u)
        want = gamma * (1 + NORM_TOLERANCE) * (1 + NORM_TOLERANCE) + 1e-9
        assert dot_error_bound(dim) == pytest.approx(want, rel=1e-12), f"D = {dim}: {dot_error_bound(dim)!r} vs {want!r}"
    assert dot_error_bound(2**24) == float("inf"), "D·u = 1: no finite bound"
    assert dot_error_bound(2**24 - 1) < float("inf"), "D·u < 1: finite"


def test_filter_threshold_never_rounds_up():
    """The float32 filter threshold is at most the float64 bound it rounds (a higher filter would
    drop a true pair), and strictly below it where float32 cannot represent it."""
    from lam_ref.geometry import dot_error_bound, filter_threshold

    rng = np.random.default_rng(0)
    norms = 1 + rng.uniform(-1e-4, 1e-4, size=1000)
    for d2 in (0.1, 0.37, 1.3):
        got = filter_threshold(norms, 0.9999, d2, 16)
        exact = (norms + 0.9999 - d2 - 1e-12) / 2.0 - dot_error_bound(16)
        assert got.dtype == np.float32, "a float32 threshold"
        assert np.all(got.astype(np.float64) <= exact), f"rounded up at d2 = {d2}"
        assert np.all(exact - got.astype(np.float64) < 1.2e-7), "at most one float32 step below"


# ------------------------------------------------------------------------------------------------
# Thresholds, numbers and band settings: refused in one message naming the argument and the value (SPEC §2)
# ------------------------------------------------------------------------------------------------


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


def test_validators_name_the_argument_and_the_value():
    """Messages start with the argument's name and show the offending value, shortened to 80
    characters. Kills mutations of ``_short`` and of the value passed to it."""
    long = "x" * 200
    with pytest.raises(LamValueError) as err:
        validate_threshold(long)
    msg = str(err.value)
    assert msg.startswith("t must be a real number"), msg
    assert "'xxxx" in msg and "..." in msg and len(msg) < 160, f"the value is shown, shortened: {msg}"
    with pytest.raises(LamValueError, match="^rel must be a positive finite number, got 'a'"):
        validate_positive("a", "rel")
    assert validate_positive(np.float32(0.5), "rel") == 0.5, "numpy scalars are numbers"


def test_short_keeps_eighty_characters_and_cuts_longer_values():
    """A value whose repr has 80 characters is shown whole; 81 is cut to 77 + ``...`` (80)."""
    whole = "x" * 78  # repr: 80 characters with the quotes
    with pytest.raises(LamValueError) as err:
        validate_threshold(whole)
    assert f"got {whole!r} (str)" in str(err.value), f"an 80-character repr is shown whole: {err.value}"
    cut = "x" * 79  # repr: 81 characters
    with pytest.raises(LamValueError) as err:
        validate_threshold(cut)
    assert f"got {repr(cut)[:77]}... (str)" in str(err.value), f"an 81-character repr is cut to 80: {err.value}"


def test_validate_int_names_its_minimum():
    """The default minimum is 0 (counts); a minimum other than 0 and 1 is named in the message."""
    from lam_ref.geometry import validate_int

    assert validate_int(0, "k") == 0, "0 is a valid count by default"

    with pytest.raises(LamValueError, match="^block must be an integer >= 8, got 4$"):
        validate_int(4, "block", minimum=8)
    with pytest.raises(LamValueError, match=r"^n must be an integer, got 1.5 \(float\)$"):
        validate_int(1.5, "n", minimum=None)


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


# ------------------------------------------------------------------------------------------------
# Embeddings: every row checked, refusals naming the argument and the row, normalize on request (SPEC §2)
# ------------------------------------------------------------------------------------------------


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


def test_validate_embeddings_single_row_and_integer_rows():
    """One row is a valid set (``n == 1`` is not the empty case); integer rows of unit norm are
    accepted and returned as float32. Kills ``n == 0`` → ``n == 1``."""
    one = validate_embeddings(np.array([[0.6, 0.8]]))
    assert one.shape == (1, 2) and one.dtype == np.float32, f"one row kept: {one!r}"
    ints = validate_embeddings(np.array([[1, 0], [0, 1]], dtype=np.int64))
    assert ints.dtype == np.float32 and ints.tolist() == [[1.0, 0.0], [0.0, 1.0]], "integer unit rows"
    empty = validate_embeddings(np.zeros((0, 3)))
    assert empty.shape == (0, 3), "an empty set keeps its dimension"
    with pytest.raises(LamValueError, match="is empty"):
        validate_embeddings(np.zeros((0, 3)), allow_empty=False)


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


def test_online_dimension_mismatch_is_named():
    """SPEC §2: a turn whose D differs from the session's is refused, naming turn_embeddings and both D."""
    s = OnlineSession(0.9)
    s.admit(E_GOOD)
    with pytest.raises(ValueError) as info:
        s.admit(_unit(np.ones((2, 4))))
    msg = str(info.value)
    assert "turn_embeddings" in msg and "D = 4" in msg and "expected 8" in msg, msg


def test_normalize_true_rescales_instead_of_refusing():
    """SPEC §2: rows off the unit sphere are accepted only when the caller asks for normalize=True."""
    e = E_GOOD * 3.0
    with pytest.raises(LamValueError, match="norm 3"):
        validate_embeddings(e)
    out = validate_embeddings(e, normalize=True)
    assert np.allclose(np.linalg.norm(out.astype(np.float64), axis=1), 1.0, atol=1e-6), "rows must be unit after normalize"
    assert np.array_equal(substitute(e, 0.9, normalize=True).pi, substitute(out, 0.9).pi), "normalize=True must act as pre-normalised input"


def test_overflowing_row_is_refused_even_with_normalize():
    """A finite row whose squared norm overflows float64 is refused, never normalised to zeros."""
    e = np.array([[1e200, 0.0], [1.0, 0.0]])
    for normalize in (False, True):
        with pytest.raises(LamValueError, match="row 0 is too large"):
            validate_embeddings(e, normalize=normalize)


def test_validate_embeddings_overflow_raises_without_warnings():
    """An overflowing row is refused with an error, never with a RuntimeWarning on the way
    (overflow and invalid operations in the norm are expected and handled)."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(LamValueError, match="row 0 is too large"):
            validate_embeddings(np.array([[1e200, 1e200], [1.0, 0.0]]))
        with pytest.raises(LamValueError, match="row 1 has a non-finite value"):
            validate_embeddings(np.array([[1.0, 0.0], [np.inf, -np.inf]]))


def test_quantizer_overflow_is_refused():
    """SPEC §5: a Q_ε code that would overflow int16 raises instead of wrapping silently."""
    with pytest.raises(LamValueError, match="overflows int16"):
        substitute(E_GOOD, 0.9, rel=1e-6)


def test_empty_input_gives_empty_result():
    """N = 0 is valid: an empty map, δ̂ = 0, and the digest of the empty string."""
    res = substitute(np.zeros((0, 4), np.float32), 0.9)
    assert res.pi.shape == (0,) and res.delta_hat == 0.0, "empty input must give an empty map and δ̂ = 0"
    assert res.deletion_digest == "e3b0c44298fc1c14", "empty deletion set digests the empty string (SHA-256 e3b0c442...)"


# ------------------------------------------------------------------------------------------------
# Representative maps: length and 0 <= π[i] <= i (SPEC §1)
# ------------------------------------------------------------------------------------------------


def test_validate_map_refuses_wrong_length_and_forward_representatives():
    """``validate_map`` checks by default the length, ``0 <= π[i] <= i`` (each bound on its own)
    and names the argument and index. Kills ``or`` → ``and``, ``|`` → ``&``, a lost message and
    ``structure=False`` as the default."""
    from lam_ref.geometry import validate_map

    with pytest.raises(LamValueError, match=r"pi must be an integer array of shape \(3,\)"):
        validate_map(np.array([0, 0]), 3)
    with pytest.raises(LamValueError, match=r"^pi\[1\] = 5 is not a retained id <= 1$"):
        validate_map([0, 5], 2)
    with pytest.raises(LamValueError, match=r"^pi\[1\] = -1 is not a retained id <= 1$"):
        validate_map([0, -1], 2)
    with pytest.raises(LamValueError, match=r"^pi\[2\] = 1 points to a chunk that is itself merged"):
        validate_map([0, 0, 1], 3)
