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
from typing import NoReturn

from . import __version__
from .geometry import LamValueError

#: The exit-status line every ``--help`` ends its description with (docs/cli.md#conventions),
#: unless the command states its own.
EXIT_STATUS = "Exit status: 0 ok, 1 some inputs or checks failed, 2 usage error or unusable input."

#: One example per command (and per subcommand of a group) for its ``--help``, unless the command
#: gives its own; ``tests/test_cli_help.py`` fails for a command that has none.
EXAMPLES: dict[str, str] = {
    "audit": "lam-ref audit emb.npy --kept kept.npy -t 0.95 --json audit.json",
    "bands": "lam-ref bands emb.npy --threshold 0.95 --r 4 8 --rel 0.01 0.02 --normalize",
    "bench": "lam-ref bench constants --quick --out profile.json",
    "bench constants": "lam-ref bench constants --out profile.json && lam-ref model --device profile.json",
    "cct": "lam-ref cct thm3 --n 4 8 16 --eps 0 0.1",
    "cct membership": "lam-ref cct membership --members 200 --queries 100 --json membership.json --plot membership",
    "cct toy": "lam-ref cct toy --universe 4 --members 2 --max-bits 3",
    "cct thm3": "lam-ref cct thm3 --n 4 8 16 --eps 0 0.1 --json thm3.json",
    "compact": "lam-ref compact runs/ --residual-dir out/ --mkdir --json out/report.json --check",
    "compare": "lam-ref compare runs/ --gold gold.json --json compare.json --plot compare.png",
    "conform": "lam-ref conform --impl your_package.lam_adapter --json conformance.json",
    "determinism": "lam-ref determinism compare here.json there.json",
    "determinism probe": "lam-ref determinism probe runs/ --json probe.json --batch-sizes 1,32",
    "determinism compare": "lam-ref determinism compare here.json there.json --json agreement.json",
    "determinism matrix": "lam-ref determinism matrix runs/ --batch-sizes 8,64,256 --out matrix/",
    "determinism weights": "lam-ref determinism weights --out minilm-fp16 --dtype float16",
    "model": "lam-ref model --table 8 --device profile.json --json model.json --plot schedules.png",
    "pairs": "lam-ref pairs runs/ --pool -t 0.95 --top 20",
    "restore": "lam-ref restore out/ --out originals/ --mkdir",
    "substitute": "lam-ref substitute emb.npy -t 0.95 --exhaustive --json result.json --map-out pi.npy",
    "sweep": "lam-ref sweep runs/ -t 0.90 0.95 0.99 --json sweep.json",
    "verify": "lam-ref verify emb.npy -t 0.95 --json verify.json",
}


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


def apply_help_habits(parser: argparse.ArgumentParser, path: str = "") -> None:
    """Every (sub)command's ``--help`` gets a description (its one-line help when it has none), the
    exit-status line and an example (:data:`EXAMPLES`), and a group of subcommands requires one
    (bare ``lam-ref cct`` is a usage error with an ``error:`` line, exit 2)."""
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
            if "example" not in text and key in EXAMPLES:
                example = f"Example:\n  {EXAMPLES[key]}"
                sub.epilog = f"{sub.epilog}\n\n{example}" if sub.epilog else example
            apply_help_habits(sub, key)


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
    from . import commands

    for info in sorted(pkgutil.iter_modules(commands.__path__), key=lambda m: m.name):
        if info.name.startswith("_"):
            continue
        module = importlib.import_module(f"{commands.__name__}.{info.name}")
        module.register(sub)
    apply_help_habits(parser)
    return parser


def main(argv: list[str] | None = None) -> int:
    from .tables import printable

    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    try:
        return int(args.func(args) or 0)
    except LamValueError as exc:
        print(f"lam-ref {args.command}: error: {printable(exc)}", file=sys.stderr)
        return 2
    except FileNotFoundError as exc:
        print(f"lam-ref {args.command}: error: {printable(exc)}", file=sys.stderr)
        return 2
    except OSError as exc:  # a disk full, a permission lost mid-run: one line naming the path, not a traceback
        where = f" {printable(exc.filename)}:" if exc.filename else ""
        print(f"lam-ref {args.command}: error:{where} {printable(exc.strerror or exc)}", file=sys.stderr)
        return 1


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
