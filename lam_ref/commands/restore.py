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
input; the JSON layout is the writer's, the records are the input's).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from ..geometry import LamValueError
from ..text.audit import AuditError, AuditStore
from ..text.native import native_records, write_native
from ._common import (
    add_json,
    add_mkdir,
    table,
    validate_input_paths,
    validate_json_dest,
    validate_output_dir,
    write_json,
    write_jsonl,
)

#: The file names `lam-ref compact --residual-dir` writes per trajectory (``<name><suffix>``).
AUDIT_SUFFIX = ".audit.json"
RESIDUAL_SUFFIX = ".residual.jsonl"
#: ``<name>.native.<format suffix>``: the residual in the input's format (``--residual-format native``).
NATIVE_TAG = ".native"
_NATIVE_SUFFIXES = (".traj.json", ".traj", ".jsonl", ".json")


def native_name(path: Path) -> str | None:
    """``<name>`` of a ``<name>.native.<suffix>`` file, else ``None``."""
    low = path.name.lower()
    for suf in _NATIVE_SUFFIXES:
        tail = NATIVE_TAG + suf
        if low.endswith(tail) and len(low) > len(tail):
            return path.name[: -len(tail)]
    return None


def native_file(audit_path: Path) -> Path | None:
    """The native residual beside an audit store (``<name>.native.<suffix>``), if there is one."""
    name = audit_path.name[: -len(AUDIT_SUFFIX)]
    for suf in _NATIVE_SUFFIXES:
        p = audit_path.with_name(name + NATIVE_TAG + suf)
        if p.is_file():
            return p
    return None


def audit_files(paths: list[str], native: bool = False) -> list[tuple[Path, Path | None]]:
    """``(audit store, native residual or None)`` for the ``PATH`` arguments: folders (searched
    non-recursively for ``*.audit.json``), audit stores, or native residual files (paired with the
    ``<name>.audit.json`` beside them). With ``native`` every audit store is paired with its native
    residual, which must exist."""
    out: list[tuple[Path, Path | None]] = []
    for raw in paths:
        p = Path(raw)
        if p.is_dir():
            found = sorted(p.glob(f"*{AUDIT_SUFFIX}"))
            if not found:
                raise LamValueError(f"{raw}: holds no *{AUDIT_SUFFIX} files (a --residual-dir of lam-ref compact)")
            out.extend((f, None) for f in found)
        elif p.is_file():
            name = native_name(p)
            if name is not None:
                audit = p.with_name(name + AUDIT_SUFFIX)
                if not audit.is_file():
                    raise LamValueError(f"{raw}: native residual without its audit store {audit.name!r} beside it")
                out.append((audit, p))
            elif p.name.endswith(AUDIT_SUFFIX):
                out.append((p, None))
            else:
                raise LamValueError(f"{raw}: is neither an audit store (*{AUDIT_SUFFIX}) nor a native residual "
                                    f"(*{NATIVE_TAG}.traj, .traj.json, .json or .jsonl)")
        else:
            raise LamValueError(f"{raw}: does not exist")
    if native:
        paired = []
        for audit, nat in out:
            nat = nat or native_file(audit)
            if nat is None:
                raise LamValueError(f"{audit}: --residual-format native, but no {NATIVE_TAG}.<suffix> residual beside "
                                    "it (written by lam-ref compact --residual-format native)")
            paired.append((audit, nat))
        out = paired
    return out


def _read_jsonl_residual(residual_path: Path) -> list[Any]:
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
    return residual


