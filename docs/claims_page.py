"""Generate the claims page and one page per test file that checks a claim (called from
``docs/gen_pages.py`` at docs build time).

``claims.md`` lists each registered claim (:mod:`lam_ref.claims`) with its statement, where the
paper states it, the code that implements it (links into the API reference) and the tests that
check it (links to generated source pages, which link back). The build fails (``RuntimeError``)
when :func:`lam_ref.claims.registry_problems` reports a problem: a registered claim without a test,
a test naming an unknown claim, or an implementing name that does not import.
"""

from __future__ import annotations

import ast
import os
import posixpath
import re
from collections import defaultdict
from pathlib import Path

from lam_ref.claims import CLAIMS, registry, registry_problems, resolve, scan_markers

CLAIMS_PAGE = "claims.md"
TESTS_DIR = "claims/tests"
API_PAGE = "reference/api.md"


#: The sections of docs/spec.md that state each claim's rule (the claims page links them).
SPEC_ANCHORS: dict[str, tuple[str, ...]] = {
    "EQ1": ("s1-threshold", "s2-merge"),
    "DEF1": ("s1-pi", "s5-oracle"),
    "THM1": ("s1-delta-hat", "s11-claims"),
    "BAND": ("s5-bands", "s5-sound"),
    "ONLINE": ("s6-session", "s6-online-batch"),
    "PROP2": ("s5-sound", "s11-covering"),
    "THM2": ("s1-threshold", "s11-covering"),
    "AMDAHL": ("s13",),
    "ETA": ("s12-other",),
    "GEMLINK": ("s11-claims", "s16"),
}
SPEC_PAGE = "spec.md"
_SPEC_REF = re.compile(r"SPEC §(\d+)")


def spec_links(text: str, from_page: str = "claims.md") -> str:
    """``SPEC §n`` in a claim's text → a link to section n of docs/spec.md."""
    target = _rel(from_page, SPEC_PAGE)
    return _SPEC_REF.sub(lambda m: f"[spec §{m.group(1)}]({target}#s{m.group(1)})", text)


def _rel(from_page: str, to_page: str) -> str:
    return posixpath.relpath(to_page, posixpath.dirname(from_page) or ".")


def test_page(path: str) -> str:
    """The generated page that shows test file ``path`` (``tests/test_x.py``)."""
    return f"{TESTS_DIR}/{path[:-3] if path.endswith('.py') else path}.md"


_test_page = test_page


def test_anchor(name: str) -> str:
    """The anchor of test (function, class or method) ``name`` on its file's page."""
    return name


def def_starts(source: str) -> list[tuple[int, str]]:
    """(first line, name) of each top-level function and class of ``source`` and of each method of a
    top-level class, decorators included, in line order (the chunks a test page is cut into)."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return []
    kinds = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
    out = []
    for node in tree.body:
        if isinstance(node, kinds):
            out.append((min([node.lineno, *(d.lineno for d in node.decorator_list)]), node.name))
            if isinstance(node, ast.ClassDef):
                for sub in node.body:
                    if isinstance(sub, (ast.FunctionDef, ast.AsyncFunctionDef)):
                        out.append((min([sub.lineno, *(d.lineno for d in sub.decorator_list)]), sub.name))
    return sorted(out)


def write_source(fh, source: str) -> None:
    """The file's source, cut at each test so each has its own anchor (``#NAME``), with the
    file's line numbers kept."""
    lines = source.splitlines()
    starts = def_starts(source)
    cuts = [1] + [line for line, _ in starts]
    names = [None] + [name for _, name in starts]
    fence = "````" if "```" in source else "```"
    seen: set[str] = set()
    for i, (first, name) in enumerate(zip(cuts, names)):
        last = cuts[i + 1] - 1 if i + 1 < len(cuts) else len(lines)
        chunk = "\n".join(lines[first - 1:last]).rstrip("\n")
        if name is not None and name not in seen:
            seen.add(name)
            fh.write(f'\n<a id="{test_anchor(name)}"></a>\n')
        if chunk.strip():
            fh.write(f'\n{fence}python linenums="{first}"\n{chunk}\n{fence}\n')


def _cited_test_files(root: Path) -> set[str]:
    """Test files the hand-written pages name in a code span (``tests/test_x.py``): they get a page
    too, so ``docs/hooks.py`` can link the span."""
    out = set()
    for page in sorted((root / "docs").glob("*.md")):
        for m in re.finditer(r"`((?:tests|property_tests|proofs)/[A-Za-z0-9_/]+\.py)(?:::[A-Za-z0-9_]+)?`",
                             page.read_text(encoding="utf-8")):
            if (root / m.group(1)).is_file():
                out.add(m.group(1))
    return out


_ROLE = re.compile(r":(?:py:)?[a-z]+:`(~?)([^`<]*?)\s*(?:<([^>`]+)>)?`")


def roles(text: str, module: str) -> str:
    """Sphinx roles in a docstring line (``:func:`eq1_residuals```) → cross-references to the
    object, looked up from ``module`` (a code span when the name does not import)."""

    def one(m: re.Match) -> str:
        target = (m.group(3) or m.group(2)).strip().rstrip("()")
        shown = m.group(2).strip() if m.group(3) else (target.split(".")[-1] if m.group(1) else target)
        for cand in (f"{module}.{target}", target):
            try:
                obj = resolve(cand)
            except (ImportError, AttributeError, ValueError):
                continue
            mod, qual = getattr(obj, "__module__", None), getattr(obj, "__qualname__", None)
            path = f"{mod}.{qual}" if mod and qual and not isinstance(obj, type(os)) else cand
            if isinstance(obj, type(os)):
                path = obj.__name__
            return f'<autoref identifier="{path}" optional><code>{shown}</code></autoref>'
        return f"`{shown}`"

    return _ROLE.sub(one, text)


