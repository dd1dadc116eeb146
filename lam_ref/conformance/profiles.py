"""Conformance profiles: what an implementation claims, as named sets of MUST rules (SPEC §15.4).

An implementation declares ``PROFILES = {"core", "online", ...}`` (a Python module attribute, or
the ``profiles`` list of an exec server's ``hello``). Each profile is a documented set of MUST
rules of docs/spec.md and needs some parts of SPEC §15.1; every check belongs to one or more
profiles (``@check(..., profiles=...)``) and runs only when the implementation declares one of
them. A profile that is not declared is **skipped with a reason, never passed**; the report gives
a verdict per profile (:func:`profile_verdicts`).

An implementation without ``PROFILES`` (every adapter written before profiles existed) gets
:func:`default_profiles`: ``core`` for ``substitute``, ``online`` for ``OnlineSession``, ``l0``
for ``dedup_lines`` + ``STUB_PREFIX`` and ``codec-bound`` for the codec — never the byte-exact
formats (``l0-stubs``, ``codec-v1``, ``session-v1``), which it never promised.

An unknown profile name, or a profile claimed without the parts it needs, is a usage error
(:class:`~lam_ref.geometry.LamValueError` naming it; ``lam-ref conform`` exits 2).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from ..geometry import LamValueError

__all__ = [
    "PROFILES",
    "Profile",
    "default_profiles",
    "markdown_table",
    "profile_verdicts",
    "validate_profiles",
]


@dataclass(frozen=True)
class Profile:
    """A named set of MUST rules (``rules``: SPEC anchors) needing the SPEC §15.1 ``parts``."""

    name: str
    title: str
    parts: tuple[str, ...]
    rules: tuple[str, ...]


#: Every profile, in report order. ``rules`` are anchors of docs/spec.md.
PROFILES: dict[str, Profile] = {
    p.name: p
    for p in (
        Profile("core", "Algorithm 2: the decision rule, π, input validation, memory layouts", ("substitute",),
                ("s1-pi", "s2-merge", "s2-validation", "s2-layout", "s5-oracle", "s15-adapter")),
        Profile("online", "Algorithm 1: sessions, online ≡ batch, rejected turns, fresh results", ("substitute", "online"),
                ("s6-session", "s6-online-batch", "s2-validation", "s2-layout")),
        Profile("l0", "L0 exact line deduplication (the paper's rule; stub text free)", ("lines",),
                ("s7-lines", "s7-runs")),
        Profile("l0-stubs", "L0 stub lines byte-exact: [LAM:L0 n lines=rR:L]", ("lines",),
                ("s7-runs", "s8-stubs")),
        Profile("codec-bound", "L2 codec, any byte format: the error bound, determinism, refusals", ("codec",),
                ("s9-codec", "s9-bound", "s9-input")),
        Profile("codec-v1", "L2 codec byte format version 1 (docs/codec.md), byte-exact, every refusal", ("codec",),
                ("s9-codec", "s9-bound", "s9-input", "s9-v1")),
        Profile("codec-v2", "L2 codec byte format version 2 (docs/codec.md): decoded bit for bit, every refusal",
                ("codec",), ("s9-codec", "s9-bound", "s9-v2")),
        Profile("core-f32", "Algorithm 2 computed as a float32 cosine: exact outside the tie band of §2.2, either answer inside",
                ("substitute",), ("s2-tie-band", "s5-oracle", "s15-adapter")),
        Profile("kept-set", "Algorithm 2's kept set (and witnesses, if returned): sound, the oracle's, prefix-closed",
                ("kept",), ("s2-merge", "s5-oracle", "s15-kept")),
        Profile("kept-set-f32", "kept-set judged with the float32-cosine tie band of §2.2", ("kept",),
                ("s2-tie-band", "s5-oracle", "s15-kept")),
        Profile("session-v1", "online session save format version 1 (save, restore, refuse)", ("online", "session"),
                ("s6-save",)),
    )
}

#: The profile each SPEC §15.1 part implies when an implementation declares no ``PROFILES``.
_DEFAULT_BY_PART = {"substitute": "core", "online": "online", "lines": "l0", "codec": "codec-bound"}


def default_profiles(parts: dict[str, bool]) -> frozenset[str]:
    """The profiles of an implementation without ``PROFILES``: one per provided part (module docstring).

    ``core`` is always included: ``substitute`` is required, so its absence fails (never skips).

    Examples:
        >>> sorted(default_profiles({"substitute": True, "online": True, "lines": False, "codec": True}))
        ['codec-bound', 'core', 'online']
    """
    if parts.get("kept") and not parts.get("substitute"):
        return frozenset({"kept-set"})
    out = {"core"}
    out |= {name for part, name in _DEFAULT_BY_PART.items() if parts.get(part)}
    return frozenset(out)


def validate_profiles(value: Any, parts: dict[str, bool], where: str) -> frozenset[str]:
    """``value`` (``PROFILES``) as a frozenset of known names whose parts are provided.

    Raises :class:`LamValueError` naming ``where`` and the offending name: not a set/list of
    strings, an unknown profile, or a profile claimed while a part it needs is missing.
    """
    if isinstance(value, str) or not isinstance(value, Iterable):
        raise LamValueError(f"{where}.PROFILES must be a set of profile names, got {value!r}")
    names = list(value)
    if not names or not all(isinstance(n, str) for n in names):
        raise LamValueError(f"{where}.PROFILES must be a non-empty set of profile names (str), got {value!r}")
    for name in names:
        if name not in PROFILES:
            raise LamValueError(f"{where}.PROFILES names unknown profile {name!r}; known profiles: {', '.join(PROFILES)}")
    for name in names:
        missing = [p for p in PROFILES[name].parts if not parts.get(p)]
        if missing:
            raise LamValueError(
                f"{where}.PROFILES claims profile {name!r} but does not implement part(s) {', '.join(missing)} it needs"
            )
    return frozenset(names)


def profile_verdicts(declared: Iterable[str], tests: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """The report's per-profile verdicts from its per-test records (``id``, ``profiles``, ``outcome``, ``reason``).

    A profile not declared is ``skipped`` (reason given), never ``passed``. A declared profile is
    ``failed`` if one of its checks failed or passed unexpectedly, ``incomplete`` if one did not
    run (skipped, deselected or an expected failure), else ``passed``. Checks skipped because the
    implementation declares ``COMPLETE = False`` do not make a profile incomplete: such an
    implementation is held to soundness instead (SPEC §15.1).
    """
    declared = set(declared)
    out: dict[str, dict[str, Any]] = {}
    for name in PROFILES:
        mine = [t for t in tests if name in (t.get("profiles") or ())]
        ids = [t["id"] for t in mine]
        if name not in declared:
            out[name] = {"declared": False, "verdict": "skipped", "reason": "not declared by the implementation (PROFILES)",
                         "checks": ids, "failed": []}
            continue
        failed = [t["id"] for t in mine if t["outcome"] in ("failed", "xpassed")]
        not_run = [
            t["id"] for t in mine
            if t["outcome"] in ("skipped", "xfailed", "not_run", "resource") and "COMPLETE = False" not in (t.get("reason") or "")
        ]
        if failed:
            verdict, reason = "failed", f"{len(failed)} check(s) failed: {', '.join(failed)}"
        elif not mine or not_run:
            verdict, reason = "incomplete", f"check(s) not run: {', '.join(not_run) or 'none collected'}"
        else:
            verdict, reason = "passed", None
        out[name] = {"declared": True, "verdict": verdict, "reason": reason, "checks": ids, "failed": failed}
    return out


def markdown_table(checks: Iterable[Any]) -> str:
    """The docs table profile → rules → checks (docs/conformance.md is tested to contain it)."""
    checks = list(checks)
    rows = ["| profile | MUST rules (SPEC) | parts | checks |", "|---|---|---|---|"]
    for name, prof in PROFILES.items():
        rules = ", ".join(f"[{r}](spec.md#{r})" for r in prof.rules)
        ids = ", ".join(f"`{c.id}`" for c in checks if name in c.profiles) or "—"
        rows.append(f"| `{name}` | {prof.title}: {rules} | {', '.join(prof.parts)} | {ids} |")
    return "\n".join(rows)
