"""Digests (SPEC §10): values derived by hand from the spec's text, not from lam_ref's output."""

from __future__ import annotations

import hashlib

import numpy as np
import pytest

from lam_ref import substitute
from lam_ref.digest import deletion_digest, digest_lines, fmt17, map_digest
from lam_ref.geometry import (
    LamValueError,
)

# ------------------------------------------------------------------------------------------------
# The map digest (SPEC §10): lines ``i:π[i]``, first 16 hex of SHA-256, over integer ids only
# ------------------------------------------------------------------------------------------------


def test_map_digest_lines():
    """SPEC §10: lines "i:π[i]" for every i in order."""
    assert map_digest([0, 0, 2, 1]) == hashlib.sha256(b"0:0\n1:0\n2:2\n3:1").hexdigest()[:16]


def test_digests_are_sixteen_hex_of_sha256():
    """The digest is the first 16 hex digits of SHA-256 over the ASCII lines ``i:π[i]`` joined
    by newlines (SPEC §10)."""
    import hashlib

    assert digest_lines(["0:0", "1:0"]) == hashlib.sha256(b"0:0\n1:0").hexdigest()[:16], "digest_lines"
    assert map_digest(np.array([0, 0], dtype=np.int32)) == digest_lines(["0:0", "1:0"]), "map digest of int32 ids"


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


# ------------------------------------------------------------------------------------------------
# The deletion-set digest (SPEC §10): sorted ids, each once, integers only
# ------------------------------------------------------------------------------------------------


def test_deletion_digest_is_sha256_of_sorted_ids():
    """SPEC §10: first 16 hex of SHA-256 of "\\n".join(sorted ids), no trailing newline."""
    assert deletion_digest([5, 1, 3]) == hashlib.sha256(b"1\n3\n5").hexdigest()[:16], "sorted, newline-joined"
    assert deletion_digest([]) == "e3b0c44298fc1c14", "the empty set digests the empty string"
    assert deletion_digest(np.array([10, 2])) == hashlib.sha256(b"2\n10").hexdigest()[:16], "numeric, not lexicographic, order"
    with pytest.raises(ValueError, match="repeated"):
        deletion_digest([1, 1])


def test_deletion_digest_names_a_repeated_id():
    """A deletion set with a repeated id is refused with a message saying so (SPEC §10)."""
    from lam_ref.digest import deletion_digest

    with pytest.raises(ValueError, match="^deleted_ids contains a repeated id$"):
        deletion_digest([1, 1])


def test_deletion_digest_refuses_ids_that_are_not_integers():
    """Deleted ids are chunk ids: ``1.5`` is refused naming ``deleted_ids`` (it would otherwise be
    digested as id 1); a set or generator of ints is accepted."""
    with pytest.raises(LamValueError, match=r"^deleted_ids must be an integer array"):
        deletion_digest([1.5, 3])
    assert deletion_digest({3, 1}) == hashlib.sha256(b"1\n3").hexdigest()[:16], "a set of ids"
    assert deletion_digest(i for i in (4, 2)) == hashlib.sha256(b"2\n4").hexdigest()[:16], "a generator of ids"


# ------------------------------------------------------------------------------------------------
# The digests a result carries, and δ̂ with 17 significant digits (SPEC §10)
# ------------------------------------------------------------------------------------------------


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
