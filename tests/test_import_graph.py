"""lam_ref's layering, checked on the source with ``ast``: every ``import`` statement counts,
including those inside functions, except ``if TYPE_CHECKING:`` blocks.

A module is a node; ``from .x import y`` is an edge to ``lam_ref.<...>.x`` (or to ``x.y`` when
``y`` is a submodule); importing a package's child does not count as an edge to the package.
At package level every subpackage of ``lam_ref`` (``lam_ref.text``, ``lam_ref.commands``, ...)
is one node and every top-level module (``lam_ref.metrics``, ``lam_ref.cli``, ...) its own.

The rules (``docs/spec-decisions.md``, "Layering"):

* no import cycle between modules, and none between packages;
* the command line is on top: nothing outside ``lam_ref/commands/`` and the two entry points
  (``lam_ref.cli``, ``lam_ref.demo``) imports ``lam_ref.commands``;
* no module of ``lam_ref/commands/`` imports a command module: what commands share is a
  ``_``-prefixed helper of ``lam_ref/commands/`` (``_options``, ``_paths``, ``_compact_report``, ``_dask``, ...),
  which imports no command either, or library code.

And outside the package: no test but the command-line tests (``test_cmd_*``, ``test_cli_*``) and no
benchmark imports ``lam_ref.commands`` (what they use is library code).
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


def _extensions() -> dict[str, Path]:
    """The compiled extensions (``lam_ref/_codec.c``, ``lam_ref/_filter.c``, ``lam_ref/text/_l0.c``):
    modules that import nothing of lam_ref, so ``from . import _filter`` is an edge to them, not to
    the package."""
    return {_module_name(p): p for p in PKG.rglob("*.c") if "_vendor" not in p.parts}


@functools.cache
def import_graph() -> dict[str, set[str]]:
    """``{module: {imported lam_ref modules}}`` for every module under ``lam_ref/`` (compiled
    extensions are leaves)."""
    py = _modules()
    mods = {**py, **_extensions()}
    graph: dict[str, set[str]] = {m: set() for m in mods}
    for name, path in py.items():
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


#: The modules besides ``lam_ref.commands.*`` that may import the commands: the entry points.
ENTRY_POINTS = frozenset({"lam_ref.cli", "lam_ref.demo"})
COMMANDS = "lam_ref.commands"


def package_of(module: str) -> str:
    """The package-level node of a module: ``lam_ref.<first component>`` (``lam_ref`` itself for
    the package root)."""
    return ".".join(module.split(".")[:2])


def package_graph(graph: dict[str, set[str]]) -> dict[str, set[str]]:
    """The module graph collapsed to :func:`package_of` nodes (no self-edges)."""
    out: dict[str, set[str]] = {}
    for a, targets in graph.items():
        pa = package_of(a)
        out.setdefault(pa, set())
        for b in targets:
            pb = package_of(b)
            out.setdefault(pb, set())
            if pb != pa:
                out[pa].add(pb)
    return out


def _is_command(module: str) -> bool:
    """A command module: ``lam_ref.commands.<name>`` with a name not starting with ``_``."""
    parts = module.split(".")
    return len(parts) == 3 and parts[:2] == ["lam_ref", "commands"] and not parts[2].startswith("_")


def upward_imports(graph: dict[str, set[str]]) -> list[tuple[str, str]]:
    """``(importer, imported)`` edges into ``lam_ref.commands`` from outside it and the entry points."""
    return sorted((a, b) for a, targets in graph.items() for b in targets
                  if (b == COMMANDS or b.startswith(COMMANDS + ".")) and package_of(a) != COMMANDS
                  and a not in ENTRY_POINTS)


def command_to_command(graph: dict[str, set[str]]) -> list[tuple[str, str]]:
    """``(importer, command)`` edges from any module of ``lam_ref/commands/`` (a command or a
    helper) to a command module."""
    return sorted((a, b) for a, targets in graph.items() for b in targets if package_of(a) == COMMANDS and _is_command(b))


def test_find_cycle_finds_a_planted_cycle():
    """The cycle finder is not vacuous: a planted a → b → c → a is reported."""
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": set()}) == ["a", "b", "c", "a"], "planted cycle"
    assert find_cycle({"a": {"b"}, "b": set()}) is None, "a chain is no cycle"


def test_graph_sees_relative_and_function_level_imports():
    """The graph has the edges it must (relative imports, a package importing its children,
    imports inside functions)."""
    g = import_graph()
    assert "lam_ref.geometry" in g["lam_ref.substitution"], "from .geometry import ..."
    assert "lam_ref.text.onnx_backend" in g["lam_ref.text.backends"], "from . import onnx_backend"
    assert "lam_ref.text.records" in g["lam_ref.text"], "a package importing its child: from .records import ..."
    assert "lam_ref.verify" in g["lam_ref.commands.verify"], "function-level from ..verify import ..."


def test_lam_ref_has_no_import_cycle():
    """Zero import cycles inside lam_ref."""
    cycle = find_cycle(import_graph())
    assert cycle is None, "import cycle: " + " -> ".join(cycle or [])


def test_layering_checks_find_planted_violations():
    """The package-level checks are not vacuous: on a planted graph they report a package cycle
    hidden behind function-local imports (distributed.cli -> commands._common, commands.compact ->
    distributed.cli), a library module importing a command, and one command importing another,
    while the entry points and the ``_`` helpers are allowed."""
    planted = {
        "lam_ref.distributed.cli": {"lam_ref.commands._common"},
        "lam_ref.commands.compact": {"lam_ref.distributed.cli", "lam_ref.commands._common"},
        "lam_ref.commands.compare": {"lam_ref.commands.sweep"},
        "lam_ref.commands.sweep": {"lam_ref.commands._compact_report"},
        "lam_ref.commands._compact_report": {"lam_ref.commands.restore"},
        "lam_ref.commands.restore": {"lam_ref.commands._common"},
        "lam_ref.commands._common": set(),
        "lam_ref.cli": {"lam_ref.commands"},
        "lam_ref.demo": {"lam_ref.commands.compact"},
        "lam_ref.commands": set(),
    }
    assert find_cycle(planted) is None, "no module-level cycle in the planted graph"
    assert find_cycle(package_graph(planted)) == ["lam_ref.commands", "lam_ref.distributed", "lam_ref.commands"], \
        "the package cycle commands <-> distributed"
    assert upward_imports(planted) == [("lam_ref.distributed.cli", "lam_ref.commands._common")], \
        "only the library's import of the commands is upward (cli and demo are entry points)"
    assert command_to_command(planted) == [("lam_ref.commands._compact_report", "lam_ref.commands.restore"),
                                           ("lam_ref.commands.compare", "lam_ref.commands.sweep")], \
        "helper -> command and command -> command are reported; command -> helper is allowed"


def test_package_graph_sees_function_level_imports_across_packages():
    """The package graph keeps the edges of imports made inside functions (the Dask driver loads
    the cluster only when asked)."""
    pg = package_graph(import_graph())
    assert "lam_ref.distributed" in pg["lam_ref.commands"], "commands._dask imports lam_ref.distributed"
    assert "lam_ref.text" in pg["lam_ref.distributed"], "distributed.trajectories imports the text layer in functions"


def test_lam_ref_has_no_package_cycle():
    """Zero import cycles between the packages of lam_ref (subpackages and top-level modules)."""
    cycle = find_cycle(package_graph(import_graph()))
    assert cycle is None, "package import cycle: " + " -> ".join(cycle or [])


def test_only_the_entry_points_import_the_commands():
    """Nothing outside ``lam_ref/commands/``, ``lam_ref.cli`` and ``lam_ref.demo`` imports
    ``lam_ref.commands`` (library code never depends on the command line)."""
    bad = upward_imports(import_graph())
    assert not bad, "library modules import the commands: " + ", ".join(f"{a} -> {b}" for a, b in bad)


def test_no_command_imports_another_command():
    """No module of ``lam_ref/commands/`` imports a command module; what two commands share lives
    in a ``_`` helper of ``lam_ref/commands/`` or in the library."""
    bad = command_to_command(import_graph())
    assert not bad, "command -> command imports: " + ", ".join(f"{a} -> {b}" for a, b in bad)


# ----------------------------------------------------------------------------------------------
# tests and benchmarks use the library, not the command line (issue 36 §1)

#: Test files that drive the command line and may import ``lam_ref.commands``.
COMMAND_TESTS = ("test_cmd_", "test_cli_")


def imports_of_commands(source: str) -> list[str]:
    """The ``lam_ref.commands`` modules a Python source imports (absolute imports, as tests and
    benchmarks write them: ``import lam_ref.commands.x``, ``from lam_ref.commands import x``,
    ``from lam_ref import commands``), anywhere in the file."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found += [a.name for a in node.names if a.name == COMMANDS or a.name.startswith(COMMANDS + ".")]
        elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
            if node.module == COMMANDS or node.module.startswith(COMMANDS + "."):
                found.append(node.module)
            elif node.module == "lam_ref" and any(a.name == "commands" for a in node.names):
                found.append(COMMANDS)
    return found


