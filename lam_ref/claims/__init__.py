r"""The claim registry: every claim lam_ref checks, where the paper states it, the code that
implements it and (found by scanning) the tests that check it (SPEC §11).

A test names the claim it checks with the pytest marker ``@pytest.mark.claim("THM1")`` (or a
module-level ``pytestmark``). :func:`registry_problems` fails when a registered claim has no test,
a test names an unknown claim, or an implementing name does not import; the docs build
(``docs/claims_page.py``) and ``tests/test_claims.py`` both call it.

Adding a claim: one module ``lam_ref/claims/<id>.py`` defining ``CLAIM``, found by scanning the
package, for a claim that ``lam-ref verify`` checks on data: its record has a ``measure``, the rule
``holds``, the ``aggregation`` of each measured key over sets and a ``describe`` (see
:mod:`lam_ref.claims._base`). A claim that is metadata only is one entry of
:data:`lam_ref.claims.metadata.CLAIMS`; :func:`lam_ref.verify.verify_set`,
:func:`lam_ref.verify.aggregate` and the printed table are loops over :func:`measured_claims`.
"""

from __future__ import annotations

import importlib
import pkgutil
import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from ._base import Claim, ClaimResult, Measurement, combine

__all__ = [
    "CLAIMS",
    "MARKER_RE",
    "TEST_DIRS",
    "Claim",
    "ClaimResult",
    "Marker",
    "Measurement",
    "registry_problems",
    "combine",
    "measured_claims",
    "registry",
    "resolve",
    "scan_markers",
]


def _scan() -> list[Claim]:
    """Every claim of the package, found by scanning it: the ``CLAIM`` of each module (a claim
    ``lam-ref verify`` measures) and the ``CLAIMS`` of :mod:`lam_ref.claims.metadata` (those that are
    metadata only), ordered by :attr:`Claim.rank`, then id. A module (not ``_``-prefixed) with
    neither is an ``ImportError``: a misspelt record is never silently left out."""
    found: list[Claim] = []
    for info in pkgutil.iter_modules(__path__):
        if info.name.startswith("_"):
            continue
        mod = importlib.import_module(f"{__name__}.{info.name}")
        records = list(getattr(mod, "CLAIMS", ())) + ([mod.CLAIM] if hasattr(mod, "CLAIM") else [])
        if not records:
            raise ImportError(f"{mod.__name__} defines neither CLAIM nor CLAIMS")
        found.extend(records)
    return sorted(found, key=lambda c: (c.rank, c.id))


#: Every claim, in the order of the claims page (found by :func:`_scan`). Adding a claim: a module
#: ``lam_ref/claims/<id>.py`` with ``CLAIM = Claim(...)`` (one ``lam-ref verify`` measures), or an
#: entry of :data:`lam_ref.claims.metadata.CLAIMS` (metadata only).
CLAIMS: list[Claim] = _scan()


def measured_claims(claims: Iterable[Claim] | None = None) -> list[Claim]:
    """The claims ``lam-ref verify`` measures on data (those with a ``measure``), in page order.

    Examples:
        >>> [c.id for c in measured_claims()][:3]
        ['EQ1', 'DEF1', 'THM1']
    """
    return [c for c in (CLAIMS if claims is None else claims) if c.measured_on_data]

#: Directories scanned for ``claim("ID")`` markers (relative to the repository root).
TEST_DIRS: tuple[str, ...] = ("tests", "property_tests", "proofs", "lam_ref/conformance")

#: A claim marker: ``claim("ID")`` / ``claim('ID')`` (as in ``@pytest.mark.claim("THM1")``).
MARKER_RE = re.compile(r"""\bclaim\(\s*["']([^"'\s]+)["']\s*\)""")
_DEF_RE = re.compile(r"^\s*(?:async\s+)?(?:def|class)\s+([A-Za-z_][A-Za-z0-9_]*)")


def registry(claims: Iterable[Claim] | None = None) -> dict[str, Claim]:
    """``{id: Claim}``; raises ``ValueError`` on a duplicate or malformed id."""
    out: dict[str, Claim] = {}
    for c in CLAIMS if claims is None else claims:
        if not re.fullmatch(r"[A-Z][A-Z0-9_]*(?:-[A-Z0-9_]+)*", c.id):
            raise ValueError(f"claim id {c.id!r} must be upper-case letters, digits, _ and inner -")
        if c.id in out:
            raise ValueError(f"claim id {c.id!r} is registered twice")
        out[c.id] = c
    return out


@dataclass(frozen=True)
class Marker:
    """A ``claim("ID")`` marker found in a test file: ``path`` (POSIX, relative to the root),
    1-based ``line``, and the ``test`` it decorates (``None`` for a module-level ``pytestmark``)."""

    claim: str
    path: str
    line: int
    test: str | None


def scan_markers(root: str | Path, dirs: Iterable[str] = TEST_DIRS) -> list[Marker]:
    """All claim markers in ``*.py`` files under ``dirs`` (sorted by path, line)."""
    root = Path(root)
    found: list[Marker] = []
    for d in dirs:
        base = root / d
        if not base.is_dir():
            continue
        for path in sorted(base.rglob("*.py")):
            if any(part in {".venv", "__pycache__", "site"} for part in path.parts):
                continue
            lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
            for lineno, text in enumerate(lines, start=1):
                for m in MARKER_RE.finditer(text):
                    test = None
                    if not text.lstrip().startswith("pytestmark"):
                        for follow in lines[lineno - 1 :]:
                            dm = _DEF_RE.match(follow)
                            if dm:
                                test = dm.group(1)
                                break
                    found.append(Marker(m.group(1), path.relative_to(root).as_posix(), lineno, test))
    return sorted(found, key=lambda m: (m.path, m.line, m.claim))


def resolve(dotted: str) -> object:
    """Import ``package.module.attr[.attr…]``; raises ``ImportError``/``AttributeError`` if absent."""
    parts = dotted.split(".")
    for cut in range(len(parts) - 1, 0, -1):
        try:
            obj: object = importlib.import_module(".".join(parts[:cut]))
        except ModuleNotFoundError:
            continue
        for attr in parts[cut:]:
            obj = getattr(obj, attr)
        return obj
    raise ImportError(f"cannot import {dotted!r}")


def registry_problems(
    root: str | Path, claims: Iterable[Claim] | None = None, dirs: Iterable[str] = TEST_DIRS
) -> list[str]:
    """Problems with the registry against the tests under ``root`` (empty list: all good):
    a claim with no test, a marker naming an unknown claim, an implementing name that does not
    import, a duplicate id, a measured claim without its rule or description."""
    try:
        reg = registry(claims)
    except ValueError as exc:
        return [str(exc)]
    markers = scan_markers(root, dirs)
    problems: list[str] = []
    for m in markers:
        if m.claim not in reg:
            problems.append(f"{m.path}:{m.line}: test {m.test or '(module)'} names unknown claim {m.claim!r}")
    tested = {m.claim for m in markers}
    for cid, c in reg.items():
        if cid not in tested:
            problems.append(f"claim {cid} has no test (no claim({cid!r}) marker under {', '.join(dirs)})")
        if c.measure is not None and (c.holds is None or c.describe is None):
            problems.append(f"claim {cid}: has a measure but no rule (holds) or no describe")
        for name in c.implements:
            try:
                resolve(name)
            except (ImportError, AttributeError) as exc:
                problems.append(f"claim {cid}: implementing name {name!r} does not import ({exc})")
    return problems

