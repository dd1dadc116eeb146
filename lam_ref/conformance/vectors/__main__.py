"""``python -m lam_ref.conformance.vectors --impl SPEC [PROFILE | FILE.json ...]``: run vector files.

Runs every vector of the named profiles (default: the profiles the implementation claims) or
files against an implementation (a module, or ``exec:COMMAND``), prints one line per file and the
failures, and exits 0 when all pass, 1 when a vector fails, 2 on bad input (an unknown profile, a
malformed vector file, an implementation that cannot be loaded): one line naming it.
"""

from __future__ import annotations

import argparse
import sys
import warnings

from ...geometry import LamValueError
from .run import (
    HUGE_ONLY,
    PROFILES,
    THOROUGH_ONLY,
    count_run,
    declared_profiles,
    load_vectors,
    run_vectors,
    summary,
)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m lam_ref.conformance.vectors", description=__doc__.splitlines()[0])
    ap.add_argument("--impl", required=True, help="the implementation: a Python module, or exec:COMMAND")
    ap.add_argument("files", nargs="*", help=f"profiles ({', '.join(PROFILES)}) or vector .json files; default: the claimed profiles")
    ap.add_argument("--thorough", action="store_true", help="also the vectors flagged LargeIds (65,537 rows)")
    ap.add_argument("--huge", action="store_true", help="every vector, also those flagged Ids2To24 (2^24 + 3 rows of D = 1)")
    args = ap.parse_args(argv)
    from ..impl import load_implementation

    try:
        docs = [load_vectors(f) for f in args.files]
        impl = load_implementation(args.impl)
    except LamValueError as exc:
        print(f"lam_ref.conformance.vectors: error: {exc}", file=sys.stderr)
        return 2
    try:
        if not docs:
            claimed, _ = declared_profiles(impl)
            docs = [load_vectors(p) for p in PROFILES if p in claimed]
        failed = 0
        for doc in docs:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", RuntimeWarning)
                skip = () if args.huge else HUGE_ONLY if args.thorough else THOROUGH_ONLY
                fails = run_vectors(impl, doc["profile"], doc, skip_flags=skip)
            failed += len(fails)
            ran = count_run(doc, skip)
            print(f"{doc['profile']}: {summary(fails, ran, limit=10, left_out=doc['number_of_vectors'] - ran)}")
    except LamValueError as exc:  # a vector that does not decode
        print(f"lam_ref.conformance.vectors: error: {exc}", file=sys.stderr)
        return 2
    finally:
        impl.close()
    return 1 if failed else 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
