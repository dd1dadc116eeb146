"""C4 (App. C.4, Figure 5): keeping one record per connected component of the threshold graph
(union–find) does not give a δ-substitution — the relation is not transitive."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given

from lam_ref.covering import all_pairs_sq, connected_components_map
from lam_ref.geometry import delta_sq
from lam_ref.strategies import chains, near_duplicate_clusters
from lam_ref.substitution import substitute
from lam_ref.theory import measure_substitution
from tests.datagen import CHAIN_T
from tests.datagen import arc as _arc

from ._support import REG, _ctx, must_fail

pytestmark = pytest.mark.claim("C4")


def prop_components_violate(data) -> None:
    """One component holds every row, the DSU map sends row 2 beyond δ of row 0 (DEF1 fails),
    while greedy first-occurrence on the same rows is a valid δ-substitution."""
    e, t = data
    dsu = connected_components_map(e, t)
    assert np.all(dsu == 0), f"a chain is one component: {dsu.tolist()}"
    assert all_pairs_sq(e)[0, 2] > delta_sq(t), "rows 0 and 2 of a chain are beyond delta"
    assert not measure_substitution(e, dsu, t).valid, "the DSU map must violate DEF1"
    assert measure_substitution(e, substitute(e, t).pi, t).valid, "greedy must satisfy DEF1"


@given(chains(min_length=3))
def test_components_are_not_a_substitution_on_chains(data):
    """C4 on every generated chain ``a~b, b~c, a≁c``. Shown to fail on a deliberately wrong
    input: clusters of diameter <= δ (cliques), where DSU is valid
    (:func:`test_c4_fails_on_cliques`)."""
    prop_components_violate(data)


def test_c4_fails_on_cliques():
    must_fail(near_duplicate_clusters(min_clusters=1, max_clusters=1, min_size=3).map(lambda c: (c.embeddings, c.t)), prop_components_violate)


def test_three_point_chain_by_hand():
    """a = 0°, b = 15°, c = 30° on a circle at t = cos 20°: |ab| = |bc| = 2 sin 7.5° <= δ =
    2 sin 10° < |ac| = 2 sin 15°. DSU maps c to a at 2 sin 15° = 0.5176 > δ = 0.3473."""
    ang = np.radians([0.0, 15.0, 30.0])
    e = np.stack([np.cos(ang), np.sin(ang)], axis=1).astype(np.float32)
    t = float(np.cos(np.radians(20.0)))
    dsu = connected_components_map(e, t)
    chk = measure_substitution(e, dsu, t)
    assert dsu.tolist() == [0, 0, 0] and not chk.valid, f"DSU {dsu.tolist()} should be invalid"
    assert abs(chk.delta_hat - 2 * np.sin(np.radians(15))) < 1e-6, f"DSU delta_hat {chk.delta_hat!r} != 2 sin 15°"
    assert substitute(e, t, exhaustive=True).pi.tolist() == [0, 0, 2], "greedy keeps a and c"


# ------------------------------------------------------------------------------------------------
# C4's row of ``lam-ref verify`` (:mod:`lam_ref.claims.c4`): its measure on a chain and a clique.
# ------------------------------------------------------------------------------------------------


@pytest.mark.claim("C4")
def test_c4_measure_on_a_chain_and_on_a_clique(monkeypatch):
    """C4's row on the chain: one component kept as row 0, whose far end is ``2 sin(0.1)`` away
    (not a δ-substitution); greedy keeps 2. On a tighter set the components are valid. Sets with
    more than ``MAX_ROWS`` rows are not measured (the bound is inclusive)."""
    from lam_ref.claims import c4

    e = _arc(0.0, 0.1, 0.2)
    chain = REG["C4"].measure(_ctx(e, CHAIN_T))
    assert chain.values["dsu_kept"] == 1 and chain.values["greedy_kept"] == 2, f"{chain}"
    assert chain.values["dsu_delta_hat"] == pytest.approx(2 * np.sin(0.1), rel=1e-6), f"{chain}"
    assert chain.values["dsu_is_substitution"] is False, f"{chain}"
    assert chain.note == "DSU exceeds delta here (counterexample present)", f"{chain.note!r}"
    tight = REG["C4"].measure(_ctx(_arc(0.0, 0.05, 0.1), CHAIN_T))
    assert tight.values["dsu_is_substitution"] is True and tight.values["dsu_kept"] == 1, f"{tight}"
    assert tight.note == "DSU happens to be valid on this set", f"{tight.note!r}"
    assert REG["C4"].holds(chain.values) is None, "informational"
    monkeypatch.setattr(c4, "MAX_ROWS", 3)
    assert REG["C4"].measure(_ctx(e, CHAIN_T)) is not None, "n = MAX_ROWS is measured"
    monkeypatch.setattr(c4, "MAX_ROWS", 2)
    assert REG["C4"].measure(_ctx(e, CHAIN_T)) is None, "n > MAX_ROWS is not"
