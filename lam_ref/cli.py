"""``lam-ref``: the command line. Thin: each subcommand lives in ``lam_ref/commands/<name>.py``.

A command module defines ``register(subparsers) -> argparse.ArgumentParser`` whose parser sets
``func`` (called with the parsed namespace, returns an exit code). Output conventions: a readable
table on stdout, ``--json PATH`` (``-`` for stdout) for machines, progress bars on stderr.
"""

from __future__ import annotations

import argparse
import importlib
import pkgutil
import sys
from types import ModuleType
from typing import NoReturn

from . import __version__
from .geometry import LamValueError

#: The exit-status line every ``--help`` ends its description with (docs/cli.md#conventions),
#: unless the command states its own.
EXIT_STATUS = "Exit status: 0 ok, 1 some inputs or checks failed, 2 usage error or unusable input."

def command_modules() -> dict[str, ModuleType]:
    """The command modules by name: every module of ``lam_ref/commands/`` whose name does not start
    with ``_``. Each registers the subcommand of its name (``register``) and declares the example
    its ``--help`` shows (``EXAMPLES``, keyed by command line: ``"determinism probe"``); adding a
    subcommand is one module here (docs/cli.md's table lists it)."""
    from . import commands

    return {info.name: importlib.import_module(f"{commands.__name__}.{info.name}")
            for info in sorted(pkgutil.iter_modules(commands.__path__), key=lambda m: m.name)
            if not info.name.startswith("_")}


def examples() -> dict[str, str]:
    """One example per command (and per subcommand of a group), from the command modules'
    ``EXAMPLES``; ``tests/test_cli_help.py`` fails for a command that has none."""
    out: dict[str, str] = {}
    for module in command_modules().values():
        out.update(getattr(module, "EXAMPLES", {}))
    return out


def __getattr__(name: str) -> object:
    """``EXAMPLES``: :func:`examples`, collected when first asked for (importing the command line
    does not import every command)."""
    if name == "EXAMPLES":
        return examples()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def _sentence(text: str) -> str:
    text = (text or "").strip()
    if not text:
        return text
    text = text[0].upper() + text[1:]
    return text if text.endswith(".") else text + "."


class HabitsFormatter(argparse.HelpFormatter):
    """argparse's formatter, but paragraphs (blank-line separated) stay apart and an ``Example:``
    paragraph is printed as written, so its command line can be copied whole."""

    def _fill_text(self, text: str, width: int, indent: str) -> str:
        out = []
        for para in text.split("\n\n"):
            if para.startswith("Example:"):
                out.append("\n".join(indent + line for line in para.splitlines()))
            else:
                out.append(super()._fill_text(para, width, indent))
        return "\n\n".join(out)


def apply_help_habits(parser: argparse.ArgumentParser, path: str = "", known: dict[str, str] | None = None) -> None:
    """Every (sub)command's ``--help`` gets a description (its one-line help when it has none), the
    exit-status line and an example (``known``, by command line; default :func:`examples`), and a
    group of subcommands requires one
    (bare ``lam-ref cct`` is a usage error with an ``error:`` line, exit 2)."""
    known = examples() if known is None else known
    for action in parser._actions:
        if not isinstance(action, argparse._SubParsersAction):
            continue
        action.required = True
        helps = {a.dest: a.help for a in action._choices_actions}
        for name, sub in action.choices.items():
            key = f"{path} {name}".strip()
            if sub.formatter_class is argparse.HelpFormatter:
                sub.formatter_class = HabitsFormatter
            if not sub.description:
                sub.description = _sentence(helps.get(name) or "")
            text = f"{sub.description or ''} {sub.epilog or ''}".lower()
            if "exit status" not in text:
                sub.description = f"{sub.description}\n\n{EXIT_STATUS}".strip()
            if "example" not in text and key in known:
                example = f"Example:\n  {known[key]}"
                sub.epilog = f"{sub.epilog}\n\n{example}" if sub.epilog else example
            apply_help_habits(sub, key, known)


class OneLineErrors(argparse.ArgumentParser):
    """argparse, but a usage error is one line, as our own errors are:
    ``lam-ref COMMAND: error: <problem> (lam-ref COMMAND --help for the usage)``, exit 2."""

    def error(self, message: str) -> NoReturn:
        from .tables import printable

        self.exit(2, f"{self.prog}: error: {printable(message)} (see {self.prog} --help)\n")


def build_parser() -> argparse.ArgumentParser:
    parser = OneLineErrors(
        prog="lam-ref",
        description="LAM reference implementation: compaction (and restoring the originals), threshold sweeps, "
                    "claim verification, conformance checks, band and substitution tools.",
    )
    parser.add_argument("--version", action="version", version=f"lam_ref {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for module in command_modules().values():
        module.register(sub)
    apply_help_habits(parser)
    return parser


def _innermost(parser: argparse.ArgumentParser, args: argparse.Namespace) -> argparse.ArgumentParser:
    """The (sub)parser of the deepest subcommand ``args`` selected (``lam-ref determinism probe``)."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction) and getattr(args, action.dest, None) in action.choices:
            return _innermost(action.choices[getattr(args, action.dest)], args)
    return parser


def main(argv: list[str] | None = None) -> int:
    from .tables import printable

    parser = build_parser()
    args, extra = parser.parse_known_args(argv)
    if extra:  # named by the subcommand that was given them (docs/cli.md: lam-ref SUBCOMMAND: error: ...)
        _innermost(parser, args).error(f"unrecognized arguments: {' '.join(extra)}")
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    name = _innermost(parser, args).prog  # "lam-ref determinism compare": errors name the innermost subcommand
    try:
        from ._io import InputError
        from .commands._paths import check_command_paths

        try:  # the one path check of every command (docs/reliability.md): before any work
            check_command_paths(_innermost(parser, args), args)
            return int(args.func(args) or 0)
        except InputError as exc:  # an input file that cannot be read as asked, named (exit 2)
            raise LamValueError(str(exc)) from exc
    except LamValueError as exc:
        print(f"{name}: error: {printable(exc)}", file=sys.stderr)
        return 2
    except FileNotFoundError as exc:
        print(f"{name}: error: {printable(exc)}", file=sys.stderr)
        return 2
    except OSError as exc:  # a disk full, a permission lost mid-run: one line naming the path, not a traceback
        where = f" {printable(exc.filename)}:" if exc.filename else ""
        print(f"{name}: error:{where} {printable(exc.strerror or exc)}", file=sys.stderr)
        return 1


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
