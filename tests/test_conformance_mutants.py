"""Proof by mutants (docs/conformance.md, "How we know the suite works"): every deliberately wrong implementation is rejected, naming its claim.

Each module of :mod:`lam_ref.conformance.mutants` implements SPEC §15 with one realistic bug and
declares ``VIOLATES``. The checks run in-process on every mutant with reduced example counts
(``scale``); a mutant is *killed* when at least one check fails and a failed check carries the
claim ID ``VIOLATES``. The kill rate must be 100 % and is printed.
"""

from __future__ import annotations

import pytest

from lam_ref.conformance import CHECKS, run_checks
from lam_ref.conformance.mutants import load_mutants, mutant_names

MUTANTS = load_mutants()
SCALE = 0.1  # 1/10 of the default example counts: every kill is found well within this budget


def _short(module) -> str:
    return module.__name__.rsplit(".", 1)[1]


def _heavy_skips(name: str) -> dict[str, str]:
    """Heavy checks (cases large by construction, seconds each on the plain skeleton) run only on the
    mutants they name; every correct implementation runs them (tests/test_conformance_no_false_alarms.py)."""
    return {c.id: "heavy check, run on the mutants it names" for c in CHECKS if c.heavy and name not in c.shown_to_fail_on}


@pytest.fixture(scope="module")
def kills():
    """``{mutant: [failed CheckResult, ...]}`` for every mutant (computed once)."""
    return {
        _short(m): [r for r in run_checks(m, scale=SCALE, skips=_heavy_skips(_short(m))) if r.outcome == "failed"]
        for m in MUTANTS
    }


def test_at_least_twelve_mutants_with_declared_bug_and_claim():
    """At least 12 mutants, each naming its bug and the claim it violates."""
    assert len(MUTANTS) >= 12, f"only {len(MUTANTS)} mutants shipped: {mutant_names()}"
    known = {c.claim for c in CHECKS}
    for m in MUTANTS:
        assert isinstance(getattr(m, "BUG", None), str) and m.BUG, f"{m.__name__} must state its BUG"
        assert m.VIOLATES in known, f"{m.__name__}.VIOLATES = {m.VIOLATES!r} is not a claim any check covers ({sorted(known)})"


@pytest.mark.parametrize("mutant", [m for m in MUTANTS if not hasattr(m, "CAUGHT_BY")], ids=_short)
def test_mutant_is_killed_naming_its_claim(mutant, kills):
    """The suite rejects the mutant and one failed check names the violated claim; a failure on
    generated data carries its minimal counterexample."""
    failed = kills[_short(mutant)]
    assert failed, f"{mutant.__name__} ({mutant.BUG}) passed every check: the suite missed the bug"
    claims = sorted({r.claim for r in failed})
    assert mutant.VIOLATES in claims, (
        f"{mutant.__name__} ({mutant.BUG}) failed only checks of claims {claims}, none naming {mutant.VIOLATES}"
    )
    for r in failed:
        assert r.message and r.claim in {c.claim for c in CHECKS}, f"{r.id} failed without a message: {r}"
        if r.hypothesis is not None and r.exception == "AssertionError":
            assert r.counterexample is not None, f"{r.id} on {mutant.__name__} failed on generated data without a counterexample"


def test_kill_rate_is_100_percent(kills, capsys):
    """The kill rate is 100 % and is printed."""
    designed = [m for m in MUTANTS if not hasattr(m, "CAUGHT_BY")]  # m46+ are measured below
    wanted = {_short(m): m.VIOLATES for m in designed}
    killed = [name for name in wanted if any(r.claim == wanted[name] for r in kills[name])]
    rate = 100.0 * len(killed) / len(wanted)
    with capsys.disabled():
        print(f"\nconformance mutant kill rate (m01-m45): {len(killed)}/{len(wanted)} = {rate:.0f} % (examples at {SCALE:g}x)")
    assert rate == 100.0, f"survivors: {sorted(set(wanted) - set(killed))}"


