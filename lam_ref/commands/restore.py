"""``lam-ref restore``: the originals back from ``lam-ref compact --residual-dir`` output (SPEC §8:
"nothing is lost, only moved"; paper §2.3).

Each ``<name>.audit.json`` is paired with its ``<name>.residual.jsonl``; undoing the recorded L1/L0
patches of every record, last layer first, gives the original text, which must match the SHA-256
the audit store took of it at compaction time, and every record's role, turn, source and name must
equal those the store recorded (so a restored record is the original, and a residual edited
afterwards is refused, never silently "restored"). Without
``--out`` the originals are checked and counted; with it they are written as
``<name>.original.jsonl`` (one record per line, ``role``, ``text``, ``turn``, ``source`` and
``name`` as in the residual; readable by ``lam-ref compact --format jsonl``).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from ..geometry import LamValueError
from ..text.audit import AuditError, AuditStore
from ._common import (
    add_json,
    add_mkdir,
    check_input_paths,
    check_json_dest,
    check_output_dir,
    table,
    write_json,
    write_jsonl,
)

#: The file names `lam-ref compact --residual-dir` writes per trajectory (``<name><suffix>``).
AUDIT_SUFFIX = ".audit.json"
RESIDUAL_SUFFIX = ".residual.jsonl"


def audit_files(paths: list[str]) -> list[Path]:
    """The ``*.audit.json`` files named by ``paths`` (files, or folders searched non-recursively)."""
    out: list[Path] = []
    for raw in paths:
        p = Path(raw)
        if p.is_dir():
            found = sorted(p.glob(f"*{AUDIT_SUFFIX}"))
            if not found:
                raise LamValueError(f"{raw}: holds no *{AUDIT_SUFFIX} files (a --residual-dir of lam-ref compact)")
            out.extend(found)
        elif p.is_file():
            if not p.name.endswith(AUDIT_SUFFIX):
                raise LamValueError(f"{raw}: is not an audit store (*{AUDIT_SUFFIX})")
            out.append(p)
        else:
            raise LamValueError(f"{raw}: does not exist")
    return out


def restore_one(audit_path: Path) -> tuple[list[dict[str, Any]], AuditStore]:
    """The original records of one trajectory from its audit store and residual file."""
    name = audit_path.name[: -len(AUDIT_SUFFIX)]
    residual_path = audit_path.with_name(name + RESIDUAL_SUFFIX)
    if not residual_path.is_file():
        raise LamValueError(f"{str(audit_path)!r} has no residual file {residual_path.name!r} beside it")
    store = AuditStore.load(audit_path)
    try:
        text = residual_path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise AuditError(f"{str(residual_path)!r} cannot be read: {exc}") from exc
    residual = []
    for n, line in enumerate(text.splitlines(), start=1):
        try:
            residual.append(json.loads(line))
        except json.JSONDecodeError as exc:
            raise AuditError(f"{str(residual_path)!r}: line {n}: invalid JSON at column {exc.colno}: {exc.msg}") from exc
    try:
        return store.restore_records(residual), store
    except AuditError as exc:
        raise AuditError(f"{str(residual_path)!r}: {exc}") from exc


def register(sub: argparse._SubParsersAction) -> argparse.ArgumentParser:
    p = sub.add_parser("restore", help="restore original records from compact --residual-dir output (SPEC §8)",
                       description=__doc__.split("\n\n")[0].replace("``", "'"))
    p.add_argument("paths", nargs="+", metavar="PATH", help="--residual-dir folders or *.audit.json files")
    p.add_argument("--out", metavar="DIR", help="write <name>.original.jsonl here (default: check only)")
    add_mkdir(p)
    add_json(p)
    p.set_defaults(func=run)
    return p


def run(args: argparse.Namespace) -> int:
    files = audit_files(check_input_paths(args.paths))
    check_json_dest(args.json, mkdir=args.mkdir)
    if args.out:
        check_output_dir(args.out, "--out", mkdir=args.mkdir)
    rows: list[list[Any]] = []
    report: list[dict[str, Any]] = []
    failed = 0
    for f in files:
        name = f.name[: -len(AUDIT_SUFFIX)]
        try:
            records, store = restore_one(f)
        except LamValueError as exc:  # AuditError, TrajectoryFormatError
            failed += 1
            print(f"lam-ref restore: failed: {exc}", file=sys.stderr)
            report.append({"name": name, "audit": str(f), "ok": False, "error": str(exc)})
            rows.append([name, "—", "—", "—", "FAILED"])
            continue
        written = None
        if args.out:
            written = str(write_jsonl(Path(args.out) / f"{name}.original.jsonl", records))
        edited = len(store.edits)
        report.append({"name": name, "audit": str(f), "trajectory": store.trajectory_id, "ok": True,
                       "records": len(records), "edited_records": edited, "moved_bytes": store.moved_bytes,
                       "written": written})
        rows.append([name, len(records), edited, store.moved_bytes, "ok (SHA-256 and fields of every record)"])
    out = sys.stderr if args.json == "-" else sys.stdout
    print(table(rows, ["trajectory", "records", "edited", "moved bytes", "restored"]), file=out)
    print(f"{len(files) - failed} of {len(files)} trajectories restored byte for byte"
          + (f" into {args.out}" if args.out else " (checked; --out writes them)"), file=out)
    if args.json:
        write_json({"restored": report, "failed": failed}, args.json)
    return 1 if failed else 0
