"""Which checks each declaration runs (SPEC §15.1, §15.4, §15.5), generated from the registry.

A declaration is a profile claimed (``PROFILES``) with ``COMPLETE = True`` or ``False``. A check runs
when the implementation claims one of its profiles, and a COMPLETE-only check (oracle equality)
only for ``COMPLETE = True``; every other check holds an incomplete implementation to soundness.
:func:`declarations_table` is the table docs/conformance.md shows (block ``declarations-table``).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from .profiles import PROFILES

__all__ = ["checks_run", "declarations_table"]


def checks_run(checks: Iterable[Any], profile: str, complete: bool) -> list[str]:
    """The ids of the checks a declaration of ``profile`` with ``COMPLETE = complete`` runs (before parts and budget)."""
    return [c.id for c in checks if profile in c.profiles and (complete or not c.complete_only)]


def declarations_table(checks: Iterable[Any]) -> str:
    """The markdown table: per profile, the checks run with COMPLETE = True and those dropped for COMPLETE = False."""
    checks = list(checks)
    rows = ["| profile | form | COMPLETE = True runs | COMPLETE = False does not run |", "|---|---|---|---|"]
    for name, prof in PROFILES.items():
        full = checks_run(checks, name, True)
        dropped = [c for c in full if c not in checks_run(checks, name, False)]
        form = "kept indices (`kept`)" if "kept" in prof.parts else ", ".join(f"`{p}`" for p in prof.parts)
        rows.append(f"| `{name}` | {form} | {', '.join(f'`{c}`' for c in full) or '—'} | "
                    f"{', '.join(f'`{c}`' for c in dropped) or '— (all run)'} |")
    return "\n".join(rows)
