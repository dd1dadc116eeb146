"""Tests written for mutants that survived ``make mutation`` (docs/mutation.md): each names the
mutation it kills."""

from __future__ import annotations

import numpy as np
import pytest

from lam_ref.digest import digest_lines, map_digest
from lam_ref.geometry import (
    LamValueError,
    kept_mask,
    sq_dist,
    t_from_delta,
    validate_embeddings,
    validate_positive,
    validate_threshold,
)


def test_t_from_delta_range_is_closed_at_two():
    """``δ`` lies in ``[0, 2]`` for unit vectors (eq. 1): 2 maps to -1, anything above is refused
    naming ``delta``. Kills ``d > 2.0`` → ``d > 3.0`` and a lost argument name."""
    assert t_from_delta(2.0) == -1.0, "δ = 2 is antipodal: t = -1"
    with pytest.raises(LamValueError, match=r"delta must be in \[0, 2\]"):
        t_from_delta(2.5)
    with pytest.raises(LamValueError, match="^delta must be a positive"):
        t_from_delta(-0.5)


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


def test_kept_mask_with_offset_ids():
    """Global ids from ``first_id`` (a turn of Algorithm 1): a row is kept iff ``π[i] == i``."""
    assert kept_mask(np.array([5, 5, 7]), first_id=5).tolist() == [True, False, True], "offset ids"


def test_digests_are_sixteen_hex_of_sha256():
    """The digest is the first 16 hex digits of SHA-256 over the ASCII lines ``i:π[i]`` joined
    by newlines (SPEC §10)."""
    import hashlib

    assert digest_lines(["0:0", "1:0"]) == hashlib.sha256(b"0:0\n1:0").hexdigest()[:16], "digest_lines"
    assert map_digest(np.array([0, 0], dtype=np.int32)) == digest_lines(["0:0", "1:0"]), "map digest of int32 ids"


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


def test_deletion_digest_names_a_repeated_id():
    """A deletion set with a repeated id is refused with a message saying so (SPEC §10)."""
    from lam_ref.digest import deletion_digest

    with pytest.raises(ValueError, match="^deleted_ids contains a repeated id$"):
        deletion_digest([1, 1])


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


def test_validate_int_names_its_minimum():
    """The default minimum is 0 (counts); a minimum other than 0 and 1 is named in the message."""
    from lam_ref.geometry import validate_int

    assert validate_int(0, "k") == 0, "0 is a valid count by default"

    with pytest.raises(LamValueError, match="^block must be an integer >= 8, got 4$"):
        validate_int(4, "block", minimum=8)
    with pytest.raises(LamValueError, match=r"^n must be an integer, got 1.5 \(float\)$"):
        validate_int(1.5, "n", minimum=None)
