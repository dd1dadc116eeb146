"""``lam-ref vectors``: run the language-neutral test vectors against an implementation (docs/vectors.md;
issue 35 §4). The vector files and their runner are :mod:`lam_ref.conformance.vectors`; this command
is its entry point (``python -m lam_ref.conformance.vectors``) under the ``lam-ref`` name, with the
implementation taken from ``$LAM_IMPL`` when ``--impl`` is not given, as ``lam-ref conform`` does.

Exit status: 0 every vector passes, 1 a vector fails, 2 bad input (an unknown profile, a malformed
vector file, no implementation named or one that cannot be loaded): one line naming it.
"""

from __future__ import annotations

import argparse

from ._paths import reads

#: The example each ``--help`` shows (``lam_ref.cli`` collects them from every command module).
EXAMPLES = {
    "vectors": "lam-ref vectors --impl your_package.lam_adapter core online",
}


def register(sub: argparse._SubParsersAction) -> argparse.ArgumentParser:
    from ..conformance.vectors import PROFILES

    p = sub.add_parser(
        "vectors", help="run the language-neutral test vectors (one JSON file per profile) against an implementation",
        description="Run every vector of the named profiles (default: the profiles the implementation claims) or "
                    "vector files against IMPL, one line per file and the failures. Exit status: 0 every vector "
                    "passes, 1 a vector fails, 2 bad input (an unknown profile, a malformed file, no implementation).")
    reads(p.add_argument("files", nargs="*", metavar="PROFILE_OR_FILE",
                         help=f"profiles ({', '.join(PROFILES)}) or vector .json files; default: the claimed profiles"),
          "name-or-path")
    p.add_argument("--impl", default=None, metavar="IMPL",
                   help="pkg.module or exec:COMMAND (default $LAM_IMPL; with neither, an error)")
    p.add_argument("--thorough", action="store_true", help="also the vectors flagged LargeIds (65,537 rows)")
    p.set_defaults(func=run)
    return p


def run(args: argparse.Namespace) -> int:
    from ..conformance.impl import resolve_spec
    from ..conformance.vectors import load_vectors
    from ..conformance.vectors.__main__ import main as run_vector_files

    spec = resolve_spec(args.impl)  # no implementation named: one line, exit 2
    for f in args.files:  # an unknown profile or a malformed file: one line naming it, before the implementation loads
        load_vectors(f)
    return run_vector_files(["--impl", spec, *args.files, *(["--thorough"] if args.thorough else [])])
