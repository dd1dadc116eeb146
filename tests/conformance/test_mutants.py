"""Proof by mutants (docs/conformance.md, "How we know the suite works"): every deliberately wrong implementation is rejected, naming its claim.

Each module of :mod:`lam_ref.conformance.witnesses.mutants` implements SPEC §15 with one realistic bug and
declares ``VIOLATES``. The checks run in-process on every mutant with reduced example counts
(``scale``): the checks that name the mutant in ``shown_to_fail_on`` and those of the claim it
violates, or all for a mutant no check names (heavy checks only where they name it); a mutant is *killed* when at least one check fails and a failed
check carries the claim ID ``VIOLATES``. The kill rate must be 100 % and is printed.
"""

from __future__ import annotations

import pytest

from lam_ref.conformance import CHECKS, run_checks
from lam_ref.conformance.witnesses.mutants import load_mutants, mutant_names

MUTANTS = load_mutants()
SCALE = 0.1  # 1/10 of the default example counts: every kill is found well within this budget


def _short(module) -> str:
    return module.__name__.rsplit(".", 1)[1]


def _selection(mutant) -> list[str]:
    """The checks run on a mutant: those that name it in ``shown_to_fail_on`` (each naming is held true) and
    every check of the claim it violates, or, for a mutant no check names, every check; heavy checks (cases
    large by construction, seconds each on the plain skeleton) only where they name the mutant. Every
    correct implementation runs every check (tests/conformance/test_no_false_alarms.py)."""
    name = _short(mutant)
    named = [c.id for c in CHECKS if name in c.shown_to_fail_on]
    if not named:
        return [c.id for c in CHECKS if not c.heavy]
    return named + [c.id for c in CHECKS if c.claim == mutant.VIOLATES and not c.heavy and c.id not in named]


#: The mutants written with the checks (m01-m45); m46 onwards carry a measured CAUGHT_BY record.
DESIGNED = [m for m in MUTANTS if not hasattr(m, "CAUGHT_BY")]
BY_NAME = {_short(m): m for m in MUTANTS}


@pytest.fixture(scope="module")
def kills():
    """``{mutant: [failed CheckResult, ...]}`` for every mutant m01-m45 (computed once)."""
    return {
        _short(m): [r for r in run_checks(m, scale=SCALE, select=_selection(m)) if r.outcome == "failed"]
        for m in DESIGNED
    }


def test_at_least_twelve_mutants_with_declared_bug_and_claim():
    """At least 12 mutants, each naming its bug and the claim it violates."""
    assert len(MUTANTS) >= 12, f"only {len(MUTANTS)} mutants shipped: {mutant_names()}"
    known = {c.claim for c in CHECKS}
    for m in MUTANTS:
        assert isinstance(getattr(m, "BUG", None), str) and m.BUG, f"{m.__name__} must state its BUG"
        assert m.VIOLATES in known, f"{m.__name__}.VIOLATES = {m.VIOLATES!r} is not a claim any check covers ({sorted(known)})"


@pytest.mark.parametrize("mutant", DESIGNED, ids=_short)
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
    wanted = {_short(m): m.VIOLATES for m in DESIGNED}  # m46+ are measured below
    killed = [name for name in wanted if any(r.claim == wanted[name] for r in kills[name])]
    rate = 100.0 * len(killed) / len(wanted)
    with capsys.disabled():
        print(f"\nconformance mutant kill rate (m01-m45): {len(killed)}/{len(wanted)} = {rate:.0f} % (examples at {SCALE:g}x)")
    assert rate == 100.0, f"survivors: {sorted(set(wanted) - set(killed))}"


@pytest.mark.parametrize("check", [c for c in CHECKS if c.shown_to_fail_on], ids=lambda c: c.id)
def test_docstring_claims_of_each_check_hold(check, kills):
    """Each check's docstring names the mutants it was shown to fail on; that statement is true."""
    for name in check.shown_to_fail_on:
        assert name in BY_NAME, f"{check.id} names an unknown mutant {name!r}"
        if name in kills:
            ids = [r.id for r in kills[name]]
        else:  # a measured mutant (m46+): run just this check on it
            ids = [r.id for r in run_checks(BY_NAME[name], scale=SCALE, select=[check.id]) if r.outcome == "failed"]
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
# its measured record (CAUGHT_BY), and the controls: allowed alternatives that must pass.
# The default run checks every record (only the recorded checks run) and the c00 skeleton and
# independent2 on every check; the thorough profile (`make thorough`) re-runs the whole suite on
# every mutant m46+ (survivors must pass everything) and on every control.
# -------------------------------------------------------------------------------------------
import os  # noqa: E402

from lam_ref.conformance.witnesses import tables  # noqa: E402
from lam_ref.conformance.witnesses.controls import load_controls  # noqa: E402

THOROUGH = os.environ.get("HYPOTHESIS_PROFILE", "ci") == "thorough"
RECORDED = [m for m in MUTANTS if hasattr(m, "CAUGHT_BY")]
CONTROLS = load_controls()
CLASSES = {
    "fixed-size buffer", "integer width", "byte order", "memory layout", "aliasing", "text encoding",
    "off-by-one at turn boundary", "off-by-one at record boundary", "off-by-one at block boundary",
    "special-cased threshold", "early exit", "stale cache", "per-session global",
    "key collision", "protocol state",  # issue 38: 32-bit / prototype-name keys; exec session handles
}


