"""Digests (SPEC §10): values derived by hand from the spec's text, not from lam_ref's output."""

from __future__ import annotations

import hashlib

import numpy as np
import pytest

from lam_ref import substitute
from lam_ref.digest import deletion_digest, fmt17, map_digest


def test_deletion_digest_is_sha256_of_sorted_ids():
    """SPEC §10: first 16 hex of SHA-256 of "\\n".join(sorted ids), no trailing newline."""
    assert deletion_digest([5, 1, 3]) == hashlib.sha256(b"1\n3\n5").hexdigest()[:16], "sorted, newline-joined"
    assert deletion_digest([]) == "e3b0c44298fc1c14", "the empty set digests the empty string"
    assert deletion_digest(np.array([10, 2])) == hashlib.sha256(b"2\n10").hexdigest()[:16], "numeric, not lexicographic, order"
    with pytest.raises(ValueError, match="repeated"):
        deletion_digest([1, 1])


def test_map_digest_lines():
    """SPEC §10: lines "i:π[i]" for every i in order."""
    assert map_digest([0, 0, 2, 1]) == hashlib.sha256(b"0:0\n1:0\n2:2\n3:1").hexdigest()[:16]


def test_result_digests_and_17_digit_delta_hat():
    """Results carry both digests and δ̂ with 17 significant digits (SPEC §10)."""
    e = np.array([[1, 0], [0.995, 0.0998749], [0, 1]], dtype=np.float64)
    e = (e / np.linalg.norm(e, axis=1, keepdims=True)).astype(np.float32)
    res = substitute(e, 0.99, exhaustive=True)
    assert res.pi.tolist() == [0, 0, 2], "fixture: chunk 1 merges into 0"
    j = res.to_json()
    assert j["deletion_digest"] == hashlib.sha256(b"1").hexdigest()[:16]
    assert j["map_digest"] == hashlib.sha256(b"0:0\n1:0\n2:2").hexdigest()[:16]
    assert float(j["delta_hat"]) == res.delta_hat and len(j["delta_hat"].replace("0.", "", 1).lstrip("0")) <= 17
    assert fmt17(0.1) == "0.10000000000000001", "17 significant digits expose the binary value"
