"""BAND (§2.2 L1, App. K.2; SPEC §5): band hashing only proposes candidates and every merge is
verified exactly, so banded search is *sound* at any (r, rel); it equals the oracle whenever
candidate recall is full."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from lam_ref.bands import BandSettings, band_keys, band_recall
from lam_ref.strategies import embeddings_and_threshold
from lam_ref.substitution import oracle, substitute
from lam_ref.theory import measure_substitution
from tests.datagen import CHAIN_T
from tests.datagen import arc as _arc

from ._support import REG, _banded_ctx, _ctx, must_fail

pytestmark = pytest.mark.claim("BAND")

DATA = st.tuples(embeddings_and_threshold(min_n=1, max_n=30), st.integers(1, 40), st.floats(0.01, 5.0))


def prop_sound(data, make_pi) -> None:
    """DEF1 (valid, representatives earlier) for the banded map at any (r, rel); equal to the
    oracle when band recall is 1."""
    (e, t), r, rel = data
    r = min(r, e.shape[1])
    pi = make_pi(e, t, r, rel)
    chk = measure_substitution(e, pi, t)
    assert chk.valid and chk.ordered, f"banded map (r={r}, rel={rel}) unsound: {chk.problems}"
    if band_recall(e, t, r=r, rel=rel).recall == 1.0:
        assert np.array_equal(pi, oracle(e, t).pi), "full recall must reproduce the oracle"


@given(DATA)
def test_banded_search_is_sound_at_any_setting(data):
    """BAND soundness. Shown to fail on a band index that merges on any key collision without
    the exact check (:func:`test_band_fails_without_verification`)."""
    prop_sound(data, lambda e, t, r, rel: substitute(e, t, r=r, rel=rel).pi)


def unverified(e, t, r, rel):
    """Broken Algorithm 2: the first retained row sharing any band key is the representative."""
    keys = band_keys(e, BandSettings(r=r, rel=rel))
    pi = np.arange(e.shape[0])
    kept: list[int] = []
    for i in range(e.shape[0]):
        hit = [y for y in kept if np.any(keys[y] == keys[i])]
        if hit:
            pi[i] = hit[0]
        else:
            kept.append(i)
    return pi


def test_band_fails_without_verification():
    must_fail(st.tuples(embeddings_and_threshold(min_n=2, max_n=30), st.integers(1, 3), st.floats(0.5, 5.0)), prop_sound, unverified)


# ------------------------------------------------------------------------------------------------
# BAND's row of ``lam-ref verify`` (:mod:`lam_ref.claims.band`): its measure on a set worked by hand.
# ------------------------------------------------------------------------------------------------


@pytest.mark.claim("BAND")
def test_band_measure_reports_settings_soundness_and_recall():
    """BAND's row: ``r``, ``rel`` as given, soundness (DEF1 of the banded map), equality with the
    oracle, the pair counts of the run; a sound map with fewer merges is noted; in exhaustive mode
    there is no band index and no verdict."""
    band = REG["BAND"]
    e = _arc(0.0, 0.1, 0.2)
    same = band.measure(_banded_ctx(e, CHAIN_T, [0, 0, 2], r=3, rel=0.25))
    assert same.values == {"r": 3, "rel": 0.25, "sound": True, "equals_oracle": True, "pairs_verified": 7,
                           "total_pairs": 11}, f"{same}"
    assert same.note == "", f"equal to the oracle: no note: {same.note!r}"
    fewer = band.measure(_banded_ctx(e, CHAIN_T, [0, 1, 2]))
    assert (fewer.values["sound"], fewer.values["equals_oracle"]) == (True, False), f"{fewer}"
    assert fewer.note == "candidate recall incomplete: sound but fewer merges than the oracle", f"{fewer.note!r}"
    bad = band.measure(_banded_ctx(e, CHAIN_T, [0, 0, 0]))
    assert bad.values["sound"] is False and band.holds(bad.values) is False, f"row 2 is beyond δ of row 0: {bad}"
    assert band.holds(same.values) is True, "a sound banded map holds"
    assert band.holds({"sound": 1}) is True and band.holds({"sound": 0}) is False, "the verdict is a bool"
    ex = band.measure(_ctx(e, CHAIN_T))
    assert ex == ({"mode": "exhaustive"}, "exhaustive mode: no band index in use"), f"{ex}"
    assert band.holds(ex.values) is None, "exhaustive mode: informational"