@pytest.mark.parametrize("check", [c for c in CHECKS if c.shown_to_fail_on], ids=lambda c: c.id)
def test_docstring_claims_of_each_check_hold(check, kills):
    """Each check's docstring names the mutants it was shown to fail on; that statement is true."""
    for name in check.shown_to_fail_on:
        assert name in kills, f"{check.id} names an unknown mutant {name!r}"
        ids = [r.id for r in kills[name]]
        assert check.id in ids, f"{check.id} says it fails on {name}, but on {name} only {ids} failed"


def test_every_claim_id_is_registered_or_a_documented_spec_item():
    """Check claims are claim IDs of lam_ref.claims (EQ1, DEF1, C4, BAND, ONLINE) or one of the suite's
    SPEC-item IDs (VALID, L0, L2) — a typo such as "DEF 1" fails here."""
    from lam_ref.claims import registry
    from lam_ref.conformance.harness import SPEC_ITEM_IDS

    known = set(registry()) | set(SPEC_ITEM_IDS)
    unknown = sorted({c.claim for c in CHECKS} - known)
    assert not unknown, f"checks name claims that are neither registered nor SPEC items: {unknown}"


def test_mutant_profiles_are_what_they_claim():
    """A mutant that declares PROFILES is checked against those profiles only (SPEC §15.4); the byte-exact
    profiles' mutants declare the profile whose checks kill them."""
    for m in MUTANTS:
        name = _short(m)
        declared = getattr(m, "PROFILES", None)
        for c in CHECKS:
            if name in c.shown_to_fail_on and declared is not None:
                assert set(c.profiles) & set(declared), f"{name} is said to be killed by {c.id} ({c.profiles}) but declares {declared}"


def test_every_check_kills_some_mutant():
    """No check is dead weight: every check's docstring names at least one mutant it rejects."""
    lazy = [c.id for c in CHECKS if not c.shown_to_fail_on]
    assert not lazy, f"checks without a mutant they were shown to fail on: {lazy}"


# -------------------------------------------------------------------------------------------
# mutants m46 onwards (issue 21 §5): realistic bugs not designed around the checks, each with
# its measured record (CAUGHT_BY), and the controls: allowed alternatives that must pass
# -------------------------------------------------------------------------------------------
from lam_ref.conformance.mutants import _table  # noqa: E402
from lam_ref.conformance.mutants.controls import load_controls  # noqa: E402

RECORDED = [m for m in MUTANTS if hasattr(m, "CAUGHT_BY")]
CONTROLS = load_controls()
CLASSES = {
    "fixed-size buffer", "integer width", "byte order", "memory layout", "aliasing", "text encoding",
    "off-by-one at turn boundary", "off-by-one at record boundary", "off-by-one at block boundary",
    "special-cased threshold", "early exit", "stale cache", "per-session global",
}


@pytest.fixture(scope="module")
def control_failures():
    """``{control: [failed CheckResult, ...]}`` for every control (computed once)."""
    return {_short(c): [r for r in run_checks(c, scale=SCALE) if r.outcome == "failed"] for c in CONTROLS}


def test_at_least_sixty_recorded_mutants_and_ten_controls():
    """Issue 21 §5: at least 60 mutants m46+ with bug, class, idiom, claim and exposing input stated,
    and at least 10 allowed alternatives (controls), each stating what it does differently."""
    assert len(RECORDED) >= 60, f"only {len(RECORDED)} mutants carry a CAUGHT_BY record"
    known = {c.claim for c in CHECKS}
    for m in RECORDED:
        for attr in ("BUG", "IDIOM", "NEEDS"):
            assert isinstance(getattr(m, attr, None), str) and getattr(m, attr), f"{m.__name__} must state {attr}"
        assert m.CLASS in CLASSES, f"{m.__name__}.CLASS = {m.CLASS!r} is not one of the bug classes {sorted(CLASSES)}"
        assert m.VIOLATES in known, f"{m.__name__}.VIOLATES = {m.VIOLATES!r} is not a claim any check covers"
        assert isinstance(m.CAUGHT_BY, tuple), f"{m.__name__}.CAUGHT_BY must be a tuple of check ids"
    assert len(CONTROLS) - 1 >= 10, f"only {len(CONTROLS) - 1} controls besides the c00 skeleton"
    for c in CONTROLS:
        assert getattr(c, "CONTROL", False) is True and c.ALLOWED, f"{c.__name__} must set CONTROL = True and ALLOWED"


