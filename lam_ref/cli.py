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

from . import __version__
from .geometry import LamValueError


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
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
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    try:
        return int(args.func(args) or 0)
    except LamValueError as exc:
        print(f"lam-ref {args.command}: error: {exc}", file=sys.stderr)
        return 2
    except FileNotFoundError as exc:
        print(f"lam-ref {args.command}: error: {exc}", file=sys.stderr)
        return 2
    except OSError as exc:  # a disk full, a permission lost mid-run: one line, not a traceback
        where = f" {exc.filename!r}" if exc.filename else ""
        print(f"lam-ref {args.command}: error:{where} {exc.strerror or exc}", file=sys.stderr)
        return 1


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
