"""Deletion-set and map digests (SPEC §10; our convention, the paper does not define one).

The paper compares deletion sets across batch sizes and machines by digest (Appendix D,
``8e788921d75c7e76``); we fix the encoding so any implementation can reproduce ours:

* deletion digest: first 16 hex chars of SHA-256 of ``"\\n".join(str(i) for i in sorted(deleted))``;
* map digest: the same over the lines ``f"{i}:{pi[i]}"`` for every ``i`` in order.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable

import numpy as np

from .geometry import LamValueError, validate_map

__all__ = ["deletion_digest", "digest_lines", "fmt17", "map_digest"]


def digest_lines(lines: Iterable[str]) -> str:
    """First 16 hex characters of SHA-256 of the lines joined by ``\\n`` (no trailing newline)."""
    return hashlib.sha256("\n".join(lines).encode("ascii")).hexdigest()[:16]


def _id_array(ids: np.ndarray | Iterable[int], name: str) -> np.ndarray:
    """``ids`` as a 1-D int64 array; :class:`LamValueError` naming ``name`` for anything but
    integers (a float id would otherwise be truncated silently into another id's digest)."""
    arr = np.asarray(ids if isinstance(ids, np.ndarray) else list(ids))
    return validate_map(arr, arr.size, name, structure=False)


def deletion_digest(deleted_ids: np.ndarray | Iterable[int]) -> str:
    """Digest of a deletion set of global chunk ids (order-free; duplicates are an error; SPEC §10).

    Raises:
        LamValueError: for a repeated id, or ids that are not integers.

    Examples:
        >>> deletion_digest([3, 1]) == deletion_digest([1, 3]) == digest_lines(["1", "3"])
        True
    """
    ids = sorted(_id_array(deleted_ids, "deleted_ids").tolist())
    if len(set(ids)) != len(ids):
        raise LamValueError("deleted_ids contains a repeated id")
    return digest_lines(str(i) for i in ids)


def map_digest(pi: np.ndarray | Iterable[int]) -> str:
    """Digest of a representative map ``π`` (lines ``i:π[i]`` in id order; SPEC §10).

    Raises:
        LamValueError: unless ``pi`` is a 1-D array of integers.

    Examples:
        >>> map_digest([0, 0, 2]) == digest_lines(["0:0", "1:0", "2:2"])
        True
    """
    return digest_lines(f"{i}:{p}" for i, p in enumerate(_id_array(pi, "pi").tolist()))


def fmt17(x: float) -> str:
    """A float printed with 17 significant digits, as digests reports carry ``δ̂`` (SPEC §10)."""
    return f"{float(x):.17g}"
