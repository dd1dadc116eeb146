"""Proof by mutants (docs/conformance.md, "How we know the suite works"): every deliberately wrong implementation is rejected, naming its claim.

Each module of :mod:`lam_ref.conformance.mutants` implements SPEC §15 with one realistic bug and
declares ``VIOLATES``. The checks run in-process on every mutant with reduced example counts
(``scale``): the checks that name the mutant in ``shown_to_fail_on`` and those of the claim it
violates, or all for a mutant no check names (heavy checks only where they name it); a mutant is *killed* when at least one check fails and a failed
check carries the claim ID ``VIOLATES``. The kill rate must be 100 % and is printed.
"""

from __future__ import annotations

import pytest

from lam_ref.conformance import CHECKS, run_checks
from lam_ref.conformance.mutants import load_mutants, mutant_names

MUTANTS = load_mutants()
SCALE = 0.1  # 1/10 of the default example counts: every kill is found well within this budget


def _short(module) -> str:
    return module.__name__.rsplit(".", 1)[1]


def _selection(mutant) -> list[str]:
    """The checks run on a mutant: those that name it in ``shown_to_fail_on`` (each naming is held true) and
    every check of the claim it violates, or, for a mutant no check names, every check; heavy checks (cases
    large by construction, seconds each on the plain skeleton) only where they name the mutant. Every
    correct implementation runs every check (tests/test_conformance_no_false_alarms.py)."""
    name = _short(mutant)
    named = [c.id for c in CHECKS if name in c.shown_to_fail_on]
    if not named:
        return [c.id for c in CHECKS if not c.heavy]
    return named + [c.id for c in CHECKS if c.claim == mutant.VIOLATES and not c.heavy and c.id not in named]


@pytest.fixture(scope="module")
def kills():
    """``{mutant: [failed CheckResult, ...]}`` for every mutant (computed once)."""
    return {
        _short(m): [r for r in run_checks(m, scale=SCALE, select=_selection(m)) if r.outcome == "failed"]
        for m in MUTANTS
    }


def test_at_least_twelve_mutants_with_declared_bug_and_claim():
    """At least 12 mutants, each naming its bug and the claim it violates."""
    assert len(MUTANTS) >= 12, f"only {len(MUTANTS)} mutants shipped: {mutant_names()}"
    known = {c.claim for c in CHECKS}
    for m in MUTANTS:
        assert isinstance(getattr(m, "BUG", None), str) and m.BUG, f"{m.__name__} must state its BUG"
        assert m.VIOLATES in known, f"{m.__name__}.VIOLATES = {m.VIOLATES!r} is not a claim any check covers ({sorted(known)})"


@pytest.mark.parametrize("mutant", MUTANTS, ids=_short)
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
    wanted = {_short(m): m.VIOLATES for m in MUTANTS}
    killed = [name for name, failed in kills.items() if any(r.claim == wanted[name] for r in failed)]
    rate = 100.0 * len(killed) / len(kills)
    with capsys.disabled():
        print(f"\nconformance mutant kill rate: {len(killed)}/{len(kills)} = {rate:.0f} % (examples at {SCALE:g}x)")
    assert rate == 100.0, f"survivors: {sorted(set(kills) - set(killed))}"


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
