"""Pages generated at docs build time (mkdocs-gen-files).

Each generator lives next to the code it documents and is called from here, so the docs build
fails loudly if a generator breaks.
"""

import ast
import posixpath
import re
import sys
from pathlib import Path

import mkdocs_gen_files

ROOT = Path(__file__).resolve().parent.parent
#: Modules left out of the API reference: the conformance suite's pytest files (test code, shown
#: through the conformance page) and the individual mutants and controls (listed by ``witnesses.mutants``
#: and ``witnesses.controls``).
SKIP = (re.compile(r"^lam_ref\.conformance\.suite\.test_"), re.compile(r"^lam_ref\.conformance\.witnesses\.(mutants|controls)\.(m|c)\d+_"))
API_INDEX = "reference/api.md"


def api_modules(root: Path = ROOT) -> list[str]:
    """Every public module of the package tree (no ``_``-prefixed part), in dotted form, sorted:
    a module added to ``lam_ref`` gets its page without an edit here."""
    out = []
    for path in sorted((root / "lam_ref").rglob("*.py")):
        parts = list(path.relative_to(root).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        if any(p.startswith("_") for p in parts) or "__pycache__" in parts:
            continue
        name = ".".join(parts)
        if not any(rx.search(name) for rx in SKIP):
            out.append(name)
    return sorted(set(out))


def api_page(module: str) -> str:
    """The generated page that documents ``module``."""
    return f"reference/{module}.md"


def _summary(root: Path, module: str) -> str:
    rel = Path(*module.split("."))
    path = root / rel / "__init__.py" if (root / rel).is_dir() else root / rel.with_suffix(".py")
    try:
        doc = ast.get_docstring(ast.parse(path.read_text(encoding="utf-8"))) or ""
    except (OSError, SyntaxError):
        return ""
    first = doc.strip().split("\n\n")[0].replace("\n", " ")
    first = re.sub(r":(?:py:)?[a-z]+:`~?([^`<]*?)\s*(?:<[^>]*>)?`", r"`\1`", first)  # Sphinx roles, as text here
    return first.replace("|", "\\|")


MODULES = api_modules()
with mkdocs_gen_files.open(API_INDEX, "w") as fh:
    fh.write("# API reference\n\nGenerated from the docstrings of the public modules, one page per module. "
             "Each object that implements a paper claim links back to it ([claims](../claims.md)).\n\n")
    fh.write("| module | summary |\n|---|---|\n")
    for mod in MODULES:
        fh.write(f"| [`{mod}`]({posixpath.relpath(api_page(mod), 'reference')}) | {_summary(ROOT, mod)} |\n")
for mod in MODULES:
    with mkdocs_gen_files.open(api_page(mod), "w") as fh:
        # the module's own heading is the page title (h1); its members are h2
        fh.write(f"---\ntitle: {mod}\n---\n\n::: {mod}\n    options:\n      heading_level: 1\n\n[All modules](api.md)\n")

# The claims page and the per-test-file pages (fails the build on an inconsistent registry).

sys.path.insert(0, str(Path(__file__).resolve().parent))
import claims_page  # noqa: E402

claims_page.generate(mkdocs_gen_files.open, ROOT)
