"""Checks of the area ``vectors``: every vector of a profile's file (``docs/vectors.md``).

A check runs only for a profile the implementation claims (its ``PROFILES``, else the default
profiles of the parts it provides: ``core``, ``online``, ``l0``, ``codec-bound``); any other
profile is skipped with the reason, never passed. The default run leaves out the vectors flagged
``LargeIds`` (65,537 rows; :data:`~lam_ref.conformance.vectors.run.THOROUGH_ONLY`); ``--thorough``
runs every vector but those flagged ``Ids2To24`` (:data:`~lam_ref.conformance.vectors.run.HUGE_ONLY`,
``python -m lam_ref.conformance.vectors --huge``). A failure lists how many vectors failed and
the first few, each with its id, flags and spec anchor.
"""

from __future__ import annotations

from typing import Any

from ..harness import Check, CheckSkipped, Context, check
from ..vectors.run import (
    HUGE_ONLY,
    PROFILE_CHECKS,
    PROFILE_PARTS,
    PROFILES,
    THOROUGH_ONLY,
    count_run,
    declared_profiles,
    load_vectors,
    run_vectors,
    session_loader,
    summary,
)

__all__ = ["CHECKS", "check_vectors"]

_PARTS = {"substitute": ("substitute",), "online": ("online",), "lines": ("lines",), "codec": ("codec",),
          "session": ("online",)}


def check_vectors(impl: Any, ctx: Context, profile: str) -> None:
    """Run ``profile``'s vectors against ``impl``; raise ``AssertionError`` listing the failures."""
    claimed, source = declared_profiles(impl)
    if profile not in claimed:
        raise CheckSkipped(f"profile {profile!r} not claimed ({source}: {', '.join(sorted(claimed)) or 'none'})")
    if profile == "session-v1" and session_loader(impl) is None:
        raise AssertionError("profile 'session-v1' is claimed but the implementation has no session_load(path, t)")
    doc = load_vectors(profile)
    skip = HUGE_ONLY if ctx.thorough else THOROUGH_ONLY
    failures = run_vectors(impl, profile, doc, skip_flags=skip)
    if failures:
        ctx.note({"file": f"{profile}.json", "vector": failures[0].vector_id, "flags": list(failures[0].flags)})
        ran = count_run(doc, skip)
        raise AssertionError(f"{profile}.json: {summary(failures, ran, left_out=doc['number_of_vectors'] - ran)}")


#: Mutants each profile's vectors were shown to reject (``tests/conformance/test_mutants.py`` holds
#: every naming true).
SHOWN_TO_FAIL_ON: dict[str, tuple[str, ...]] = {
    "core": ("m03_strict_less", "m10_delta_not_squared"),
    "online": ("m05_keep_newest", "m18_partial_turn"),
    "l0": ("m13_l0_per_record",),
    "l0-stubs": ("m39_l0_stub_one_based", "m40_l0_stub_input_lines"),
    "codec-bound": ("m16_codec_truncation",),
    "codec-v1": ("m59_codec_header_big_endian",),
    "codec-v2": ("m132_codec_v2_unread",),
    "session-v1": ("m131_session_ids_from_retained",),
}


def _make(profile: str) -> Any:
    claim, spec = PROFILE_CHECKS[profile]

    def body(impl: Any, ctx: Context) -> None:
        check_vectors(impl, ctx, profile)

    body.__doc__ = f"Every vector of {profile}.json: {spec.split(' ', 1)[1]}."
    body.__name__ = f"check_vectors_{profile.replace('-', '_')}"
    return check(f"vectors.{profile}", claim=claim, spec=spec, parts=_PARTS[PROFILE_PARTS[profile]],
                 shown_to_fail_on=SHOWN_TO_FAIL_ON[profile], profiles=(profile,))(body)


_FUNCS = {p: _make(p) for p in PROFILES}
check_vectors_core = _FUNCS["core"]
check_vectors_online = _FUNCS["online"]
check_vectors_l0 = _FUNCS["l0"]
check_vectors_l0_stubs = _FUNCS["l0-stubs"]
check_vectors_codec_bound = _FUNCS["codec-bound"]
check_vectors_codec_v1 = _FUNCS["codec-v1"]
check_vectors_codec_v2 = _FUNCS["codec-v2"]
check_vectors_session_v1 = _FUNCS["session-v1"]
#: The ``vectors.*`` checks, one per profile, in the order of the profiles.
CHECKS: list[Check] = [f.check for f in _FUNCS.values()]
