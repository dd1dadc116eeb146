"""``lam-ref restore``: the originals back from ``lam-ref compact --residual-dir`` output (SPEC §8:
"nothing is lost, only moved"; paper §2.3).

Each ``<name>.audit.json`` is paired with its residual: ``<name>.residual.jsonl`` by default, or
with ``--residual-format native`` (and for a ``<name>.native.<suffix>`` file given as a PATH) the
residual in the input's own format, read by the loader of that format. Undoing the recorded L1/L0
patches of every record, last layer first, gives the original text, which must match the SHA-256
the audit store took of it at compaction time, and every record's role, turn, source and name must
equal those the store recorded (so a restored record is the original, and a residual edited
afterwards is refused, never silently "restored"). Without ``--out`` the originals are checked and
counted; with it they are written as ``<name>.original.jsonl`` (one record per line, ``role``,
``text``, ``turn``, ``source`` and ``name`` as in the residual; readable by ``lam-ref compact
--format jsonl``), and from a native residual also as ``<name>.original.native.<suffix>``, the
input's format with every observation's original text back in place (read by the same loader as the
input; the JSON layout is the writer's, the records are the input's). The folder's format, its
reader and writer are :mod:`lam_ref.text.residuals`.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from .._io import write_json, write_jsonl
from ..geometry import LamValueError
from ..tables import printable, table
from ..text.residuals import (
    AUDIT_SUFFIX,
    audit_files,
    native_matches_input,
    native_originals_line,
    orphan_residuals,
    restore_one,
    unfinished_run,
    write_native_original,
)
from ._options import add_json, add_mkdir
from ._paths import reads, validate_input_paths, validate_json_dest, validate_output_dir, writes

#: The example each ``--help`` shows (``lam_ref.cli`` collects them from every command module).
EXAMPLES = {
    "restore": "lam-ref restore out/ --out originals/ --mkdir",
}


def register(sub: argparse._SubParsersAction) -> argparse.ArgumentParser:
    p = sub.add_parser("restore", help="restore original records from compact --residual-dir output (SPEC §8)",
                       description=__doc__.split("\n\n")[0].replace("``", "'"))
    reads(p.add_argument("paths", nargs="+", metavar="PATH",
                         help="--residual-dir folders, *.audit.json files or *.native.<suffix> residuals"), "paths")
    p.add_argument("--residual-format", choices=("jsonl", "native"), default="jsonl",
                   help="jsonl (default): read <name>.residual.jsonl; native: read <name>.native.<suffix>, the "
                        "residual in the input's own format (a *.native.* PATH is always read so)")
    writes(p.add_argument("--out", metavar="DIR", help="write <name>.original.jsonl here (default: check only); from a "
                                                      "native residual also <name>.original.native.<suffix> in the "
                                                      "input's format"), "folder")
    add_mkdir(p)
    add_json(p)
    p.set_defaults(func=run)
    return p


def _fail(rows: list[list[Any]], report: list[dict[str, Any]], name: str, audit: str | None, error: str) -> None:
    print(f"lam-ref restore: failed: {printable(error)}", file=sys.stderr)
    report.append({"name": name, "audit": audit, "ok": False, "error": error})
    rows.append([printable(name), "—", "—", "—", "FAILED"])


def run(args: argparse.Namespace) -> int:
    paths = validate_input_paths(args.paths)
    files = audit_files(paths, native=args.residual_format == "native")
    validate_json_dest(args.json, mkdir=args.mkdir)
    if args.out:
        validate_output_dir(args.out, "--out", mkdir=args.mkdir)
    rows: list[list[Any]] = []
    report: list[dict[str, Any]] = []
    failed = 0
    for orphan in orphan_residuals(paths):  # every residual is accounted for (D8)
        failed += 1
        _fail(rows, report, orphan.name, None, f"{orphan}: a residual without its audit store beside it "
                                               "(it cannot be restored; was the run killed between the two writes?)")
    for f, native in files:
        name = f.name[: -len(AUDIT_SUFFIX)]
        try:
            records, store = restore_one(f, native)
            written = written_native = identical = None
            if args.out:
                written = str(write_jsonl(Path(args.out) / f"{name}.original.jsonl", records))
                if native is not None:
                    npath = write_native_original(Path(args.out), name, native, records)
                    written_native, identical = str(npath), native_matches_input(npath, store)
        except (LamValueError, ValueError, RecursionError, OSError) as exc:  # AuditError, parser limits, a disk full
            failed += 1
            where = f"{exc.filename}: " if isinstance(exc, OSError) and exc.filename else ""
            _fail(rows, report, name, str(f), f"{where}{exc or type(exc).__name__}")
            continue
        edited = len(store.edits)
        report.append({"name": name, "audit": str(f), "residual": str(native) if native else None,
                       "trajectory": store.trajectory_id, "ok": True, "records": len(records),
                       "edited_records": edited, "moved_bytes": store.moved_bytes, "written": written,
                       "checked": store.checked, "audit_version": store.version,
                       "bound": store.binding is not None,
                       "written_native": written_native, "native_identical": identical})
        rows.append([printable(name), len(records), edited, store.moved_bytes, "ok (" + store.checked + ")"])
    unfinished = {raw: state for raw in paths if Path(raw).is_dir() and (state := unfinished_run(raw))}
    for folder, state in unfinished.items():  # issue 39 §4: a folder a killed run left half replaced
        how = ("a run is writing it now" if state == "running" else
               "the last run writing it did not finish (killed?), so it may mix that run's files with an earlier run's")
        print(f"lam-ref restore: warning: {printable(folder)}: {how}", file=sys.stderr)
    out = sys.stderr if args.json == "-" else sys.stdout
    total = len(files) + len(orphan_residuals(paths))
    print(table(rows, ["trajectory", "records", "edited", "moved bytes", "restored"]), file=out)
    print(f"{total - failed} of {total} trajectories restored, every record's text byte for byte"
          + (f" into {args.out}" if args.out else " (checked; --out writes them)"), file=out)
    natives = [r["native_identical"] for r in report if r.get("written_native")]
    if natives:  # SPEC §8.3: what holds of the native originals, checked against the inputs still there
        print(native_originals_line(natives), file=out)
    if args.json:
        write_json({"restored": report, "failed": failed, "unfinished_runs": unfinished}, args.json)
    return 1 if failed else 0
