"""lam_ref's import graph has no cycle (checked on the source with ``ast``, every ``import``
statement including those inside functions, except ``if TYPE_CHECKING:`` blocks).

A module is a node; ``from .x import y`` is an edge to ``lam_ref.<...>.x`` (or to ``x.y`` when
``y`` is a submodule); importing a package's child does not count as an edge to the package.
"""

from __future__ import annotations

import ast
import functools
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PKG = ROOT / "lam_ref"


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _modules() -> dict[str, Path]:
    return {
        _module_name(p): p
        for p in PKG.rglob("*.py")
        if not any(part in {"__pycache__", "_vendor"} for part in p.parts)
    }


def _type_checking_nodes(tree: ast.AST) -> set[int]:
    skip: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            for sub in node.body:
                skip.update(id(n) for n in ast.walk(sub))
    return skip


@functools.cache
def import_graph() -> dict[str, set[str]]:
    """``{module: {imported lam_ref modules}}`` for every module under ``lam_ref/``."""
    mods = _modules()
    graph: dict[str, set[str]] = {m: set() for m in mods}
    for name, path in mods.items():
        is_pkg = path.name == "__init__.py"
        tree = ast.parse(path.read_text(encoding="utf-8"))
        skip = _type_checking_nodes(tree)
        for node in ast.walk(tree):
            if id(node) in skip:
                continue
            targets: list[str] = []
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                if node.level:
                    base = name.split(".") if is_pkg else name.split(".")[:-1]
                    base = base[: len(base) - (node.level - 1)]
                    mod = ".".join(base + ([node.module] if node.module else []))
                else:
                    mod = node.module or ""
                targets = [f"{mod}.{a.name}" if f"{mod}.{a.name}" in mods else mod for a in node.names]
            for t in targets:
                while t and t not in mods:  # ``import lam_ref.x.y`` of an attribute: its module
                    t = t.rpartition(".")[0]
                if t and t != name:
                    graph[name].add(t)
    return graph


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One cycle as a list of modules (first repeated at the end), or ``None``."""
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(u: str) -> list[str] | None:
        state[u] = 1
        stack.append(u)
        for v in sorted(graph[u]):
            if state.get(v) == 1:
                return stack[stack.index(v) :] + [v]
            if v not in state:
                found = visit(v)
                if found:
                    return found
        stack.pop()
        state[u] = 2
        return None

    for u in sorted(graph):
        if u not in state:
            found = visit(u)
            if found:
                return found
    return None


def test_find_cycle_finds_a_planted_cycle():
    """The cycle finder is not vacuous: a planted a → b → c → a is reported."""
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": set()}) == ["a", "b", "c", "a"], "planted cycle"
    assert find_cycle({"a": {"b"}, "b": set()}) is None, "a chain is no cycle"


def test_graph_sees_relative_and_function_level_imports():
    """The graph has the edges it must (relative imports, a package importing its children,
    imports inside functions)."""
    g = import_graph()
    assert "lam_ref.geometry" in g["lam_ref.substitution"], "from .geometry import ..."
    assert "lam_ref.claims.thm1" in g["lam_ref.claims"], "from . import thm1"
    assert "lam_ref.verify" in g["lam_ref.commands.verify"], "function-level from ..verify import ..."


def test_lam_ref_has_no_import_cycle():
    """Zero import cycles inside lam_ref."""
    cycle = find_cycle(import_graph())
    assert cycle is None, "import cycle: " + " -> ".join(cycle or [])
