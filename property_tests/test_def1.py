"""DEF1 (paper §2.4, Definition 1): every compactor output ``π`` is a δ-substitution —
``R ⊆ S``, ``π: S → R``, ``π|_R = id``, ``||x - π(x)|| <= δ`` — with the greedy rule of §2.4
("the lowest-indexed retained candidate within δ")."""

from __future__ import annotations

import re

import numpy as np
import pytest
from hypothesis import given

from lam_ref.covering import all_pairs_sq, connected_components_map
from lam_ref.geometry import delta_sq
from lam_ref.strategies import chains, embeddings_and_threshold
from lam_ref.substitution import oracle, substitute
from lam_ref.theory import measure_substitution
from tests.datagen import CHAIN_T
from tests.datagen import arc as _arc

from ._support import REG, _ctx, must_fail

pytestmark = pytest.mark.claim("DEF1")


def reference_greedy(e: np.ndarray, t: float) -> np.ndarray:
    """The §2.4 rule written out independently over the exact all-pairs matrix (test oracle)."""
    sq = all_pairs_sq(e)
    d2 = delta_sq(t)
    pi = np.arange(e.shape[0])
    retained: list[int] = []
    for i in range(e.shape[0]):
        within = [y for y in retained if sq[i, y] <= d2]
        if within:
            pi[i] = min(within)
        else:
            retained.append(i)
    return pi


def prop_is_substitution(data, make_pi) -> None:
    """``make_pi(e, t)`` is a δ-substitution by a direct check of the definition (not by
    :func:`measure_substitution` alone), representatives precede their rows, and δ̂ <= δ."""
    e, t = data
    pi = np.asarray(make_pi(e, t))
    n = e.shape[0]
    kept = pi == np.arange(n)
    sq = all_pairs_sq(e)
    assert np.all(kept[pi]), f"some pi[i] is not retained: {pi.tolist()}"
    assert np.all(sq[np.arange(n), pi] <= delta_sq(t)), f"a row is farther than delta from pi: {pi.tolist()}"
    assert np.all(pi <= np.arange(n)), f"a representative follows its row: {pi.tolist()}"
    chk = measure_substitution(e, pi, t)
    assert chk.valid and chk.ordered, f"measure_substitution disagrees: {chk.problems}"
    assert chk.delta_hat <= chk.delta, f"delta_hat {chk.delta_hat!r} > delta {chk.delta!r}"


@given(embeddings_and_threshold(min_n=1, max_n=30))
def test_oracle_and_algorithm2_are_delta_substitutions(data):
    """DEF1 for the oracle, exhaustive and banded Algorithm 2 (default r=4, rel=0.2), and the
    oracle equals the independently written rule. Shown to fail on the connected-components map
    (:func:`test_def1_fails_on_components`)."""
    e, t = data
    for make in (lambda e, t: oracle(e, t).pi, lambda e, t: substitute(e, t, exhaustive=True).pi, lambda e, t: substitute(e, t).pi):
        prop_is_substitution(data, make)
    ref = reference_greedy(e, t)
    assert np.array_equal(oracle(e, t).pi, ref), f"oracle {oracle(e, t).pi.tolist()} != rule {ref.tolist()}"
    assert np.array_equal(substitute(e, t, exhaustive=True).pi, ref), "exhaustive Algorithm 2 differs from the rule"


def test_def1_fails_on_components():
    """The DEF1 property must fail for one-representative-per-connected-component (App. C.4)."""
    must_fail(chains(min_length=3), prop_is_substitution, connected_components_map)


def test_def1_fails_on_chained_representatives():
    """... and for a map that follows chains (``π(x)`` = the representative of x's nearest
    earlier row, retained or not): transitivity is exactly what the rule forbids (§2.4)."""

    def chained(e, t):
        sq = all_pairs_sq(e)
        pi = np.arange(e.shape[0])
        for i in range(1, e.shape[0]):
            j = int(np.argmin(sq[i, :i]))
            if sq[i, j] <= delta_sq(t):
                pi[i] = pi[j]
        return pi

    must_fail(chains(min_length=3), prop_is_substitution, chained)


def test_measure_substitution_names_the_violation():
    """measure_substitution rejects hand-made bad maps and names the row (pinned by hand)."""
    e = np.array([[1, 0], [0, 1], [-1, 0]], dtype=np.float32)
    # t = 0: delta² = 2; sq(0,1) = 2 merges, sq(0,2) = 4 does not
    ok = measure_substitution(e, np.array([0, 0, 2]), 0.0)
    assert ok.valid and ok.ordered and abs(ok.delta_hat - np.sqrt(2)) < 1e-15, f"valid map rejected: {ok}"
    far = measure_substitution(e, np.array([0, 1, 0]), 0.0)
    assert not far.valid and "row 2" in far.problems[0], f"far map accepted: {far}"
    chained = measure_substitution(e, np.array([0, 0, 1]), 0.0)
    assert not chained.valid and "pi[2] = 1 is not retained" in chained.problems[0], f"chained map accepted: {chained}"


# ------------------------------------------------------------------------------------------------
# DEF1's row of ``lam-ref verify`` (:mod:`lam_ref.claims.def1`): its measure and rule.
# ------------------------------------------------------------------------------------------------


@pytest.mark.claim("DEF1")
def test_def1_measure_and_rule():
    """DEF1's row: ``δ``, the measured ``δ̂`` and the compactor's reported one, ``|R|``, ``n``, the
    verdicts; the note lists the problems; the rule needs validity, order and ``δ̂`` reported to
    1e-15 (inclusive)."""
    e = _arc(0.0, 0.1, 0.2)
    ok = REG["DEF1"].measure(_ctx(e, CHAIN_T))
    d01 = np.linalg.norm(np.float32(e[0]) - np.float32(e[1]))
    assert ok.note == "" and ok.values["valid"] is True and ok.values["ordered"] is True, f"{ok}"
    assert (ok.values["kept"], ok.values["n"]) == (2, 3), f"{ok}"
    assert ok.values["delta"] == pytest.approx(0.15, abs=1e-12), f"{ok}"
    assert ok.values["delta_hat"] == pytest.approx(d01, rel=1e-6) == ok.values["delta_hat_reported"], f"{ok}"
    bad = REG["DEF1"].measure(_ctx(e, CHAIN_T, pi=[0, 0, 0]))
    assert bad.values["valid"] is False and bad.note.startswith("row 2 is 0.19966"), f"{bad}"
    two = REG["DEF1"].measure(_ctx(e, CHAIN_T, pi=[0, 2, 0]))
    assert re.fullmatch(r"pi\[1\] = 2 is not retained \(pi\[2\] = 0\); row 2 is 0\.19966\d+ from pi\[2\] = 0, "
                        r"more than delta = 0\.15", two.note), f"two problems, joined by '; ': {two.note!r}"
    holds = REG["DEF1"].holds
    m = {"valid": True, "ordered": True, "delta_hat": 0.5, "delta_hat_reported": 0.5 + 1e-15}
    assert holds(m) is True, "reported δ̂ within 1e-15 holds"
    assert holds({**m, "delta_hat_reported": 0.5 + 1e-14}) is False, "a reported δ̂ off by 1e-14 fails"
    assert holds({**m, "valid": False}) is False and holds({**m, "ordered": False}) is False, "both verdicts count"
