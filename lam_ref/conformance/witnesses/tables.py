"""The witness tables of the docs, rendered from the witnesses' own records: one mechanism for
both mutant regimes and the controls.

* Mutants m01–m45 were written with the checks: each declares ``BUG`` and ``VIOLATES``, and the
  checks that reject it name it in ``shown_to_fail_on``. :func:`designed_table` renders them as
  the block ``<!-- mutants-table:start -->`` ... ``:end -->`` of docs/conformance.md ("How we know
  the suite works"); ``tests/conformance/test_docs.py`` holds every naming true.
* Mutants m46 onwards carry their measurement as data: ``CAUGHT_BY`` (the first checks, in suite
  order, that fail on them at the meta-test's example scale; empty when the suite misses the bug),
  next to ``BUG``, ``CLASS`` (bug class), ``IDIOM`` (the language idiom it imitates), ``VIOLATES``
  (the claim) and ``NEEDS`` (the kind of input that exposes it); with the controls (``ALLOWED``)
  they make docs/conformance-mutants.md (:func:`render`). ``tests/conformance/test_mutants.py``
  holds every record true; this module re-measures and rewrites the records.

Both pages are written by one command::

    python -m lam_ref.conformance.witnesses.tables --record    # re-measure, rewrite CAUGHT_BY
    python -m lam_ref.conformance.witnesses.tables --write     # docs/conformance-mutants.md and the
                                                               # mutants block of docs/conformance.md
"""

from __future__ import annotations

import argparse
import importlib
import re
import sys
import types
from pathlib import Path

from .controls import load_controls
from .mutants import load_mutants
from .outsiders import render_outsider_rounds

__all__ = ["SCALE", "designed_mutants", "designed_table", "measure", "record", "recorded_mutants", "render", "write_docs"]

#: Example scale of the meta-test (``tests/conformance/test_mutants.py``) and of ``--record``.
SCALE = 0.1
#: How many catching checks a record keeps (the first ones, in suite order).
KEEP = 3
PAGE = "docs/conformance-mutants.md"
#: The page whose generated block lists the mutants m01–m45 (:func:`designed_table`).
CONFORMANCE_PAGE = "docs/conformance.md"
COMMAND_WRITE = "python -m lam_ref.conformance.witnesses.tables --write"
COMMAND_TEST = "pytest -q tests/conformance/test_mutants.py"
COMMAND_FULL = "HYPOTHESIS_PROFILE=thorough pytest -q tests/conformance/test_mutants.py -k survivors"
#: What the same mutants measured against earlier states of the suite (the measurements that
#: motivated the last checks); kept as text, the live figures above are derived from the records.
HISTORY = [
    "against the 16 checks of the first suite: 37 / 85 caught (44 %); 48 got through",
    "after the edge checks (empty inputs, layouts, sizes, aliasing, the v1 format) and the test vectors were merged: 74 / 85 (87 %)",
    "after eight checks written for the 11 classes still missed (signed zeros, t = ±1, 4,096 retained rows, byte order, "
    "a reused caller buffer, exact line bytes, oversized v1 headers): the figure above",
    "m150-m157 (issue 38: a second outsider's classes: 32-bit and prototype-name L0 keys, a key cut at NUL, "
    "empty turns of another D, float32 request ids, reused session handles) were written together with "
    "their checks (lines.key_collisions, online.empty_turn_other_dim, online.session_handles, "
    "substitute.request_ids), so they are not an independent measurement",
]
COMMAND_RECORD = "python -m lam_ref.conformance.witnesses.tables --record"


def _short(module: types.ModuleType) -> str:
    return module.__name__.rsplit(".", 1)[1]


def designed_mutants() -> list[types.ModuleType]:
    """The mutants written with the checks (m01–m45: no ``CAUGHT_BY`` record)."""
    return [m for m in load_mutants() if not hasattr(m, "CAUGHT_BY")]


def recorded_mutants() -> list[types.ModuleType]:
    """The mutants that carry a ``CAUGHT_BY`` record (m46 onwards)."""
    return [m for m in load_mutants() if hasattr(m, "CAUGHT_BY")]


def measure(module: types.ModuleType, scale: float = SCALE) -> list[str]:
    """Ids of the checks that fail on ``module``, in suite order."""
    from .. import run_checks

    return [r.id for r in run_checks(module, scale=scale) if r.outcome == "failed"]


def record(scale: float = SCALE, out=sys.stdout) -> dict[str, list[str]]:
    """Measure every recorded mutant and rewrite the ``CAUGHT_BY`` line of its source file."""
    found: dict[str, list[str]] = {}
    for m in recorded_mutants():
        failed = measure(m, scale)
        found[_short(m)] = failed
        keep = tuple(failed[:KEEP])
        if keep:  # keep only catches that reproduce when just the recorded checks run (what the meta-test does)
            from .. import run_checks

            again = {r.id for r in run_checks(m, scale=scale, select=list(keep)) if r.outcome == "failed"}
            keep = tuple(c for c in keep if c in again) or tuple(failed[:1])
        path = Path(m.__file__)
        text = path.read_text()
        new = re.sub(r"^CAUGHT_BY: tuple\[str, \.\.\.\] = .*$", f"CAUGHT_BY: tuple[str, ...] = {keep!r}", text, count=1, flags=re.M)
        if new != text:
            path.write_text(new)
        print(f"{_short(m):45s} {', '.join(failed) or 'SURVIVES'}", file=out)
    return found


def _cell(text: str) -> str:
    """A table cell: pipes escaped; square brackets outside code spans escaped, so that an idiom
    such as ``kept[1024][D]`` is text, not a Markdown reference link."""
    parts = text.replace("|", "\\|").replace("\n", " ").split("`")
    for k in range(0, len(parts), 2):
        parts[k] = parts[k].replace("[", "\\[").replace("]", "\\]")
    return "`".join(parts)


