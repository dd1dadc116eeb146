"""``lam-ref conform``: run the conformance suite (SPEC §15) against an implementation.

Runs pytest on the installed :mod:`lam_ref.conformance.suite` with the plugin's options, in a
hermetic configuration (its own empty ini file, no conftest files from the current directory),
so it behaves the same from a checkout, a wheel or another project's folder.
"""

from __future__ import annotations

import argparse
import os
import tempfile
from pathlib import Path

from ..geometry import LamValueError
from ._common import add_mkdir, validate_input_paths, validate_json_dest


def register(sub: argparse._SubParsersAction) -> argparse.ArgumentParser:
    p = sub.add_parser(
        "conform",
        help="check an implementation of SPEC §15 with the conformance suite",
        description="Run the LAM conformance suite (pytest) against IMPL: a Python module implementing "
        "SPEC §15 (pkg.module) or exec:COMMAND speaking the line protocol. Extra pytest arguments go after --.",
    )
    p.add_argument("--impl", default=None, metavar="IMPL",
                   help="pkg.module or exec:COMMAND (default $LAM_IMPL, else lam_ref.conformance.adapter)")
    p.add_argument("--json", metavar="PATH", help="write the JSON report (documented schema) to PATH")
    add_mkdir(p)
    p.add_argument("--thorough", action="store_true", help="25x example counts with random generation")
    p.add_argument("--skips-file", metavar="PATH", help="check-id prefixes to skip, one per line ('# reason' optional)")
    p.add_argument("--xfails-file", metavar="PATH", help="check-id prefixes expected to fail, one per line")
    p.add_argument("--exec-timeout", type=float, metavar="SEC", help="per-request deadline for exec: implementations (default 10)")
    p.add_argument("-k", dest="keyword", metavar="EXPR", help="only tests matching this pytest -k expression")
    p.add_argument("-x", "--exitfirst", action="store_true", help="stop at the first failure")
    p.add_argument("-q", "--quiet", action="count", default=0, help="less output (pytest -q)")
    p.add_argument("--list", action="store_true", help="list the checks (id, claim, SPEC item, parts) and exit")
    p.add_argument("pytest_args", nargs=argparse.REMAINDER, help="-- followed by extra pytest arguments")
    p.set_defaults(func=run)
    return p


def _list() -> int:
    from ..conformance import CHECKS
    from ._common import table

    rows = [[c.id, c.claim, c.spec, ", ".join(c.parts), "yes" if c.complete_only else ""] for c in CHECKS]
    print(table(rows, ["check", "claim", "SPEC item", "parts", "COMPLETE only"]))
    return 0


def pytest_arguments(args: argparse.Namespace, ini_path: str) -> list[str]:
    """The pytest command line for ``args`` (exposed for tests)."""
    import lam_ref.conformance.suite as suite

    suite_dir = Path(suite.__file__).resolve().parent
    root = suite_dir.parents[2]  # the folder holding the lam_ref package
    argv = [
        "-c", ini_path, "--rootdir", str(root), "--confcutdir", str(suite_dir),
        "-p", "lam_ref.conformance.plugin", "-p", "no:cacheprovider",
        "--pyargs", "lam_ref.conformance.suite", "-rfEsxX",
        "-W", "ignore::pytest.PytestAssertRewriteWarning",
    ]
    if args.impl:
        argv.append(f"--lam-impl={args.impl}")
    if args.json:
        argv.append(f"--lam-report={os.path.abspath(args.json)}")
    if args.thorough:
        argv.append("--lam-thorough")
    for flag, value in (("--skips-file", args.skips_file), ("--xfails-file", args.xfails_file)):
        if value:
            if not Path(value).is_file():
                raise LamValueError(f"{flag} path {value!r} does not exist")
            argv.append(f"{flag}={os.path.abspath(value)}")
    if args.exec_timeout is not None:
        if not args.exec_timeout > 0:
            raise LamValueError(f"--exec-timeout must be positive, got {args.exec_timeout!r}")
        argv.append(f"--lam-exec-timeout={args.exec_timeout}")
    if args.keyword:
        argv += ["-k", args.keyword]
    if args.exitfirst:
        argv.append("-x")
    argv += ["-q"] * args.quiet
    extra = list(args.pytest_args or [])
    if extra and extra[0] == "--":
        extra = extra[1:]
    return argv + extra


def run(args: argparse.Namespace) -> int:
    """Exit status: 0 every check passed, 1 some failed, 2 a usage error or an unusable input
    (pytest's own codes 2-5: interrupted, internal error, usage error, no checks collected)."""
    if args.list:
        return _list()
    if args.json == "-":
        raise LamValueError("--json -: the conformance report is written to a file; give a path")
    validate_json_dest(args.json, mkdir=args.mkdir)
    validate_input_paths([f for f in (args.skips_file, args.xfails_file) if f])
    import pytest

    with tempfile.TemporaryDirectory(prefix="lam-conform-") as tmp:
        ini = Path(tmp) / "pytest.ini"
        ini.write_text("[pytest]\n", encoding="utf-8")
        rc = int(pytest.main(pytest_arguments(args, str(ini))))
    return rc if rc in (0, 1) else 2