def outside_importers() -> list[tuple[str, str]]:
    """``(file, module)`` for every file of ``tests/`` (but the command tests, :data:`COMMAND_TESTS`)
    and ``benchmarks/`` that imports ``lam_ref.commands``."""
    files = [p for p in (ROOT / "tests").rglob("*.py") if not p.name.startswith(COMMAND_TESTS)]
    files += list((ROOT / "benchmarks").rglob("*.py"))
    return sorted((str(p.relative_to(ROOT)), m) for p in files
                  for m in imports_of_commands(p.read_text(encoding="utf-8")))


def test_import_scan_finds_planted_imports_of_the_commands():
    """The scan is not vacuous: each way of importing the commands is found, inside a function
    too, and library imports are not."""
    planted = ("import lam_ref.commands.audit\nfrom lam_ref.commands.pairs import near_pairs\n"
               "from lam_ref import commands, geometry\ndef f():\n    from lam_ref.commands import sweep\n"
               "from lam_ref.pairs import near_pairs\nfrom . import commands\n")
    assert sorted(imports_of_commands(planted)) == sorted(["lam_ref.commands.audit", "lam_ref.commands.pairs",
                                                           "lam_ref.commands", "lam_ref.commands"]), \
        "four imports of the commands planted"


def test_tests_and_benchmarks_import_the_library_not_the_commands():
    """Issue 36 §1: only the command tests (``test_cmd_*``, ``test_cli_*``) import ``lam_ref.commands``;
    every other test and every benchmark imports what it tests from the library (a command only
    parses, calls the library and prints)."""
    bad = outside_importers()
    assert not bad, "import the library instead: " + ", ".join(f"{f} -> {m}" for f, m in bad)
