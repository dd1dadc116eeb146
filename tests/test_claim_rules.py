"""The rules and the aggregation of the measured claims (:mod:`lam_ref.claims`), at their
boundaries: every bound is inclusive, both halves of a rule count, and combining sets keeps
notes, ``None`` and informational rows. Written for mutants that survived ``make mutation``
(docs/mutation.md)."""

from __future__ import annotations

import pytest

from lam_ref.claims import ClaimResult, Measurement, combine, registry
from lam_ref.claims.hull import HULL_TOL
from lam_ref.geometry import LamValueError
from lam_ref.theory import FP_TOL, gem_energy_bound

REG = registry()


@pytest.mark.claim("THM1")
def test_thm1_rule_bounds_are_inclusive():
    """``0 <= deficit <= δ̂ <= δ`` with every bound attained (Theorem 1: both ends are tight)."""
    holds = REG["THM1"].holds
    m = {"max_deficit_sampled": 0.1, "max_deficit_adversarial": 0.2, "queries": 3,
         "min_deficit": -FP_TOL, "max_deficit_all": 0.2 + FP_TOL, "delta_hat": 0.2, "delta": 0.2}
    assert holds(m) is True, "deficits at -FP_TOL and δ̂ + FP_TOL, and δ̂ = δ, all hold"
    assert holds({**m, "min_deficit": -2 * FP_TOL}) is False, "a negative deficit fails"
    assert holds({**m, "max_deficit_all": 0.2 + 3 * FP_TOL}) is False, "a deficit above δ̂ fails"
    assert holds({**m, "delta_hat": 0.21, "max_deficit_all": 0.2}) is False, "δ̂ above δ fails"


@pytest.mark.claim("HULL")
def test_hull_rule_bounds_are_inclusive():
    """The best query may reach the supremum plus the QP tolerance, the supremum may reach δ̂,
    the certificate gap may reach the tolerance."""
    holds = REG["HULL"].holds
    sup = 0.25 + FP_TOL
    m = {"sup_deficit": sup, "max_deficit_sampled": 0.1, "max_deficit_all": sup + HULL_TOL,
         "delta_hat": 0.25, "complete": True, "certificate_gap": HULL_TOL}
    assert holds(m) is True, "every bound attained holds"
    assert holds({**m, "certificate_gap": 2 * HULL_TOL}) is False, "a gap above the tolerance fails"


@pytest.mark.claim("GEMLINK")
def test_gemlink_rule_needs_both_halves():
    """``E(R) >= 1 - |D|/n·δ̂² - slack`` (inclusive) *and* ``1 - |D|/n·δ̂² >= 1 - |D|/n·δ²``."""
    holds = REG["GEMLINK"].holds
    m = {"energy": 0.9, "bound_delta_hat": 0.9, "bound_delta": 0.8, "min_margin": 0.0, "norm_slack": 0.0}
    assert holds(m) is True, "energy equal to the bound holds"
    assert holds({**m, "bound_delta": 0.95}) is False, "δ̂ beyond δ fails even when the energy bound holds"
    assert holds({**m, "energy": 0.85}) is False, "energy below the bound fails"
    with pytest.raises(LamValueError, match="n must be >= 1, got 0"):
        gem_energy_bound(0, 0, 0.1)


