"""The conformance-specific data (lam_ref/conformance/strategies.py) has the shape the checks rely on.

Each property is checked over many drawn examples; the docstrings say which defect of the data
would make the corresponding check toothless.
"""

from __future__ import annotations

from collections import Counter

import numpy as np
from hypothesis import HealthCheck, Phase, given, settings

from lam_ref.bands import BandSettings, band_keys
from lam_ref.conformance.checks.lines import expected_dedup
from lam_ref.conformance.strategies import codec_inputs, residual_records, shared_block_rows
from lam_ref.geometry import delta_sq
from lam_ref.strategies import all_pairs_sq, tie_band_violations


def _frequency(strategy, per_example, n=60):
    """Run ``per_example(case) -> set of tags`` over ``n`` generated cases (no shrinking; each call
    may assert per-example properties) and return how many cases carried each tag."""
    counts: Counter[str] = Counter()

    @settings(max_examples=n, derandomize=True, database=None, phases=[Phase.generate], suppress_health_check=list(HealthCheck))
    @given(strategy)
    def run(case):
        counts.update(per_example(case))

    run()
    return counts


def test_shared_block_rows_collide_in_bands_but_lie_far_apart():
    """BAND data: unit float32 rows, no pair in the tie band, and in most sets a pair that shares a
    band key of lam_ref's default index (r = 4, rel = 0.2) while sq > δ² — the pairs a candidate
    generator that skips exact verification merges (mutant m07 is caught only because these exist)."""

    def tags(case):
        e, t = case
        norms = np.linalg.norm(e.astype(np.float64), axis=1)
        assert e.dtype == np.float32 and np.all(np.abs(norms - 1) <= 1e-6), f"rows must be unit float32, norms {norms}"
        assert not tie_band_violations(e, t), "no pair may lie in the SPEC §2 tie band"
        keys = band_keys(e, BandSettings())
        share = (keys[:, None, :] == keys[None, :, :]).any(axis=2)
        far = all_pairs_sq(e) > delta_sq(t)
        return {"far collision"} if np.triu(share & far, k=1).any() else set()

    counts = _frequency(shared_block_rows(), tags)
    assert counts["far collision"] >= 30, f"only {counts['far collision']}/60 sets hold a band-colliding far pair"


def test_residual_records_exercise_every_l0_rule():
    """L0 data (SPEC §7): repeats inside one record, whitespace-only lines, identical stub lines
    occurring twice and dropped runs each occur in a good share of the generated trajectories —
    every rule of SPEC §7 is exercised (mutants m12–m15 each break one of them)."""
    prefix = "[P:"

    def tags(records):
        assert records and all(isinstance(r, str) for r in records), f"records must be a non-empty list of str: {records!r}"
        lines_all = [ln for r in records for ln in r.split("\n")]
        out = set()
        if any(ln.strip() == "" and ln != "" for ln in lines_all):
            out.add("whitespace-only")
        stubs = [ln for ln in lines_all if ln.startswith(prefix)]
        if len(stubs) != len(set(stubs)):
            out.add("repeated stub")
        for r in records:
            content = [ln for ln in r.split("\n") if ln.strip() and not ln.startswith(prefix)]
            if len(content) != len(set(content)):
                out.add("repeat inside a record")
        if any(tok[0] == "stub" for rec in expected_dedup(records, prefix) for tok in rec):
            out.add("dropped run")
        return out

    counts = _frequency(residual_records(prefix), tags)
    rare = {k: counts[k] for k in ("whitespace-only", "repeated stub", "repeat inside a record", "dropped run") if counts[k] < 6}
    assert not rare, f"L0 situations seen in fewer than 6 of 60 generated trajectories: {rare}"


def test_expected_dedup_on_a_hand_worked_example():
    """The L0 model of the checks, against an example worked by hand from SPEC §7: repeats across and
    inside records drop, blank/whitespace and stub lines stay (even repeated), runs give one stub."""
    records = ["a\nb\n\nb", "  \na\nb\nc\n[S: x]\n[S: x]\na", ""]
    got = expected_dedup(records, "[S:")
    want = [
        [("keep", "a"), ("keep", "b"), ("keep", ""), ("stub", None)],
        [("keep", "  "), ("stub", None), ("keep", "c"), ("keep", "[S: x]"), ("keep", "[S: x]"), ("stub", None)],
        [("keep", "")],
    ]
    assert got == want, f"model disagrees with the hand-worked SPEC §7 answer:\n{got}\n{want}"


@settings(max_examples=60)
@given(codec_inputs())
def test_codec_inputs_are_valid_and_meaningful(case):
    """L2 data: finite float32 vectors and 0 < eb with eb well above float32 rounding of the data, so
    an error of 2·eb (mutant m16) is always distinguishable from the allowed one-ulp slack."""
    x, eb = case.x, case.eb
    assert x.dtype == np.float32 and x.ndim == 1 and x.size >= 1 and np.all(np.isfinite(x)), f"bad x {x!r}"
    assert np.isfinite(eb) and eb > 0, f"bad eb {eb!r}"
    top = float(np.max(np.abs(x))) if x.size else 0.0
    if top > 0:
        assert eb >= 1e-5 * top * 0.999, f"eb {eb!r} too small against max|x| = {top!r}"
        assert eb > 4 * float(np.spacing(np.float32(top))), f"eb {eb!r} is within float32 rounding of {top!r}"


def test_a_mutants_counterexample_is_minimal_in_values():
    """Union-find components (mutant ``m01_union_find``, claim ``C4``) fail ``substitute.sound``,
    and the counterexample the report carries has shrunk in the *values* too: three rows in two
    dimensions, each a small-integer direction (e.g. ``[1, 0]``, ``[1, 1]/√2``, ``[0, 1]``), the
    chain ``a~b~c, a≁c`` at its simplest. The dimension usually shrinks to 2; float32 product
    paths that differ with memory alignment can stop it at 3 (seen when other tests ran first in
    the same process), so three dimensions are allowed; the values must be small all the same."""
    import pytest

    from lam_ref.conformance.checks.substitute import check_substitute_sound
    from lam_ref.conformance.harness import Context
    from lam_ref.conformance.witnesses.mutants import m01_union_find

    ctx = Context()
    with pytest.raises(AssertionError):
        check_substitute_sound(m01_union_find, ctx)
    e, t = ctx.counterexample
    assert e.shape[0] == 3 and e.shape[1] <= 3, f"the chain needs three rows in at most 3 dims, got {e.shape}: {e.tolist()}"
    for row in e:
        scaled = np.abs(row[row != 0]) / np.abs(row[row != 0]).min()
        assert np.allclose(scaled, np.round(scaled), atol=1e-5) and scaled.max() <= 3, (
            f"row {row.tolist()} is not a small-integer direction (ratios {scaled.tolist()})"
        )
    assert 0.5 <= t <= 0.75, f"threshold {t} (a chain of 45° steps needs t <= cos 45°)"