def test_at_least_sixty_recorded_mutants_and_ten_controls():
    """Issue 21 §5: at least 60 mutants m46+ with bug, class, idiom, claim and exposing input stated,
    and at least 10 allowed alternatives (controls), each stating what it does differently."""
    assert tables.SCALE == SCALE, "the records are measured at the meta-test's scale"
    assert len(RECORDED) >= 60, f"only {len(RECORDED)} mutants carry a CAUGHT_BY record"
    known = {c.claim for c in CHECKS}
    ids = {c.id for c in CHECKS}
    for m in RECORDED:
        for attr in ("BUG", "IDIOM", "NEEDS"):
            assert isinstance(getattr(m, attr, None), str) and getattr(m, attr), f"{m.__name__} must state {attr}"
        assert m.CLASS in CLASSES, f"{m.__name__}.CLASS = {m.CLASS!r} is not one of the bug classes {sorted(CLASSES)}"
        assert m.VIOLATES in known, f"{m.__name__}.VIOLATES = {m.VIOLATES!r} is not a claim any check covers"
        assert isinstance(m.CAUGHT_BY, tuple) and set(m.CAUGHT_BY) <= ids, f"{m.__name__}.CAUGHT_BY names unknown checks: {m.CAUGHT_BY}"
    assert len(CONTROLS) - 1 >= 10, f"only {len(CONTROLS) - 1} controls besides the c00 skeleton"
    for c in CONTROLS:
        assert getattr(c, "CONTROL", False) is True and c.ALLOWED, f"{c.__name__} must set CONTROL = True and ALLOWED"


@pytest.mark.parametrize("mutant", [m for m in RECORDED if m.CAUGHT_BY], ids=_short)
def test_recorded_catch_is_true(mutant):
    """Each caught mutant m46+ fails every check its CAUGHT_BY record names (the record stays true)."""
    results = run_checks(mutant, scale=SCALE, select=list(mutant.CAUGHT_BY))
    failed = {r.id for r in results if r.outcome == "failed"}
    missing = [c for c in mutant.CAUGHT_BY if c not in failed]
    assert not missing, f"{mutant.__name__} ({mutant.BUG}) is recorded as caught by {missing}, but only {sorted(failed)} failed"


@pytest.mark.parametrize("impl", [CONTROLS[0]], ids=_short)
def test_skeleton2_passes_every_check(impl):
    """The second mutant skeleton (c00_base2, which every m46+ differs from by one hook) passes every
    check, so that a mutant's failure is caused by its bug alone."""
    failed = [r for r in run_checks(impl, scale=SCALE) if r.outcome == "failed"]
    assert not failed, f"{impl.__name__} failed {[(r.id, (r.message or '')[:200]) for r in failed]}"


def test_independent2_passes_every_check():
    """The second implementation written from the docs alone (issue 21 §5) passes every check of the
    profiles it claims (no false alarm)."""
    from lam_ref.conformance.witnesses import independent2

    failed = [r for r in run_checks(independent2, scale=SCALE) if r.outcome == "failed"]
    assert not failed, f"independent2: {[(r.id, (r.message or '')[:200]) for r in failed]}"


@pytest.fixture(scope="module")
def full_runs():
    """Every check on every mutant m46+ and every control (thorough profile only: minutes)."""
    return {_short(m): [r for r in run_checks(m, scale=SCALE) if r.outcome == "failed"] for m in RECORDED + CONTROLS}


@pytest.mark.slow
@pytest.mark.skipif(not THOROUGH, reason="slow (minutes): every check on 85 mutants and 15 controls; `make thorough`")
def test_recorded_survivors_and_rates(full_runs, capsys):
    """A mutant recorded as surviving still passes every check (a newly caught one must be re-recorded);
    the kill rate over m46+ and the controls' pass rate are printed; every control passes."""
    caught = [m for m in RECORDED if full_runs[_short(m)]]
    controls_ok = [c for c in CONTROLS if not full_runs[_short(c)]]
    with capsys.disabled():
        print(f"\nmutants m46+ caught: {len(caught)}/{len(RECORDED)} = {100.0 * len(caught) / len(RECORDED):.0f} %; "
              f"controls passing: {len(controls_ok)}/{len(CONTROLS)}; survivors: {[_short(m) for m in RECORDED if m not in caught]}")
    newly = [_short(m) for m in caught if not m.CAUGHT_BY]
    assert not newly, f"recorded as surviving but now caught (re-record: {tables.COMMAND_RECORD}): {newly}"
    bad = {_short(c): [r.id for r in full_runs[_short(c)]] for c in CONTROLS if full_runs[_short(c)]}
    assert not bad, f"controls failing (false alarms of the suite): {bad}"


def test_mutant_page_equals_the_registry():
    """docs/conformance-mutants.md is the rendering of the mutants' and controls' metadata, and the mutants
    block of docs/conformance.md the rendering of m01-m45's (one mechanism for both mutant regimes)."""
    import re
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    page = root / tables.PAGE
    assert page.read_text() == tables.render(), (
        f"{tables.PAGE} is stale: run {tables.COMMAND_WRITE}"
    )
    text = (root / tables.CONFORMANCE_PAGE).read_text(encoding="utf-8")
    block = re.search(r"<!-- mutants-table:start -->\n(.*?)\n<!-- mutants-table:end -->", text, re.S)
    assert block is not None, f"{tables.CONFORMANCE_PAGE} lacks the generated mutants-table block"
    assert block.group(1) == tables.designed_table(), f"the mutants table of {tables.CONFORMANCE_PAGE} is stale: run {tables.COMMAND_WRITE}"
