"""The merge rule and input validation: the one place where LAM decides "within δ" (SPEC §2).

Paper: §2.1 eq. (1) (``EQ1``: ``||a-b||² = 2 - 2cos(a, b)`` for unit vectors, so merging at
``cos >= t`` is ``||a-b|| <= δ = sqrt(2-2t)``), Theorem 2 (``t' = 4t - 3`` is the threshold of
radius ``2δ``).

The bit-exact rule (SPEC §2): ``sq(a, b) = sum((float64(a) - float64(b))**2)`` and
``δ² = 2.0 - 2.0*t`` in float64; merge iff ``sq <= δ²`` (inclusive). Every code path in lam_ref
either calls :func:`sq_dist` / :func:`merges` or filters with a faster approximation and then
confirms with :func:`sq_dist` (see :mod:`lam_ref.substitution`).
"""

from __future__ import annotations

import math
import numbers
from typing import Any

import numpy as np

__all__ = [
    "LamValueError",
    "NORM_TOLERANCE",
    "TIE_BAND",
    "delta_from_t",
    "delta_sq",
    "short_repr",
    "dot_error_bound",
    "filter_threshold",
    "kept_mask",
    "merges",
    "sq_dist",
    "sq_dist_rows",
    "t_from_delta",
    "t_prime",
    "validate_embeddings",
    "validate_int",
    "validate_map",
    "validate_positive",
    "validate_positive_int",
    "validate_real",
    "validate_threshold",
    "within_delta_pairs",
]

#: Rows whose l2 norm differs from 1 by more than this are rejected (SPEC §2).
NORM_TOLERANCE = 1e-4
#: Pairs with ``|sq - δ²| <= TIE_BAND`` may be decided either way by a conforming implementation
#: that computes distances another way (SPEC §2); generated conformance data avoids the band.
TIE_BAND = 1e-9


class LamValueError(ValueError):
    """A bad argument. The message names the argument and the offending value or row (SPEC §2)."""


def short_repr(value: Any, width: int = 80) -> str:
    """``repr(value)`` in at most ``width`` characters (cut with ``...``): how an error message
    names an offending value (SPEC §2), here and in the conformance suite.

    Examples:
        >>> short_repr([1, 2, 3]), short_repr("x" * 100, 10)
        ('[1, 2, 3]', "'xxxxxx...")
    """
    text = repr(value)
    return text if len(text) <= width else text[: width - 3] + "..."



def validate_real(value: Any, name: str, *, positive: bool = False) -> float:
    """The scalar-validator family's real member: ``value`` as a finite float (``> 0`` too when
    ``positive``), else :class:`LamValueError` naming ``name`` and the value (SPEC §2).

    Args:
        value: an int, float, ``Fraction`` or numpy scalar (never a bool or a string).
        name: the argument's name in the message.
        positive: require ``value > 0``.

    Returns:
        ``float(value)``.

    Raises:
        LamValueError: for a non-number, NaN, an infinity, or (``positive``) a value ``<= 0``.

    Examples:
        >>> validate_real(3, "rho")
        3.0
        >>> validate_real(0.0, "rel", positive=True)
        Traceback (most recent call last):
        ...
        lam_ref.geometry.LamValueError: rel must be a positive finite number, got 0.0
    """
    what = "a positive finite number" if positive else "a real number"
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise LamValueError(f"{name} must be {what}, got {short_repr(value)} ({type(value).__name__})")
    out = float(value)
    if not math.isfinite(out):
        raise LamValueError(f"{name} must be {'a positive finite number' if positive else 'finite'}, got {out!r}")
    if positive and out <= 0.0:
        raise LamValueError(f"{name} must be a positive finite number, got {out!r}")
    return out


def validate_int(value: Any, name: str, *, minimum: int | None = 0) -> int:
    """The scalar-validator family's integer member: ``value`` as an int ``>= minimum`` (any
    integer when ``minimum`` is ``None``), else :class:`LamValueError` naming ``name``.

    Examples:
        >>> validate_int(np.int64(4), "r", minimum=1)
        4
        >>> validate_int(-1, "min_chars")
        Traceback (most recent call last):
        ...
        lam_ref.geometry.LamValueError: min_chars must be a non-negative integer, got -1
    """
    what = {None: "an integer", 0: "a non-negative integer", 1: "a positive integer"}.get(minimum, f"an integer >= {minimum}")
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise LamValueError(f"{name} must be {what}, got {short_repr(value)} ({type(value).__name__})")
    if minimum is not None and int(value) < minimum:
        raise LamValueError(f"{name} must be {what}, got {int(value)}")
    return int(value)