def render() -> str:
    """The page: kill rate, control pass rate, the commands, one row per mutant and control."""
    mutants = recorded_mutants()
    killed = [m for m in mutants if m.CAUGHT_BY]
    survivors = [m for m in mutants if not m.CAUGHT_BY]
    controls = load_controls()
    rate = 100.0 * len(killed) / len(mutants) if mutants else 0.0
    lines = [
        "# Conformance mutants m46 onwards and the controls",
        "",
        f"<!-- generated by `{COMMAND_WRITE}`; "
        "tests/conformance/test_mutants.py checks that this page equals the registry -->",
        "",
        "Realistic one-line bugs written the way C, C++, Rust, CUDA and Python implementers err, **not** "
        "designed around the checks: each was written first and then measured. They sit on a second, "
        "port-style skeleton (`lam_ref.conformance.witnesses.mutants._base2`: a float64 retained buffer with a "
        "complete grid index, L0 through hooks, the codec's byte format version 1). The controls are "
        "allowed alternatives that must pass. See [conformance](conformance.md#how-we-know-the-suite-works).",
        "",
        f"- **Kill rate** (m46–m{max(int(_short(m)[1:].split('_')[0]) for m in mutants) if mutants else 0}): "
        f"**{len(killed)} / {len(mutants)} = {rate:.0f} %** caught by at least one check at {SCALE:g}× the "
        "default example counts.",
        f"- **Controls**: **{len(controls)} / {len(controls)} pass** every check (a failing control "
        "fails the test suite).",
        f"- Measured by `{COMMAND_RECORD}` (runs every check on every mutant m46+ and rewrites the "
        f"records below); `{COMMAND_TEST}` holds every record true (each recorded check fails) and "
        f"runs the skeleton and `independent2` on every check; `{COMMAND_FULL}` re-runs every check on "
        "every mutant (a survivor must still pass everything) and every control, and prints both rates.",
        "- `c12_incomplete_cell_only` (`COMPLETE = False`) found a false alarm: the vectors held such an "
        "implementation to the oracle's exact π, while SPEC §15.1 holds it only to soundness; they now "
        "check soundness for it, and it passes every check.",
        "",
        "History of the kill rate of these mutants: " + "; ".join(HISTORY) + ".",
    ]
    if survivors:
        lines.append(
            f"- **Not caught ({len(survivors)})**: "
            + ", ".join(f"`{_short(m)}`" for m in survivors)
            + " — the table's last column names the kind of check they need."
        )
    lines += [
        "",
        "## Mutants",
        "",
        "| mutant | bug | bug class | idiom | claim | caught by |",
        "|---|---|---|---|---|---|",
    ]
    for m in mutants:
        caught = ", ".join(f"`{c}`" for c in m.CAUGHT_BY) if m.CAUGHT_BY else f"**not caught** (needs: {m.NEEDS})"
        lines.append(f"| `{_short(m)}` | {_cell(m.BUG)} | {m.CLASS} | {_cell(m.IDIOM)} | {m.VIOLATES} | {_cell(caught)} |")
    lines += ["", "## Controls (must pass)", "", "| control | allowed alternative |", "|---|---|"]
    for c in controls:
        lines.append(f"| `{_short(c)}` | {_cell(c.ALLOWED)} |")
    lines += render_outsider_rounds()
    return "\n".join(lines) + "\n"


def designed_table() -> str:
    """The table of mutants m01–m45 on docs/conformance.md: bug, the checks that name it in
    ``shown_to_fail_on`` (each such naming is held true by the meta-test) and the claim it violates."""
    from ..registry import CHECKS

    lines = ["| mutant | bug | claim |", "|---|---|---|"]
    for m in designed_mutants():
        name = _short(m)
        named = [c.id for c in CHECKS if name in c.shown_to_fail_on]
        caught = f" (caught by {', '.join(f'`{c}`' for c in named)})" if named else ""
        lines.append(f"| `{name}` | {_cell(m.BUG)}{caught} | {m.VIOLATES} |")
    return "\n".join(lines)


def write_docs(root: str | Path = ".") -> list[str]:
    """Write docs/conformance-mutants.md and the mutants block of docs/conformance.md under ``root``;
    return the pages that changed."""
    changed = []
    page = Path(root) / PAGE
    text = render()
    if not page.exists() or page.read_text(encoding="utf-8") != text:
        page.write_text(text, encoding="utf-8")
        changed.append(PAGE)
    conformance = Path(root) / CONFORMANCE_PAGE
    old = conformance.read_text(encoding="utf-8")
    new = re.sub(r"(<!-- mutants-table:start -->\n)(?:.*?\n)?(<!-- mutants-table:end -->)",
                 lambda m: m.group(1) + designed_table() + "\n" + m.group(2), old, flags=re.S)
    if new != old:
        conformance.write_text(new, encoding="utf-8")
        changed.append(CONFORMANCE_PAGE)
    return changed


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m lam_ref.conformance.witnesses.tables", description=__doc__.splitlines()[0])
    parser.add_argument("--record", action="store_true", help="re-measure every mutant m46+ and rewrite its CAUGHT_BY")
    parser.add_argument("--write", action="store_true",
                        help=f"write {PAGE} and the mutants block of {CONFORMANCE_PAGE} (run from the repository root)")
    args = parser.parse_args(argv)
    if args.record:
        record()
        for m in recorded_mutants():
            importlib.reload(m)
    if args.write:
        for page in write_docs():
            print("updated", page)
    if not (args.record or args.write):
        sys.stdout.write(render())
    return 0


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
