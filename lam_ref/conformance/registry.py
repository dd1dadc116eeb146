"""The list of checks, derived from the one registration (the ``@check`` decorator, issue 20 item 6).

:data:`CHECK_MODULES` is the known list of modules that define checks; importing this module
imports each of them (an optional module that is absent is left out; an error inside one
propagates, so a broken check module never vanishes silently), and :data:`CHECKS` is every check
the decorator registered, in registration order. Everything else is derived from it:
``lam_ref.conformance.checks.__all__``, the docs tables (:func:`checks_table`,
:func:`lam_ref.conformance.profiles.markdown_table`; ``tests/test_conformance_docs.py`` requires
docs/conformance.md to contain them verbatim; ``python -m lam_ref.conformance.registry --write
docs/conformance.md`` regenerates them) and ``lam-ref conform --list``.
"""

from __future__ import annotations

import importlib
import importlib.util

from .harness import REGISTRY, Check

__all__ = ["CHECKS", "CHECK_MODULES", "checks_for_area", "checks_table", "load_checks", "write_docs"]

#: Modules whose ``@check`` functions make the suite, in report order; the optional ones
#: (written by other work) are imported when present.
CHECK_MODULES: tuple[tuple[str, bool], ...] = (
    ("lam_ref.conformance.checks", True),
    ("lam_ref.conformance.checks_edges", True),
    ("lam_ref.conformance.checks_extra", False),
    ("lam_ref.conformance.checks_keptset", True),
    ("lam_ref.conformance.vectors.checks", False),
)


def _present(name: str) -> bool:
    try:
        return importlib.util.find_spec(name) is not None
    except ModuleNotFoundError:
        return False


def load_checks() -> list[Check]:
    """Import every module of :data:`CHECK_MODULES` and return the registered checks in order."""
    for name, required in CHECK_MODULES:
        if required or _present(name):
            importlib.import_module(name)
    return list(REGISTRY.values())


#: Every check of the suite, in report order.
CHECKS: list[Check] = load_checks()


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