def validate_threshold(t: Any, name: str = "t") -> float:
    """Return ``t`` as a float, or raise :class:`LamValueError` unless ``-1 <= t <= 1`` (SPEC §2).

    Examples:
        >>> validate_threshold(0.95)
        0.95
    """
    value = validate_real(t, name)
    if not -1.0 <= value <= 1.0:
        raise LamValueError(f"{name} must be in [-1, 1], got {value!r}")
    return value


def validate_positive(value: Any, name: str) -> float:
    """Return ``value`` as a float, or raise unless it is finite and ``> 0`` (e.g. ``rel``)."""
    return validate_real(value, name, positive=True)


def validate_positive_int(value: Any, name: str) -> int:
    """Return ``value`` as an int, or raise unless it is an integer ``>= 1`` (e.g. band width ``r``)."""
    return validate_int(value, name, minimum=1)


def delta_from_t(t: float) -> float:
    """``δ = sqrt(2 - 2t)`` (eq. 1, claim ``EQ1``)."""
    return math.sqrt(delta_sq(t))


def delta_sq(t: float) -> float:
    """``δ² = 2.0 - 2.0*t`` in float64, the exact right-hand side of the merge test (SPEC §2)."""
    value = validate_threshold(t)
    return 2.0 - 2.0 * value


def t_from_delta(delta: float) -> float:
    """Inverse of :func:`delta_from_t`: ``t = 1 - δ²/2`` for ``0 <= δ <= 2`` (eq. 1)."""
    d = validate_positive(delta, "delta") if delta != 0 else 0.0
    if d > 2.0:
        raise LamValueError(f"delta must be in [0, 2] (unit vectors), got {d!r}")
    return 1.0 - d * d / 2.0


def t_prime(t: float) -> float:
    """Threshold of radius ``2δ``: ``t' = 4t - 3`` (Theorem 2, claim ``THM2``).

    Below ``t = 0.5`` the radius ``2δ`` exceeds 2 and ``t'`` falls below -1: every pair of unit
    vectors is then within ``2δ``; the value is returned unclipped and callers clip when they
    need a valid threshold.
    """
    return 4.0 * validate_threshold(t) - 3.0


def sq_dist(a: np.ndarray, b: np.ndarray) -> float:
    """Squared l2 distance in float64, coordinate by coordinate (SPEC §2, the bit-exact rule)."""
    a64 = np.asarray(a, dtype=np.float64).reshape(1, -1)
    b64 = np.asarray(b, dtype=np.float64).reshape(1, -1)
    if a64.shape != b64.shape:
        raise LamValueError(f"b has dimension {b64.shape[1]}, expected {a64.shape[1]} (dimension mismatch)")
    return float(sq_dist_rows(a64, np.zeros(1, dtype=np.int64), b64)[0])


def sq_dist_rows(e: np.ndarray, rows: np.ndarray, others: np.ndarray) -> np.ndarray:
    """Exact float64 squared distances from each ``e[rows[k]]`` to ``others[k]`` (vectorised :func:`sq_dist`).

    Every exact distance in lam_ref goes through this function, so the summation order (numpy's
    row reduction of ``diff*diff``) is the same on every code path.
    """
    diff = np.asarray(e)[rows].astype(np.float64) - np.asarray(others, dtype=np.float64)
    return (diff * diff).sum(axis=1)


def merges(a: np.ndarray, b: np.ndarray, t: float) -> bool:
    """The merge decision: ``sq(a, b) <= δ²`` (inclusive; SPEC §2, Algorithm 1 line 8)."""
    return sq_dist(a, b) <= delta_sq(t)