def restore_one(audit_path: Path, native: Path | None = None) -> tuple[list[dict[str, Any]], AuditStore]:
    """The original records of one trajectory from its audit store and its residual: the JSONL
    residual beside it, or the native residual ``native`` (read by its format's loader)."""
    name = audit_path.name[: -len(AUDIT_SUFFIX)]
    store = AuditStore.load(audit_path)
    if native is None:
        residual_path = audit_path.with_name(name + RESIDUAL_SUFFIX)
        if not residual_path.is_file():
            raise LamValueError(f"{str(audit_path)!r} has no residual file {residual_path.name!r} beside it")
        residual = _read_jsonl_residual(residual_path)
    else:
        residual_path = native
        sources = None if store.meta is None else [m[2] for m in store.meta]
        residual = native_records(native, sources)[1]
    try:
        return store.restore_records(residual), store
    except AuditError as exc:
        raise AuditError(f"{str(residual_path)!r}: {exc}") from exc


def write_native_original(out_dir: Path, name: str, native: Path, records: list[dict[str, Any]]) -> Path:
    """``<name>.original.native.<suffix>`` in ``out_dir``: the native residual with every record's
    original text back in place (the input's format; the loader of that format reads the original
    records; the name differs from ``<name>.original.jsonl`` also for JSONL inputs)."""
    traj = native_records(native)[0]
    return write_native(out_dir / name, traj, [r["text"] for r in records], tag=".original.native")


def register(sub: argparse._SubParsersAction) -> argparse.ArgumentParser:
    p = sub.add_parser("restore", help="restore original records from compact --residual-dir output (SPEC §8)",
                       description=__doc__.split("\n\n")[0].replace("``", "'"))
    p.add_argument("paths", nargs="+", metavar="PATH",
                   help="--residual-dir folders, *.audit.json files or *.native.<suffix> residuals")
    p.add_argument("--residual-format", choices=("jsonl", "native"), default="jsonl",
                   help="jsonl (default): read <name>.residual.jsonl; native: read <name>.native.<suffix>, the "
                        "residual in the input's own format (a *.native.* PATH is always read so)")
    p.add_argument("--out", metavar="DIR", help="write <name>.original.jsonl here (default: check only); from a "
                                                "native residual also <name>.original.native.<suffix> in the input's format")
    add_mkdir(p)
    add_json(p)
    p.set_defaults(func=run)
    return p


def run(args: argparse.Namespace) -> int:
    files = audit_files(validate_input_paths(args.paths), native=args.residual_format == "native")
    validate_json_dest(args.json, mkdir=args.mkdir)
    if args.out:
        validate_output_dir(args.out, "--out", mkdir=args.mkdir)
    rows: list[list[Any]] = []
    report: list[dict[str, Any]] = []
    failed = 0
    for f, native in files:
        name = f.name[: -len(AUDIT_SUFFIX)]
        try:
            records, store = restore_one(f, native)
        except LamValueError as exc:  # AuditError, TrajectoryFormatError
            failed += 1
            print(f"lam-ref restore: failed: {exc}", file=sys.stderr)
            report.append({"name": name, "audit": str(f), "ok": False, "error": str(exc)})
            rows.append([name, "—", "—", "—", "FAILED"])
            continue
        written = written_native = None
        if args.out:
            written = str(write_jsonl(Path(args.out) / f"{name}.original.jsonl", records))
            if native is not None:
                written_native = str(write_native_original(Path(args.out), name, native, records))
        edited = len(store.edits)
        report.append({"name": name, "audit": str(f), "residual": str(native) if native else None,
                       "trajectory": store.trajectory_id, "ok": True, "records": len(records),
                       "edited_records": edited, "moved_bytes": store.moved_bytes, "written": written,
                       "written_native": written_native})
        rows.append([name, len(records), edited, store.moved_bytes, "ok (SHA-256 and fields of every record)"])
    out = sys.stderr if args.json == "-" else sys.stdout
    print(table(rows, ["trajectory", "records", "edited", "moved bytes", "restored"]), file=out)
    print(f"{len(files) - failed} of {len(files)} trajectories restored byte for byte"
          + (f" into {args.out}" if args.out else " (checked; --out writes them)"), file=out)
    if args.json:
        write_json({"restored": report, "failed": failed}, args.json)
    return 1 if failed else 0
