"""The list of checks, derived from the one registration (the ``@check`` decorator, issue 20 item 6).

Importing this module imports every module of the package :mod:`lam_ref.conformance.checks`
(found by ``pkgutil``, in name order; a module added there is picked up without an edit here; an
error inside one propagates, so a broken check module never vanishes silently), and
:data:`CHECKS` is every check the decorator registered, in that order. Everything else is derived
from it: :func:`checks_for_area`, :func:`yield_checks`, the pytest suite
(:mod:`lam_ref.conformance.suite`), the docs tables (:func:`checks_table`,
:func:`lam_ref.conformance.profiles.markdown_table`; ``tests/conformance/test_docs.py`` requires
docs/conformance.md to contain them verbatim; ``python -m lam_ref.conformance.registry --write
docs/conformance.md`` regenerates them) and ``lam-ref conform --list``.
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Iterator
from typing import Any

from . import checks as _checks_package
from .harness import REGISTRY, Check

__all__ = ["CHECKS", "check_modules", "checks_for_area", "checks_table", "load_checks", "write_docs", "yield_checks"]


def check_modules() -> list[str]:
    """Dotted names of the modules of :mod:`lam_ref.conformance.checks`, in name order."""
    found = sorted(m.name for m in pkgutil.iter_modules(_checks_package.__path__) if not m.name.startswith("_"))
    return [f"{_checks_package.__name__}.{name}" for name in found]


def load_checks() -> list[Check]:
    """Import every module of :func:`check_modules` and return the registered checks in order."""
    for name in check_modules():
        importlib.import_module(name)
    return list(REGISTRY.values())


#: Every check of the suite, in report order.
CHECKS: list[Check] = load_checks()


def yield_checks(impl: Any) -> Iterator[tuple[Check, str | None]]:
    """The checks for ``impl`` with, for each, ``None`` (it applies) or the reason it is skipped,
    driven by the parts the implementation declares (SPEC §15), as scikit-learn's
    ``_yield_all_checks``: ``substitute`` is required (its checks run, and fail if it is
    missing); ``online``, ``lines`` and ``codec`` are optional parts; the oracle-equality checks
    run only for an implementation declaring ``COMPLETE = True``. Every check is yielded, so the
    report lists skipped ones with their reason.

    Args:
        impl: a loaded :class:`~lam_ref.conformance.impl.Implementation`.
    """
    for c in CHECKS:
        yield c, c.applicable(impl)


def checks_for_area(area: str) -> list[Check]:
    """The checks of one area (the id's first component: ``substitute``, ``online``, ...)."""
    return [c for c in CHECKS if c.area == area]


def checks_table(checks: list[Check] | None = None) -> str:
    """The markdown table of every check (id, claim, profiles, statement) docs/conformance.md shows."""
    rows = ["| check | claim | profiles | what it checks |", "|---|---|---|---|"]
    for c in CHECKS if checks is None else checks:
        rows.append(f"| `{c.id}` | {c.claim} | {', '.join(c.profiles)} | {c.title.replace('|', chr(92) + '|')} |")
    return "\n".join(rows)


def write_docs(path: str) -> bool:
    """Replace the generated blocks (``<!-- checks-table:start -->`` ... ``:end -->`` and the
    profiles table) of the page at ``path`` with the registry's tables; True if it changed."""
    import re
    from pathlib import Path

    from .declarations import declarations_table
    from .diagnosis import vocabulary_table
    from .profiles import markdown_table

    page = Path(path)
    text = page.read_text(encoding="utf-8")
    new = text
    for name, table in (("checks-table", checks_table()), ("profiles-table", markdown_table(CHECKS)),
                        ("declarations-table", declarations_table(CHECKS)), ("vocabulary-table", vocabulary_table())):
        new = re.sub(rf"(<!-- {name}:start -->\n).*?(\n<!-- {name}:end -->)", lambda m, t=table: m.group(1) + t + m.group(2), new, flags=re.S)
    if new != text:
        page.write_text(new, encoding="utf-8")
    return new != text


if __name__ == "__main__":  # pragma: no cover - prints (or, with --write PAGE, rewrites) the generated docs tables
    import sys

    from .profiles import markdown_table

    if len(sys.argv) == 3 and sys.argv[1] == "--write":
        print("updated" if write_docs(sys.argv[2]) else "unchanged", sys.argv[2])
    else:
        print(checks_table())
        print()
        print(markdown_table(CHECKS))