def validate_embeddings(
    embeddings: Any,
    name: str = "embeddings",
    *,
    normalize: bool = False,
    dim: int | None = None,
    allow_empty: bool = True,
) -> np.ndarray:
    """Check an ``(N, D)`` array of unit rows and return it as C-contiguous float32 (SPEC §1, §2).

    Raises :class:`LamValueError` naming ``name`` and the offending value or row for: a non-array
    or non-numeric input, rank other than 2, ``D == 0``, a dimension other than ``dim``, non-finite
    values, zero rows, and rows whose norm differs from 1 by more than :data:`NORM_TOLERANCE`
    (unless ``normalize=True``, which rescales nonzero rows to unit norm).
    """
    try:
        arr = np.asarray(embeddings)
    except Exception as exc:  # ragged lists etc.
        raise LamValueError(f"{name} must be a 2-D numeric array, could not convert: {exc}") from exc
    if arr.dtype.kind not in "fiu":
        raise LamValueError(f"{name} must be a numeric (float) array, got dtype {arr.dtype}")
    if arr.ndim != 2:
        raise LamValueError(f"{name} must be 2-D (N, D), got shape {arr.shape}")
    n, d = arr.shape
    if d == 0:
        raise LamValueError(f"{name} has empty dimension D = 0 (shape {arr.shape})")
    if dim is not None and d != dim:
        raise LamValueError(f"{name} has dimension D = {d}, expected {dim} (dimension mismatch)")
    if n == 0:
        if not allow_empty:
            raise LamValueError(f"{name} is empty (shape {arr.shape})")
        return np.zeros((0, d), dtype=np.float32)
    norms = np.empty(n, dtype=np.float64)
    with np.errstate(over="ignore", invalid="ignore"):
        for s in range(0, n, 4096):  # row blocks: the same formula for every row, no N×D float64 copy
            block = arr[s : s + 4096].astype(np.float64, copy=False)
            norms[s : s + 4096] = np.sqrt((block * block).sum(axis=1))
    if not np.isfinite(norms).all():  # a NaN/inf value (or an overflowing square): find the row
        finite = np.isfinite(arr).all(axis=1)
        if not finite.all():
            row = int(np.flatnonzero(~finite)[0])
            raise LamValueError(f"{name} row {row} has a non-finite value (NaN or inf): {short_repr(arr[row][:6].tolist())}")
        row = int(np.flatnonzero(~np.isfinite(norms))[0])
        raise LamValueError(f"{name} row {row} is too large: its squared norm overflows float64")
    zero = norms == 0.0
    if zero.any():
        row = int(np.flatnonzero(zero)[0])
        raise LamValueError(f"{name} row {row} is a zero vector; a zero row has no direction")
    if normalize:
        out = np.empty((n, d), dtype=np.float32)
        for s in range(0, n, 4096):
            out[s : s + 4096] = arr[s : s + 4096].astype(np.float64, copy=False) / norms[s : s + 4096, None]
        return out
    bad = np.abs(norms - 1.0) > NORM_TOLERANCE
    if bad.any():
        row = int(np.flatnonzero(bad)[0])
        raise LamValueError(
            f"{name} row {row} has norm {norms[row]:.6g}, not 1 within {NORM_TOLERANCE:g}; "
            "pass normalize=True to rescale rows to unit norm"
        )
    return np.ascontiguousarray(arr, dtype=np.float32)


# ---------------------------------------------------------------------------------------------
# the exact within-δ kernel (SPEC §2): float32 products filtered with a provable margin, then
# every surviving pair confirmed with the exact float64 rule
# ---------------------------------------------------------------------------------------------
_U32 = 2.0**-24


def dot_error_bound(dim: int) -> float:
    """Bound on ``|fl32(a·b) - a·b|`` for rows of norm ``<= 1 + NORM_TOLERANCE``, any summation
    order (Higham's ``γ_D``; SPEC §2)."""
    du = dim * _U32
    gamma = du / (1.0 - du) if du < 1 else math.inf
    return gamma * (1.0 + NORM_TOLERANCE) ** 2 + 1e-9


def filter_threshold(norms_a: np.ndarray, min_norm_b: float, d2: float, dim: int) -> np.ndarray:
    """Per-row float32 lower bound on ``fl32(a·b)`` for every pair that could satisfy ``sq <= δ²``.

    From ``sq = |a|² + |b|² - 2a·b <= δ²``: ``a·b >= (|a|² + |b|² - δ²)/2``, minus the rounding
    error of the float32 product, rounded down to float32 (never up: a filter that is too high
    would drop a true pair).
    """
    thr = (norms_a + min_norm_b - d2 - 1e-12) / 2.0 - dot_error_bound(dim)
    thr32 = thr.astype(np.float32)
    return np.where(thr32.astype(np.float64) > thr, np.nextafter(thr32, np.float32(-np.inf)), thr32)


