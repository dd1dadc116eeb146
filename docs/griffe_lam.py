"""Griffe extension for the API reference (loaded by mkdocstrings, see ``mkdocs.yml``).

The docstrings of the code base are written with Sphinx roles (``:func:`substitute```,
``:class:`~lam_ref.online.OnlineSession```) and cite the spec as ``SPEC §n``. This extension turns
them into links when the package is loaded, without touching the docstrings in the source:

- a role becomes a cross-reference to the object it names, resolved the way Python would resolve
  the name inside the documented object's module (imports included) and sent to the object's
  canonical path; a name that does not resolve to an object of the package stays a code span;
- ``SPEC §n`` and ``SPEC §n.m`` become links to that section of ``docs/spec.md`` (the anchor is read
  from the spec's headings, so renumbered subsections keep working);
- a constant documented by ``#:`` comment lines above it gets them as its docstring;
- every object a registered claim names in ``implements`` (:mod:`lam_ref.claims`) gets an
  "Implements" line linking back to the claim on the claims page.

The links are autorefs references (``<autoref identifier=...>``), so their URLs are right on
every page the object is rendered on. Claim links are not optional: a claim anchor that does not
exist fails the strict build.
"""

from __future__ import annotations

import re
from pathlib import Path

from griffe import Docstring, Extension

#: ``:role:`target```, ``:role:`~target``` and ``:role:`text <target>``` (Sphinx's forms).
ROLE = re.compile(r":(?:py:)?(func|class|mod|data|meth|attr|obj|exc|const|type):`(~?)([^`<]*?)\s*(?:<([^>`]+)>)?`")
SPEC_REF = re.compile(r"SPEC §(\d+)(?:\.(\d+))?")
SPEC_HEADING = re.compile(r"^#{2,3} (\d+)(?:\.(\d+))?\.? .*\{#([A-Za-z0-9_-]+)\}\s*$", re.M)
SPEC_PATH = Path(__file__).resolve().parent / "spec.md"


def spec_anchors(text: str) -> dict[str, str]:
    """``"7"`` → ``"s7"``, ``"7.3"`` → ``"s7-net-positive"``: section numbers to the spec's anchors."""
    out = {}
    for m in SPEC_HEADING.finditer(text):
        out[m.group(1) if m.group(2) is None else f"{m.group(1)}.{m.group(2)}"] = m.group(3)
    return out


def _lookup(pkg, path: str):
    """The object at dotted ``path`` inside ``pkg`` (following aliases), or None."""
    if path == pkg.path:
        return pkg
    if not path.startswith(pkg.path + "."):
        return None
    try:
        return pkg[path[len(pkg.path) + 1:]]
    except Exception:  # noqa: BLE001 - KeyError, alias resolution errors: not an object of ours
        return None


def _canonical(obj) -> str | None:
    try:
        return obj.final_target.path if obj.is_alias else obj.path
    except Exception:  # noqa: BLE001 - an alias to something outside the package
        return None


def resolve(pkg, scope, name: str) -> str | None:
    """The canonical path of ``name`` as written in a docstring of ``scope``, or None."""
    name = name.strip().lstrip(".").rstrip("()")
    if not name:
        return None
    candidates = [name]
    head, _, rest = name.partition(".")
    owners = []
    node = scope
    while node is not None:
        owners.append(node)
        node = node.parent
    for owner in owners:
        try:
            full = owner.resolve(head)
        except Exception:  # noqa: BLE001 - the name is not in this scope
            continue
        candidates.append(f"{full}.{rest}" if rest else full)
        break
    for owner in owners:  # a method named relative to its class (:meth:`admit` in OnlineSession)
        candidates.append(f"{owner.path}.{name}")
    for cand in candidates:
        obj = _lookup(pkg, cand)
        if obj is not None:
            path = _canonical(obj)
            if path is not None:
                return path
    return None


_SOURCES: dict[str, list[str]] = {}


def comment_docstring(obj) -> str:
    """The ``#:`` comment lines right above an attribute's assignment (Sphinx's form for
    documenting a constant), as its docstring; ``""`` when there are none."""
    try:
        path = str(obj.filepath)
        lines = _SOURCES.setdefault(path, Path(path).read_text(encoding="utf-8").splitlines())
    except (OSError, TypeError, AttributeError):
        return ""
    out: list[str] = []
    n = (obj.lineno or 0) - 2
    while 0 <= n < len(lines) and lines[n].lstrip().startswith("#:"):
        out.insert(0, lines[n].lstrip()[2:].strip())
        n -= 1
    return "\n".join(out).strip()


def _autoref(identifier: str, title: str, optional: bool = True) -> str:
    return f'<autoref identifier="{identifier}"{" optional" if optional else ""}>{title}</autoref>'


def _walk(obj, seen: set[int]):
    if id(obj) in seen:
        return
    seen.add(id(obj))
    yield obj
    for member in list(obj.members.values()):
        if member.is_alias:
            continue
        yield from _walk(member, seen)


class LamDocstrings(Extension):
    """Sphinx roles → cross-references, ``SPEC §n`` → spec links, claim back-links."""

    def __init__(self) -> None:
        super().__init__()
        self.anchors = spec_anchors(SPEC_PATH.read_text(encoding="utf-8")) if SPEC_PATH.is_file() else {}

    def _spec(self, m: re.Match) -> str:
        key = m.group(1) if m.group(2) is None else f"{m.group(1)}.{m.group(2)}"
        anchor = self.anchors.get(key) or self.anchors.get(m.group(1))
        return _autoref(anchor, m.group(0)) if anchor else m.group(0)

    def rewrite(self, pkg, obj, text: str) -> str:
        def role(m: re.Match) -> str:
            kind, tilde, text_part, target = m.groups()
            target = (target or text_part).strip()
            shown = text_part.strip() if m.group(4) else target
            if tilde and not m.group(4):
                shown = target.rstrip("()").split(".")[-1] + ("()" if target.endswith("()") else "")
            path = resolve(pkg, obj if kind != "mod" else pkg, target)
            code = f"<code>{shown}</code>"
            return _autoref(path, code) if path else f"`{shown}`"

        return SPEC_REF.sub(self._spec, ROLE.sub(role, text))

    def on_package(self, *, pkg, loader=None, **kwargs) -> None:  # noqa: ARG002 - griffe's signature
        if pkg.path != "lam_ref":
            return
        objects = list(_walk(pkg, set()))
        for obj in objects:
            if obj.is_attribute and obj.docstring is None:
                comment = comment_docstring(obj)
                if comment:
                    obj.docstring = Docstring(comment, lineno=obj.lineno, parent=obj)
        for obj in objects:
            if obj.docstring is not None and obj.docstring.value:
                obj.docstring.value = self.rewrite(pkg, obj, obj.docstring.value)
        self._backlinks(pkg)

    def _backlinks(self, pkg) -> None:
        try:
            from lam_ref.claims import CLAIMS
        except Exception:  # noqa: BLE001 - the claims page reports a broken registry itself
            return
        by_path: dict[str, list] = {}
        for c in CLAIMS:
            for name in c.implements:
                path = resolve(pkg, pkg, name)
                if path is not None:
                    by_path.setdefault(path, []).append(c)
        for path, claims in by_path.items():
            obj = _lookup(pkg, path)
            links = ", ".join(f"{_autoref(c.id, c.id, optional=False)} ({c.title})" for c in claims)
            line = f"**Implements:** {links}."
            if obj.docstring is None:
                obj.docstring = Docstring(line, parent=obj)
            else:
                obj.docstring.value = f"{obj.docstring.value.rstrip()}\n\n{line}"