@pytest.mark.parametrize("mutant", RECORDED, ids=_short)
def test_recorded_catch_is_true(mutant, kills):
    """Each mutant m46+ fails every check its CAUGHT_BY record names (the record stays true); a
    mutant recorded as surviving (empty record) must still pass every check, so that a newly
    caught mutant is noticed and recorded (``python -m lam_ref.conformance.mutants._table --record``)."""
    failed = [r.id for r in kills[_short(mutant)]]
    if mutant.CAUGHT_BY:
        missing = [c for c in mutant.CAUGHT_BY if c not in failed]
        assert not missing, f"{mutant.__name__} ({mutant.BUG}) is recorded as caught by {missing}, but only {failed} failed"
    else:
        assert not failed, (
            f"{mutant.__name__} ({mutant.BUG}) is recorded as surviving but {failed} now fail: "
            "re-record it (python -m lam_ref.conformance.mutants._table --record)"
        )


def test_recorded_kill_rate_is_printed(kills, capsys):
    """The kill rate over m46+ (what the suite catches of bugs it was not designed around) is printed;
    it equals the rate the page docs/conformance-mutants.md states."""
    caught = [m for m in RECORDED if kills[_short(m)]]
    rate = 100.0 * len(caught) / len(RECORDED)
    with capsys.disabled():
        print(f"\nmutants m46+ caught: {len(caught)}/{len(RECORDED)} = {rate:.0f} % (examples at {SCALE:g}x); "
              f"survivors: {[_short(m) for m in RECORDED if not kills[_short(m)]]}")
    assert len(caught) == sum(1 for m in RECORDED if m.CAUGHT_BY), "the CAUGHT_BY records disagree with this run"


@pytest.mark.parametrize("control", CONTROLS, ids=_short)
def test_control_passes_every_check(control, control_failures):
    """A control is an allowed alternative (SPEC §2.2 tie band, another batching, another valid
    reading): any failed check is a false alarm of the suite."""
    failed = control_failures[_short(control)]
    assert not failed, f"{control.__name__} ({control.ALLOWED}) failed {[r.id for r in failed]}: {failed[0].message[:300]}"


def test_control_pass_rate_is_printed(control_failures, capsys):
    """The controls' pass rate is printed (it must be 100 %)."""
    passed = [name for name, failed in control_failures.items() if not failed]
    with capsys.disabled():
        print(f"\ncontrols passing: {len(passed)}/{len(control_failures)}")
    assert len(passed) == len(control_failures), f"controls failing: {sorted(set(control_failures) - set(passed))}"


def test_independent2_passes_every_check():
    """The second implementation written from the docs alone (issue 21 §5) passes every check at the
    default example counts (no false alarm)."""
    from lam_ref.conformance import independent2

    failed = [r for r in run_checks(independent2) if r.outcome != "passed"]
    assert not failed, f"independent2: {[(r.id, r.outcome, (r.message or r.reason or '')[:200]) for r in failed]}"


def test_mutant_page_equals_the_registry():
    """docs/conformance-mutants.md is the rendering of the mutants' and controls' metadata."""
    from pathlib import Path

    page = Path(__file__).resolve().parents[1] / _table.PAGE
    assert page.read_text() == _table.render(), (
        f"{_table.PAGE} is stale: run python -m lam_ref.conformance.mutants._table --write {_table.PAGE}"
    )
