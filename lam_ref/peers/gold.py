"""Evidence patches for SWE-agent runs that ship no task patch: each run's own submission, reversed
(paper App. F.3 uses SWE-smith's bug patch, i.e. the gold fix reversed, so that its ``+`` side is
the defective code the agent explored).

Usage::

    python -m lam_ref.peers.gold PATH... --out gold.json

For every ``.traj`` file under ``PATH...`` whose ``info.submission`` is a unified diff, the
patch is reversed (``+`` and ``-`` lines swap, hunk headers and file headers swap) and written as
``{trajectory id: patch}``, the format ``--gold`` of ``lam-ref sweep`` and ``lam-ref compare``
reads. The evidence lines are then the lines the agent's fix removed: code the agent read before
changing it. This is a proxy of our own (the shared runs carry no task patch); a run whose
submission is not a diff (a CTF flag) gives no entry.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections.abc import Sequence

from .._io import atomic_write_text
from ..text.loaders import LoadFailure, iter_trajectories

__all__ = ["gold_from_submissions", "main", "reverse_patch"]

_HUNK = re.compile(r"^@@ -(\d+(?:,\d+)?) \+(\d+(?:,\d+)?) @@(.*)$")


def reverse_patch(patch: str) -> str:
    """A unified diff with its sides swapped (``+``/``-`` lines, ``---``/``+++`` headers, hunk ranges)."""
    out = []
    for line in patch.split("\n"):
        if line.startswith("--- "):
            out.append("+++ " + line[4:])
        elif line.startswith("+++ "):
            out.append("--- " + line[4:])
        elif (m := _HUNK.match(line)) is not None:
            out.append(f"@@ -{m.group(2)} +{m.group(1)} @@{m.group(3)}")
        elif line.startswith("+"):
            out.append("-" + line[1:])
        elif line.startswith("-"):
            out.append("+" + line[1:])
        else:
            out.append(line)
    return "\n".join(out)


def gold_from_submissions(paths: Sequence[str]) -> dict[str, str]:
    """``{trajectory id: reversed submission}`` for the SWE-agent runs under ``paths`` (module docstring)."""
    out: dict[str, str] = {}
    for item in iter_trajectories(list(paths)):
        if isinstance(item, LoadFailure) or item.format != "swe-agent":
            continue
        try:
            with open(item.path, encoding="utf-8") as fh:
                sub = (json.load(fh).get("info") or {}).get("submission")
        except (OSError, ValueError, AttributeError):
            continue
        if isinstance(sub, str) and "\n@@ " in "\n" + sub:
            out[item.id] = reverse_patch(sub)
    return out


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m lam_ref.peers.gold", description=__doc__.split("\n")[0])
    ap.add_argument("paths", nargs="+", metavar="PATH")
    ap.add_argument("--out", required=True)
    args = ap.parse_args(argv)
    gold = gold_from_submissions(args.paths)
    atomic_write_text(args.out, json.dumps(gold, indent=1, sort_keys=True) + "\n")
    print(f"{len(gold)} patches written to {args.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