def within_delta_pairs(e: np.ndarray, start: int, stop: int, d2: float) -> tuple[np.ndarray, np.ndarray]:
    """All pairs ``(i, j)``, ``start <= i < stop``, ``j > i``, with exact ``sq(e_i, e_j) <= d2``.

    The one exact within-δ kernel of lam_ref (used by the band recall of Table 26 and the
    packing check of claim ``PROP2``): a float32 product against the rows from ``start`` on,
    filtered by :func:`filter_threshold`, confirmed by :func:`sq_dist_rows`.

    Args:
        e: ``(N, D)`` float32 rows (C-contiguous).
        start: first row of the block.
        stop: one past the last row of the block.
        d2: the squared radius ``δ²`` (:func:`delta_sq`).

    Returns:
        ``(rows, cols)``: int64 arrays of the pairs, ``rows < cols``, in row-major order.

    Examples:
        >>> e = np.array([[1, 0], [1, 0], [0, 1]], dtype=np.float32)
        >>> rows, cols = within_delta_pairs(e, 0, 3, delta_sq(0.9))
        >>> rows.tolist(), cols.tolist()
        ([0], [1])
    """
    e64_norms = np.einsum("ij,ij->i", e.astype(np.float64), e.astype(np.float64))
    g = e[start:stop] @ e[start:].T
    thr = filter_threshold(e64_norms[start:stop], float(e64_norms[start:].min()), d2, e.shape[1])
    mask = g >= thr[:, None]
    mask &= np.triu(np.ones(mask.shape, dtype=bool), k=1)
    r, c = np.nonzero(mask)
    rows, cols = r + start, c + start
    if rows.size:
        ok = sq_dist_rows(e, rows, e[cols]) <= d2
        rows, cols = rows[ok], cols[ok]
    return rows.astype(np.int64), cols.astype(np.int64)


# ---------------------------------------------------------------------------------------------
# the representative map π (SPEC §1)
# ---------------------------------------------------------------------------------------------
def kept_mask(pi: np.ndarray, first_id: int = 0) -> np.ndarray:
    """Boolean mask of retained chunks, ``π[i] == i`` (ids starting at ``first_id``; SPEC §1).

    Examples:
        >>> kept_mask(np.array([0, 0, 2])).tolist()
        [True, False, True]
    """
    p = np.asarray(pi)
    return p == np.arange(first_id, first_id + p.shape[0], dtype=np.int64)


def validate_map(pi: Any, n: int, name: str = "pi", *, structure: bool = True) -> np.ndarray:
    """Check a representative map and return it as int64 (SPEC §1, Definition 1).

    Args:
        pi: the map, one representative id per row.
        n: the number of rows.
        name: the argument's name in error messages.
        structure: also require ``0 <= π[i] <= i`` (a representative arrived no later) and
            ``π[π[i]] = π[i]`` (representatives are retained); with ``False`` only the shape
            and integer dtype are checked (callers that report violations themselves).

    Returns:
        ``pi`` as a 1-D int64 array of length ``n``.

    Raises:
        LamValueError: naming ``name``, the first offending index and its value.

    Examples:
        >>> validate_map([0, 0, 2], 3).tolist()
        [0, 0, 2]
        >>> validate_map([0, 2, 2], 3)
        Traceback (most recent call last):
        ...
        lam_ref.geometry.LamValueError: pi[1] = 2 is not a retained id <= 1
    """
    try:
        arr = np.asarray(pi)
    except Exception as exc:
        raise LamValueError(f"{name} must be an integer array, could not convert: {exc}") from exc
    if arr.ndim != 1 or arr.shape[0] != n:
        raise LamValueError(f"{name} must be an integer array of shape ({n},), got {arr.dtype} {arr.shape}")
    if n and not np.issubdtype(arr.dtype, np.integer):
        raise LamValueError(f"{name} must be an integer array of shape ({n},), got {arr.dtype} {arr.shape}")
    p = arr.astype(np.int64)
    if not structure:
        return p
    idx = np.arange(n, dtype=np.int64)
    bad = (p < 0) | (p > idx)
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise LamValueError(f"{name}[{i}] = {int(p[i])} is not a retained id <= {i}")
    not_retained = p[p] != p
    if not_retained.any():
        i = int(np.flatnonzero(not_retained)[0])
        raise LamValueError(
            f"{name}[{i}] = {int(p[i])} points to a chunk that is itself merged ({name}[{int(p[i])}] = {int(p[p[i]])})"
        )
    return p
