"""The kept-set form (SPEC §15.5): implementations that return the rows they keep, not π.

General semantic-deduplication libraries return the selected records (and some the pair each
dropped record matched). Such an implementation exposes ``kept(embeddings, t)`` returning one of

* ``int64[K]``: the kept row indices, ascending;
* ``(kept, witness)`` with ``witness`` ``int64[N]``: the row it names for each dropped row (a
  kept row names itself), e.g. semhash's ``duplicate_of``;
* ``(kept, pairs)`` with ``pairs`` ``int64[P, 2]``: every pair ``(i, j)``, ``j < i``, it found
  within its threshold (for the SPEC §15.1 rule "the lowest id among the pairs it found").

:func:`read_kept` turns any of these into a :class:`KeptOutput` or fails with an
``AssertionError`` naming the offending index (out of range, duplicate, wrong order): a failed
contract check, never a traceback.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

__all__ = ["KeptOutput", "read_kept"]


@dataclass
class KeptOutput:
    """A checked kept-set answer: ``mask`` (bool[N]), optional ``witness`` (int64[N]) and ``pairs``."""

    mask: np.ndarray
    witness: np.ndarray | None = None
    pairs: np.ndarray | None = None

    @property
    def kept(self) -> np.ndarray:
        return np.flatnonzero(self.mask)


def _int_array(value: Any, what: str) -> np.ndarray:
    arr = np.asarray(value)
    if arr.size == 0:
        return arr.astype(np.int64).reshape(arr.shape if arr.ndim else (0,))
    assert arr.dtype.kind in "iu" or (arr.dtype == object and all(isinstance(v, (int, np.integer)) for v in arr.ravel())), (
        f"{what} must hold integer row indices (SPEC §15.5), got dtype {arr.dtype}"
    )
    return arr.astype(np.int64)


def read_kept(out: Any, n: int, where: str = "kept") -> KeptOutput:
    """Check a ``kept(embeddings, t)`` answer for ``n`` rows (module docstring) and return it."""
    extra = None
    if isinstance(out, tuple):
        assert len(out) == 2, f"{where} must return kept or (kept, witness | pairs), got a tuple of {len(out)}"
        out, extra = out
    idx = _int_array(out, f"{where}: the kept indices")
    assert idx.ndim == 1, f"{where}: the kept indices must be one-dimensional, got shape {idx.shape}"
    for k, v in enumerate(idx.tolist()):
        assert 0 <= v < n, f"{where}: kept index {v} (position {k}) is out of range for {n} rows (SPEC §15.5)"
        if k:
            prev = int(idx[k - 1])
            assert v != prev, f"{where}: kept index {v} appears twice (positions {k - 1} and {k}) (SPEC §15.5)"
            assert v > prev, (
                f"{where}: kept index {v} (position {k}) comes after {prev}: indices must be ascending, "
                "in arrival order (SPEC §15.5)"
            )
    mask = np.zeros(n, dtype=bool)
    mask[idx] = True
    result = KeptOutput(mask)
    if extra is None:
        return result
    arr = _int_array(extra, f"{where}: the second output")
    if arr.ndim == 1:
        assert arr.shape == (n,), f"{where}: witness must have shape ({n},), got {arr.shape}"
        for i in np.flatnonzero(mask).tolist():
            assert arr[i] == i, f"{where}: kept row {i} must name itself as witness, got {int(arr[i])}"
        for i in np.flatnonzero(~mask).tolist():
            assert 0 <= arr[i] < n, f"{where}: witness {int(arr[i])} of dropped row {i} is out of range for {n} rows"
        result.witness = arr
    elif arr.ndim == 2 and arr.shape[1] == 2:
        for k, (i, j) in enumerate(arr.tolist()):
            assert 0 <= j < i < n, f"{where}: pair {k} = ({i}, {j}) must satisfy 0 <= j < i < {n} (SPEC §15.5)"
        result.pairs = arr
    else:
        raise AssertionError(f"{where}: the second output must be int64[N] (witness) or int64[P, 2] (pairs), got shape {arr.shape}")
    return result
