"""Profiles (SPEC §15.4, issue 21 §2): an implementation declares what it claims, every check belongs to
profiles, undeclared profiles are skipped with a reason (never passed), the report has a verdict per
profile, and an unknown or unimplemented profile is a one-line usage error."""

from __future__ import annotations

import types

import pytest

import lam_ref.conformance.witnesses.independent as independent
from lam_ref.conformance import CHECKS, load_implementation, run_checks
from lam_ref.conformance.profiles import PROFILES, default_profiles, profile_verdicts, validate_profiles
from lam_ref.conformance.report import validate_report
from lam_ref.geometry import LamValueError

NAMES = ["core", "online", "l0", "l0-stubs", "codec-bound", "codec-v1", "codec-v2", "core-f32", "kept-set", "kept-set-f32",
         "session-v1"]


def test_the_seven_profiles_of_issue_21_exist_and_every_check_belongs_to_one():
    """SPEC §15.4: exactly the seven named profiles; each check names known profiles; each profile has checks."""
    assert list(PROFILES) == NAMES, f"profiles changed: {list(PROFILES)}"
    for c in CHECKS:
        assert c.profiles and set(c.profiles) <= set(NAMES), f"{c.id} has profiles {c.profiles}"
    for name in NAMES:
        assert any(name in c.profiles for c in CHECKS), f"profile {name} has no check"


def test_default_profiles_follow_the_parts():
    """SPEC §15.4: without PROFILES, core plus online / l0 / codec-bound for the parts provided, never the
    byte-exact formats."""
    got = default_profiles({"substitute": True, "online": True, "lines": True, "codec": True, "session": True})
    assert got == {"core", "online", "l0", "codec-bound"}, f"default set {sorted(got)}"
    assert default_profiles({"substitute": True}) == {"core"}, "a substitute-only module gets core"
    impl = load_implementation("lam_ref.conformance.witnesses.mutants.reference")
    assert impl.profiles == {"core", "online", "l0", "codec-bound"} and not impl.profiles_declared, impl.describe()


@pytest.mark.parametrize(
    ("value", "needle"),
    [
        ({"core", "codec-v3"}, "unknown profile 'codec-v3'"),
        ({"core", "codec-v1"}, "claims profile 'codec-v1' but does not implement part(s) codec"),
        ("core", "must be a set of profile names"),
        (set(), "non-empty set"),
        ({"core", 3}, "profile names (str)"),
    ],
)
def test_bad_profiles_are_one_line_errors_naming_them(value, needle):
    """issue 21 'Bad input': an unknown profile or one claimed but not implemented: one line naming it."""
    mod = types.ModuleType("claims_too_much")
    mod.substitute = independent.substitute
    mod.PROFILES = value
    with pytest.raises(LamValueError) as info:
        load_implementation(mod)
    assert needle in str(info.value) and "\n" not in str(info.value), f"message: {info.value}"
    with pytest.raises(LamValueError, match="unknown profile"):
        validate_profiles(["nope"], {"substitute": True}, "x")


def test_undeclared_profiles_are_skipped_never_passed_and_verdicts_per_profile(tmp_path):
    """A module claiming only core: every non-core check is skipped naming the profile; the report's verdicts
    are passed for core and skipped (with the reason) for every other profile; the report is valid."""
    mod = types.ModuleType("core_only")
    for name in ("substitute", "OnlineSession", "dedup_lines", "STUB_PREFIX", "codec_encode", "codec_decode"):
        setattr(mod, name, getattr(independent, name))
    mod.PROFILES = {"core"}
    results = run_checks(mod, scale=0.2, report=tmp_path / "r.json")
    for r in results:
        if "core" in r.check.profiles:
            assert r.outcome == "passed", f"{r.id}: {r.outcome} {r.message}"
        else:
            why = r.reason or ""
            assert r.outcome == "skipped" and ("not declared" in why or "not provided" in why), f"{r.id}: {r.outcome} {why}"
    import json

    rep = json.loads((tmp_path / "r.json").read_text())
    assert not validate_report(rep), validate_report(rep)
    verdicts = {k: v["verdict"] for k, v in rep["profiles"].items()}
    assert verdicts == {n: ("passed" if n == "core" else "skipped") for n in NAMES}, verdicts
    assert rep["profiles"]["online"]["reason"].startswith("not declared"), rep["profiles"]["online"]


def test_profile_verdicts_fail_and_incomplete():
    """profile_verdicts: a failed check fails its profile; a declared profile with a check not run is
    incomplete; a COMPLETE = False skip does not make it incomplete."""
    tests = [
        {"id": "a", "profiles": ["core"], "outcome": "passed", "reason": None},
        {"id": "b", "profiles": ["core", "online"], "outcome": "failed", "reason": None},
        {"id": "c", "profiles": ["l0"], "outcome": "skipped", "reason": "deselected"},
        {"id": "d", "profiles": ["codec-bound"], "outcome": "skipped", "reason": "implementation declares COMPLETE = False: ..."},
        {"id": "e", "profiles": ["codec-bound"], "outcome": "passed", "reason": None},
    ]
    v = profile_verdicts({"core", "online", "l0", "codec-bound"}, tests)
    got = {k: v[k]["verdict"] for k in ("core", "online", "l0", "codec-bound", "codec-v1")}
    assert got == {"core": "failed", "online": "failed", "l0": "incomplete", "codec-bound": "passed", "codec-v1": "skipped"}, got
    assert v["core"]["failed"] == ["b"], v["core"]


def test_lam_ref_and_the_independent_implementation_declare_their_profiles():
    """issue 21 §2: lam_ref's adapter claims all seven; the independent implementation claims what it
    implements (its own stubs and codec format: not l0-stubs / codec-v1)."""
    # every profile but the float32-cosine one (lam_ref decides exactly) and the kept-set form (it returns π)
    assert load_implementation("lam_ref.conformance.adapter").profiles == set(NAMES) - {"core-f32", "kept-set", "kept-set-f32"}
    ind = load_implementation("lam_ref.conformance.witnesses.independent")
    assert ind.profiles == {"core", "online", "l0", "codec-bound"} and ind.profiles_declared, ind.describe()
