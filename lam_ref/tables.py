"""The people's view of every report: one plain aligned text table, one percentage format, readable
row labels for long ids, and counted nouns. The commands, :mod:`lam_ref.demo`, the claim
descriptions (:mod:`lam_ref.claims`) and :func:`lam_ref.metrics.format_ecr` all format through
here, so a table or a percentage reads the same everywhere.
"""

from __future__ import annotations

import os
from typing import Any

__all__ = ["display_ids", "pct", "plural", "printable", "short_id", "table"]


def table(rows: list[list[Any]], header: list[str]) -> str:
    """A plain aligned text table: the header, a rule of dashes, one line per row (floats by ``:.6g``).

    Examples:
        >>> print(table([["a", 1.5], ["bb", 2]], ["name", "x"]))
        name  x
        ----  ---
        a     1.5
        bb    2
    """
    cells = [header] + [[_cell(c) for c in row] for row in rows]
    widths = [max(len(r[i]) for r in cells) for i in range(len(header))]
    lines = ["  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip() for r in cells]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines)


def _cell(c: Any) -> str:
    if isinstance(c, float):
        return f"{c:.6g}"
    return printable(c)  # a file name or id in a cell can never split or forge a line (D17)


def pct(x: float | None, digits: int = 2) -> str:
    """``x`` as a percentage with ``digits`` decimals; ``"—"`` for ``None`` (no figure, never 0 %).

    Examples:
        >>> pct(0.2247), pct(0.99925, 3), pct(None)
        ('22.47%', '99.925%', '—')
    """
    return "—" if x is None else f"{100.0 * x:.{digits}f}%"


def plural(k: int, noun: str = "trajectory", nouns: str | None = None) -> str:
    """``"1 trajectory"``, ``"3 trajectories"`` (``nouns``: the plural when it is not ``noun``
    with ``y`` → ``ies`` or ``+ s``).

    Examples:
        >>> plural(1), plural(3), plural(2, "file")
        ('1 trajectory', '3 trajectories', '2 files')
    """
    if k == 1:
        return f"{k} {noun}"
    if nouns is None:
        nouns = noun[:-1] + "ies" if noun.endswith("y") else noun + "s"
    return f"{k} {nouns}"


def short_id(tid: str, width: int) -> str:
    """``tid`` in at most ``width`` characters, both ends kept (ids often differ in the middle).

    Examples:
        >>> short_id("astropy__astropy-12907", 11)
        'astro…12907'
    """
    if len(tid) <= width:
        return tid
    head = (width - 1) // 2
    return tid[:head] + "…" + tid[-(width - 1 - head) :]


def display_ids(ids: list[str], width: int = 44) -> list[str]:
    """Table labels for ``ids`` (one per row): each id in at most ``width`` characters (both ends
    kept); ids whose labels would coincide drop their common prefix (``…`` + the rest), widening
    only if needed; a repeated id (the same task in two folders) gets `` (2)``, `` (3)``, ..."""
    labels = {t: short_id(t, width) for t in ids}
    groups: dict[str, list[str]] = {}
    for t in dict.fromkeys(ids):
        groups.setdefault(labels[t], []).append(t)
    for group in (g for g in groups.values() if len(g) > 1):
        cut = len(os.path.commonprefix(group))
        w = width
        while True:
            forms = {t: "…" + short_id(t[cut:], w - 1) for t in group}
            if len(set(forms.values())) == len(group) or w >= max(map(len, group)):
                break
            w += 4
        labels.update(forms)
    seen: dict[str, int] = {}
    out = []
    for t in ids:
        seen[t] = seen.get(t, 0) + 1
        out.append(labels[t] if seen[t] == 1 else f"{labels[t]} ({seen[t]})")
    return out


_CONTROL = {c: f"\\x{c:02x}" for c in (*range(0x20), 0x7F)}
_CONTROL.update({c: f"\\u{c:04x}" for c in (*range(0x80, 0xA0), 0x2028, 0x2029)})


def printable(text: Any) -> str:
    """``text`` safe to print on one terminal line: control characters (newlines, carriage returns,
    escape sequences, C1 controls, U+2028/U+2029) and lone surrogates become backslash escapes, so a
    file name or id can neither split a line, forge an output line nor drive the terminal (D17).

    Examples:
        >>> printable("a\\nb\\x1b[31m")
        'a\\\\x0ab\\\\x1b[31m'
    """
    s = str(text).translate(_CONTROL)
    if not s.isascii():
        s = s.encode("utf-8", "backslashreplace").decode("utf-8")
    return s
