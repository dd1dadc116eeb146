"""Tests written for the mutants of :mod:`lam_ref.digest` that survived ``make mutation``
(docs/mutation.md, section ``digest``): digests are defined over integer ids only (SPEC §10)."""

from __future__ import annotations

import hashlib

import numpy as np
import pytest

from lam_ref.digest import deletion_digest, map_digest
from lam_ref.geometry import LamValueError


def test_map_digest_refuses_a_map_that_is_not_integer():
    """A representative map holds chunk ids (SPEC §1): a float map is refused naming ``pi``,
    never truncated into the digest of another map (``[0, 0.7]`` would digest as ``[0, 0]``).
    Kills dropping the integer conversion of ``pi``."""
    with pytest.raises(LamValueError, match=r"^pi must be an integer array of shape \(2,\), got float64 \(2,\)$"):
        map_digest([0.0, 0.7])
    with pytest.raises(LamValueError, match=r"^pi must be an integer array"):
        map_digest(np.zeros((2, 2), dtype=np.int64))
    with pytest.raises(LamValueError, match=r"^pi must be an integer array of shape \(1,\), got int64 \(\)$"):
        map_digest(np.array(3, dtype=np.int64))  # a 0-d array is one id, not a map


def test_map_digest_of_unsigned_and_empty_maps():
    """The lines are the decimal ids whatever the integer dtype (SPEC §10); an empty map digests
    the empty string."""
    want = hashlib.sha256(b"0:0\n1:0\n2:2").hexdigest()[:16]
    assert map_digest(np.array([0, 0, 2], dtype=np.uint8)) == want, "uint8 ids digest as their decimal values"
    assert map_digest([]) == hashlib.sha256(b"").hexdigest()[:16], "an empty map digests the empty string"


def test_deletion_digest_refuses_ids_that_are_not_integers():
    """Deleted ids are chunk ids: ``1.5`` is refused naming ``deleted_ids`` (it would otherwise be
    digested as id 1); a set or generator of ints is accepted."""
    with pytest.raises(LamValueError, match=r"^deleted_ids must be an integer array"):
        deletion_digest([1.5, 3])
    assert deletion_digest({3, 1}) == hashlib.sha256(b"1\n3").hexdigest()[:16], "a set of ids"
    assert deletion_digest(i for i in (4, 2)) == hashlib.sha256(b"2\n4").hexdigest()[:16], "a generator of ids"