@pytest.mark.claim("GEMLINK")
def test_combine_keeps_verdicts_nones_and_notes():
    """Informational rows stay informational (``None``); one ``None`` value makes the combined
    value ``None``; notes are joined with ``; `` and cut at 200 characters; a setting that
    differs between sets is an error; a claim's row carries its id."""
    c4 = REG["C4"]
    rows = [ClaimResult("C4", None, {"dsu_kept": 2, "dsu_delta_hat": 0.1, "dsu_is_substitution": True, "greedy_kept": 2}, "b"),
            ClaimResult("C4", None, {"dsu_kept": 3, "dsu_delta_hat": None, "dsu_is_substitution": True, "greedy_kept": 2}, "a")]
    out = combine(c4, rows)
    assert out.passed is None, "informational everywhere: informational"
    assert out.measured["dsu_delta_hat"] is None and out.measured["dsu_kept"] == 5, f"None wins, counts add: {out.measured}"
    assert out.note == "a; b", f"sorted notes joined: {out.note!r}"
    long = [ClaimResult("C4", None, dict(rows[0].measured), "x" * 150), ClaimResult("C4", None, dict(rows[0].measured), "y" * 150)]
    assert len(combine(c4, long).note) == 200, "notes are cut at 200 characters"
    band = REG["BAND"]
    a = {"r": 4, "rel": 0.2, "sound": True, "equals_oracle": True, "pairs_verified": 1, "total_pairs": 3}
    with pytest.raises(ValueError, match="differs between sets"):
        combine(band, [ClaimResult("BAND", True, a), ClaimResult("BAND", True, a), ClaimResult("BAND", True, {**a, "r": 8})])
    with pytest.raises(ValueError, match="differs between sets"):
        combine(band, [ClaimResult("BAND", True, a), ClaimResult("BAND", True, {**a, "r": 8})])
    row = REG["EQ1"].result(Measurement({"pairs": 1, "max_residual": 0.0, "slack": 0.0, "disagreements": 0, "within_slack": True}))
    assert row.claim == "EQ1" and row.passed is True, f"the row names its claim: {row}"


@pytest.mark.claim("HULL")
def test_hull_deficit_record_fields():
    """The HULL record says everything it measured: with nothing deleted, value and lower bound
    0, no row, no query, nothing solved, complete; otherwise the farthest row, its certified lower
    bound, how many rows were solved and whether that was all of them (``limit``)."""
    import numpy as np

    from lam_ref.theory import hull_deficit

    none = hull_deficit(np.eye(3), [True, True, True])
    assert (none.value, none.lower, none.argmax, none.query, none.solved, none.complete) == (0.0, 0.0, -1, None, 0, True), f"{none}"
    e = np.array([[1.0, 0.0], [0.0, 1.0], [0.6, 0.8], [0.8, 0.6], [0.6, 0.8]])
    full = hull_deficit(e, [True, True, False, False, False])
    assert full.argmax == 2 and full.solved == 3 and full.complete is True, f"first farthest row, all solved: {full}"
    assert 0 <= full.value - full.lower <= HULL_TOL and full.value == pytest.approx(0.2 * np.sqrt(2)), f"{full}"
    part = hull_deficit(e, [True, True, False, False, False], limit=3)
    assert part.solved == 3 and part.complete is True, f"limit equal to the deleted count solves all: {part}"
    inside = hull_deficit(np.array([[1.0, 0.0], [1.0, 0.0]]), [True, False])
    assert (inside.value, inside.lower, inside.argmax, inside.solved) == (0.0, 0.0, -1, 1), f"a deleted copy is in the hull: {inside}"
    one = hull_deficit(e, [True, True, False, False, False], limit=1)
    assert one.solved == 1 and one.complete is False and one.argmax == 2, f"limit 1: the farthest row only: {one}"


@pytest.mark.claim("GEMLINK")
def test_captured_energy_rank_tolerance_and_mask():
    """``E(R)`` projects on span(R) with rank tolerance ``1e-10·σ_max``: a retained row that is
    (numerically) a copy adds no dimension; the mask may be a list of 0/1."""
    import numpy as np

    from lam_ref.theory import captured_energy

    # the second singular value of the first two rows is about 0.99e-10, under 1e-10·σ_max = 1.41e-10
    e = np.array([[1.0, 0.0, 0.0], [1.0, 1.4e-10, 0.0], [0.0, 1.0, 0.0]])
    e /= np.linalg.norm(e, axis=1, keepdims=True)
    got = captured_energy(e, [1, 1, 0])
    assert got == pytest.approx(2 / 3, abs=1e-9), f"a near-copy adds no direction: E = {got}"
    assert captured_energy(e, [0, 1, 1]) == pytest.approx(1.0), "a 0/1 list is a mask, not row ids"
    assert captured_energy(e, [0, 0, 0]) == 0.0, "nothing retained: no energy"