def _first_line(func) -> str:
    return roles(((func.__doc__ or "").strip().splitlines() or [""])[0], func.__module__)


def _write_measure(fh, c) -> None:
    """What ``lam-ref verify`` measures for a claim, the rule, and how each quantity combines
    over sets: the same functions the verify loop calls (:mod:`lam_ref.claims`)."""
    fh.write(
        f"**Measured by `lam-ref verify`:** `{c.measure.__module__}.measure`: {_first_line(c.measure)} "
        f"**Holds when:** {_first_line(c.holds)}\n\n"
    )
    fh.write("| measured | over sets |\n|---|---|\n")
    for key, rule in c.aggregation.items():
        fh.write(f"| `{key}` | {rule} |\n")
    fh.write("\n")


def generate(open_file, root: str | os.PathLike[str]) -> list[str]:
    """Write the pages through ``open_file`` (``mkdocs_gen_files.open``); returns the page paths."""
    root = Path(root)
    problems = registry_problems(root)
    if problems:
        raise RuntimeError("claim registry check failed:\n  " + "\n  ".join(problems))
    reg = registry()
    markers = scan_markers(root)
    by_claim: dict[str, list] = defaultdict(list)
    by_file: dict[str, list] = defaultdict(list)
    for m in markers:
        by_claim[m.claim].append(m)
        by_file[m.path].append(m)
    code_to_claims: dict[str, list[str]] = defaultdict(list)
    for c in CLAIMS:
        for name in c.implements:
            code_to_claims[name].append(c.id)
    pages = [CLAIMS_PAGE]

    with open_file(CLAIMS_PAGE, "w") as fh:
        fh.write("# Claims\n\n")
        fh.write(
            "Every claim lam_ref checks, with its statement, where the paper states it, the code that implements "
            "it and the tests that check it (marked `@pytest.mark.claim(\"ID\")`). Generated from "
            "`lam_ref.claims` at build time; the build fails if a claim has no test or a test names an unknown "
            "claim. See [the theory page](theory.md) for the reading of each claim and what lies beyond the paper.\n\n"
        )
        fh.write("| claim | title | where | tests |\n|---|---|---|---|\n")
        for c in CLAIMS:
            fh.write(f"| [{c.id}](#{c.id}) | {c.title} | {spec_links(c.location)} | {len(by_claim[c.id])} |\n")
        fh.write("\n")
        for c in CLAIMS:
            fh.write(f"[](){{#{c.id}}}\n\n## {c.id}: {c.title}\n\n")
            fh.write(f"$$\n{c.statement}\n$$\n\n")
            fh.write(f"**Where:** {spec_links(c.location)}. **Origin:** {c.origin}.\n\n")
            anchors = SPEC_ANCHORS.get(c.id, ("s11-claims",))
            fh.write("**Rule:** " + ", ".join(f"[spec §{a[1:].split('-')[0]}]({SPEC_PAGE}#{a})" for a in anchors) + "\n\n")
            if c.note:
                fh.write(f"{spec_links(c.note)}\n\n")
            fh.write("**Implemented by:** ")
            if c.implements:
                links = [f"[`{n}`][{n}]" for n in c.implements]
                fh.write(", ".join(links) + "\n\n")
            else:
                fh.write("— (checked symbolically; no code of its own)\n\n")
            if c.measured_on_data:
                _write_measure(fh, c)
            fh.write("**Checked by:**\n\n")
            for m in by_claim[c.id]:
                page = _test_page(m.path)
                test = f"`{m.test}`" if m.test else "every test in the module"
                where = _rel(CLAIMS_PAGE, page)
                test = f"[`{m.test}`]({where}#{test_anchor(m.test)})" if m.test else "every test in the module"
                fh.write(f"- {test} in [`{m.path}`]({where}) (line {m.line})\n")
            fh.write("\n")
        fh.write("## Code → claims\n\n| code | claims |\n|---|---|\n")
        for name in sorted(code_to_claims):
            ids = ", ".join(f"[{cid}](#{cid})" for cid in code_to_claims[name])
            fh.write(f"| [`{name}`][{name}] | {ids} |\n")
        fh.write("\n")

    for path in _cited_test_files(root) - set(by_file):
        by_file[path] = []
    for path, ms in sorted(by_file.items()):
        page = _test_page(path)
        pages.append(page)
        source = (root / path).read_text(encoding="utf-8")
        with open_file(page, "w") as fh:
            fh.write(f"# `{path}`\n\n")
            fh.write("Claims checked here:\n\n" if ms else "No test here carries a claim marker.\n")
            for m in ms:
                target = _rel(page, CLAIMS_PAGE)
                test = f"[`{m.test}`](#{test_anchor(m.test)})" if m.test else "every test in the module"
                fh.write(f"- [{m.claim}]({target}#{m.claim}) ({reg[m.claim].title}): {test}, line {m.line}\n")
            write_source(fh, source)
    return pages
