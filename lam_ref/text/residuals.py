"""The residual directory: what ``lam-ref compact --residual-dir`` writes and ``lam-ref restore``
reads (SPEC §8: "nothing is lost, only moved"; paper §2.3).

Per trajectory, under a name from :func:`safe_name` (``~2``, ``~3``, ... for a name already used
in the run):

* ``<name>.residual.jsonl``: the residual records, one JSON object per line;
* ``<name>.audit.json``: the audit store (:class:`lam_ref.text.audit.AuditStore`);
* with ``--residual-format native``, ``<name>.native.<suffix>``: the residual in the input's own
  format (:mod:`lam_ref.text.native`).

:class:`ResidualWriter` writes the folder (serially, or placing the files a Dask task staged),
:func:`restore_one` reads one trajectory back, and :func:`result_problems` /
:func:`written_problems` are the checks of ``--check`` (in memory, and on the files as written).
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import json
import os
import re
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .._io import InputError, atomic_write, atomic_write_text, json_line, read_input
from ..geometry import LamValueError
from .audit import AuditError, AuditStore
from .native import (
    NATIVE_FIGURES,
    as_written,
    checked_native,
    figures,
    native_records,
    native_suffix,
    source_file,
    write_native,
)

if TYPE_CHECKING:
    from .pipeline import CompactionResult, MappedResidual

__all__ = ["AUDIT_SUFFIX", "LOCK_NAME", "NATIVE_FIGURES", "NATIVE_TAG", "RESIDUAL_SUFFIX", "ResidualWriter", "as_written",
           "as_written_total", "audit_files", "claim_residual_dir", "native_file", "native_matches_input", "native_name",
           "native_originals_line", "orphan_residuals", "restore_one", "result_problems", "safe_name", "unfinished_run",
           "write_native_original", "written_problems"]

#: The file names `lam-ref compact --residual-dir` writes per trajectory (``<name><suffix>``).
AUDIT_SUFFIX = ".audit.json"
RESIDUAL_SUFFIX = ".residual.jsonl"
#: ``<name>.native.<format suffix>``: the residual in the input's format (``--residual-format native``).
NATIVE_TAG = ".native"
_NATIVE_SUFFIXES = (".traj.json", ".traj", ".jsonl", ".json")


def safe_name(traj_id: str) -> str:
    """A file name for a trajectory id (path separators and odd characters replaced).

    Examples:
        >>> safe_name("runs/astropy__astropy-12907:1")
        'runs__astropy__astropy-12907__1'
    """
    return re.sub(r"[^A-Za-z0-9._-]+", "__", traj_id).strip("_") or "trajectory"


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


def orphan_residuals(paths: list[str]) -> list[Path]:
    """The residual files (``<name>.residual.jsonl``, ``<name>.native.<suffix>``) in the folder
    arguments of ``paths`` that have no ``<name>.audit.json`` beside them (a run killed between the
    two writes, a store deleted): ``lam-ref restore`` reports each as a failure (D8), so every
    residual is accounted for."""
    out = []
    for raw in paths:
        d = Path(raw)
        if not d.is_dir():
            continue
        for f in sorted(d.iterdir()):
            if f.name.endswith(RESIDUAL_SUFFIX):
                name = f.name[: -len(RESIDUAL_SUFFIX)]
            else:
                name = native_name(f)
                if name is None or name.endswith(".original"):  # restore --out's own files
                    continue
            if not os.path.lexists(f.with_name(name + AUDIT_SUFFIX)):  # a store that is there but unreadable fails itself
                out.append(f)
    return out


def _read_residual_bytes(residual_path: Path) -> bytes:
    try:  # the one input-opening path: no FIFO, device or oversized file is read (issue 39 §3)
        return read_input(residual_path)
    except InputError as exc:
        raise AuditError(f"{str(residual_path)!r} cannot be read: {exc.problem}") from exc


def _read_jsonl_residual(residual_path: Path, raw: bytes | None = None) -> list[Any]:
    raw = _read_residual_bytes(residual_path) if raw is None else raw
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise AuditError(f"{str(residual_path)!r} cannot be read: not valid UTF-8 at byte {exc.start}") from exc
    residual = []
    lines = text.split("\n")  # the framing json_line writes: "\n" only, never U+2028/U+2029/U+0085 (D5)
    if lines and lines[-1] == "":
        lines.pop()
    for n, line in enumerate(lines, start=1):
        try:
            residual.append(json.loads(line))
        except json.JSONDecodeError as exc:
            raise AuditError(f"{str(residual_path)!r}: line {n}: invalid JSON at column {exc.colno}: {exc.msg}") from exc
        except (ValueError, RecursionError) as exc:  # parser limits (D2)
            raise AuditError(f"{str(residual_path)!r}: line {n}: JSON exceeds a parser limit: "
                             f"{exc or 'nested too deeply'}") from exc
    return residual


def restore_one(audit_path: Path, native: Path | None = None) -> tuple[list[dict[str, Any]], AuditStore]:
    """The original records of one trajectory from its audit store and its residual: the JSONL
    residual beside it, or the native residual ``native`` (read by its format's loader)."""
    name = audit_path.name[: -len(AUDIT_SUFFIX)]
    store = AuditStore.load(audit_path)
    bound = store.binding
    if bound is not None and bound["name"] != name:  # two pairs swapped, or a store renamed (issue 39 §4)
        raise AuditError(f"{str(audit_path)!r} is the audit store of {bound['name']!r} (trajectory "
                         f"{store.trajectory_id!r}), not of {name!r}: the files were renamed or swapped")
    if native is None:
        residual_path = audit_path.with_name(name + RESIDUAL_SUFFIX)
        if not residual_path.is_file():
            raise LamValueError(f"{str(audit_path)!r} has no residual file {residual_path.name!r} beside it")
        raw = _read_residual_bytes(residual_path)
        residual = _read_jsonl_residual(residual_path, raw)
        want = None if bound is None else bound["residual_sha256"]
    else:
        residual_path = native
        sources = None if store.meta is None else [m[2] for m in store.meta]
        residual = native_records(native, sources)[1]
        raw = _read_residual_bytes(native)
        want = None if bound is None else bound.get("native_sha256")
    try:
        records = store.restore_records(residual)
    except AuditError as exc:
        raise AuditError(f"{str(residual_path)!r}: {exc}") from exc
    if want is not None and hashlib.sha256(raw).hexdigest() != want:
        raise AuditError(f"{str(residual_path)!r} is not the residual {str(audit_path)!r} was written with (its "
                         "SHA-256 differs): a residual of another run, or of a run killed while replacing the folder")
    return records, store


def as_written_total(entries: list[dict[str, Any]]) -> dict[str, Any] | None:
    """:func:`~lam_ref.text.native.as_written` summed over the trajectories of a run (``None``
    when no native residual was written): the TOTAL row's ``file`` column."""
    got = [e for e in entries if e]
    if not got:
        return None
    return figures(*(sum(int(e[k]) for e in got) for k in NATIVE_FIGURES[:4]))


def native_matches_input(written: Path, store: AuditStore) -> bool | None:
    """Whether a restored ``<name>.original.native.<suffix>`` file is byte for byte the input file
    it was compacted from (named by the audit store's record sources); ``None`` when that cannot
    be told: the input is no longer there, the store has no sources (version 1), or the input
    held several conversations (LoCoMo: the residual holds one)."""
    if store.meta is None or not store.meta:
        return None
    src = source_file(str(store.meta[0][2]))
    if src is None or not Path(src).is_file():
        return None
    try:
        original = Path(src).read_bytes()
        if len(original) > 1 << 30:
            return None
        got = written.read_bytes()
    except OSError:
        return None
    if original == got:
        return True
    import json as _json

    try:
        data = _json.loads(original.decode("utf-8-sig"))
    except ValueError:
        return False
    return None if isinstance(data, list) and len(data) > 1 else False


def native_originals_line(identical: list[bool | None]) -> str:
    """``lam-ref restore``'s line on the ``.original.native.*`` files it wrote, from
    :func:`native_matches_input` of each."""
    n, same, differ = len(identical), identical.count(True), identical.count(False)
    rest = n - same - differ
    return (f"the .original.native.* files hold the input's records in its format; {same} of {n} are byte for "
            f"byte their input file" + (f", {differ} differ in bytes only (the records are the same)" if differ else "")
            + (f", {rest} not compared (the input is gone, or a LoCoMo conversation of a larger file)" if rest else ""))


def write_native_original(out_dir: Path, name: str, native: Path, records: list[dict[str, Any]]) -> Path:
    """``<name>.original.native.<suffix>`` in ``out_dir``: the native residual with every record's
    original text back in place (the input's format; the loader of that format reads the original
    records; the name differs from ``<name>.original.jsonl`` also for JSONL inputs)."""
    traj = native_records(native)[0]
    return write_native(out_dir / name, traj, [r["text"] for r in records], tag=".original.native")


class ResidualWriter:
    """Writes ``<name>.residual.jsonl`` and ``<name>.audit.json`` per trajectory into one folder
    (the folder exists: the command checked or created it), and with ``native`` also
    ``<name>.native.<suffix>``, the residual in the input's own format (:mod:`lam_ref.text.native`).

    Names come from :func:`safe_name`; a name already used in this run gets ``~2``, ``~3``, ... so
    two inputs with the same id (the same task in two folders) never overwrite each other's audit
    store. :attr:`written` maps each name to its trajectory's id and source path (the JSON report
    lists it)."""

    def __init__(self, directory: str | Path, *, native: bool = False) -> None:
        self.directory = Path(directory)
        self.native = native
        self.written: dict[str, dict[str, str]] = {}

    @property
    def last(self) -> dict[str, Any]:
        """The entry of the trajectory written last (``{}`` before the first)."""
        return next(reversed(self.written.values()), {})

    def name_for(self, traj_id: str) -> str:
        base = safe_name(traj_id)
        name, k = base, 1
        while name in self.written:
            k += 1
            name = f"{base}~{k}"
        return name

    def write(self, res: CompactionResult, name: str | None = None) -> tuple[Path, Path]:
        """Write one trajectory's files under ``name`` (default: :meth:`name_for` its id; a Dask
        task stages them under its own index); the residual's and the audit store's paths. All or
        nothing: when one write fails (a disk full, a field the native format cannot hold) the
        files already written for this trajectory are removed and the error is raised, so no
        residual is ever left without its audit store (D7, D8)."""
        name = self.name_for(res.trajectory.id) if name is None else name
        done: list[Path] = []
        try:
            _drop_store(self.directory, name)
            data = "".join(json_line(r.to_json()) for r in res.residual_records()).encode("utf-8")
            rpath = atomic_write(self.directory / f"{name}{RESIDUAL_SUFFIX}", lambda fh: fh.write(data))
            done.append(rpath)
            entry = {"id": res.trajectory.id, "path": res.trajectory.path, "residual": rpath.name}
            native = None
            if self.native:
                checked = checked_native(res.trajectory, res.residual_texts)
                npath = atomic_write_text(self.directory / (name + NATIVE_TAG + native_suffix(
                    res.trajectory.path, res.trajectory.format)), checked.after)
                done.append(npath)
                entry["native"] = npath.name
                entry["as_written"] = as_written(checked.before, checked.after)
                native = npath.read_bytes()
            apath = _bound(res.audit, name, data, native).save(self.directory / f"{name}{AUDIT_SUFFIX}")
            done.append(apath)
            entry["audit"] = apath.name
        except BaseException:
            for p in done:
                p.unlink(missing_ok=True)
            raise
        self.written[name] = entry
        return rpath, apath

    def place(self, stage: Path, summaries: list[dict[str, Any]], staged: list[int]) -> list[str]:
        """Give the residual and audit files a task staged in ``stage`` (``<j>.residual.jsonl``,
        ``<j>.audit.json`` for the ``staged`` indices ``j``) their final names, as :meth:`write`
        names them, in input order; the names given (a Dask run: :mod:`lam_ref.distributed`)."""
        names = []
        for s, j in zip(summaries, staged):
            name = self.name_for(str(s["id"]))
            self.directory.mkdir(parents=True, exist_ok=True)
            _drop_store(self.directory, name)
            data = (stage / f"{j}{RESIDUAL_SUFFIX}").read_bytes()
            atomic_write(self.directory / f"{name}{RESIDUAL_SUFFIX}", lambda out, data=data: out.write(data))
            store = _bound(AuditStore.load(stage / f"{j}{AUDIT_SUFFIX}"), name, data)
            store.save(self.directory / f"{name}{AUDIT_SUFFIX}")
            self.written[name] = {"id": s["id"], "path": s["path"], "residual": f"{name}{RESIDUAL_SUFFIX}",
                                  "audit": f"{name}{AUDIT_SUFFIX}"}
            names.append(name)
        return names



def _bound(store: AuditStore, name: str, residual: bytes, native: bytes | None = None) -> AuditStore:
    """``store`` bound to its files (issue 39 §4): their name, the residual's SHA-256 (and the
    native residual's); deterministic, so a Dask run's files equal the serial run's byte for byte."""
    binding = {"name": name, "residual_sha256": hashlib.sha256(residual).hexdigest()}
    if native is not None:
        binding["native_sha256"] = hashlib.sha256(native).hexdigest()
    return dataclasses.replace(store, binding=binding)


def unfinished_run(directory: str | Path) -> str | None:
    """Whether a run left ``directory`` unfinished: its lock file (:data:`LOCK_NAME`, removed when a
    run ends) is still there. ``"running"`` while a run holds it, ``"killed"`` when none does (the
    run was killed: the folder may mix its files with an earlier run's), else ``None``."""
    import fcntl

    lock_path = Path(directory) / LOCK_NAME
    try:
        fh = open(lock_path, "rb")  # noqa: SIM115 - closed below
    except OSError:
        return None
    try:
        fcntl.flock(fh.fileno(), fcntl.LOCK_SH | fcntl.LOCK_NB)
    except OSError:
        return "running"
    finally:
        fh.close()
    return "killed"


def _drop_store(directory: Path, name: str) -> None:
    """Remove an earlier run's ``<name>.audit.json`` before its residual is replaced (the write
    order of issue 39 §4): a run killed in between leaves a residual without a store, which
    ``restore`` reports, never a new residual beside the old store."""
    (directory / f"{name}{AUDIT_SUFFIX}").unlink(missing_ok=True)


#: The lock file :func:`claim_residual_dir` holds in a ``--residual-dir`` while a run writes it.
LOCK_NAME = ".lam-ref.lock"


def _is_residual_file(name: str) -> bool:
    return name.endswith((RESIDUAL_SUFFIX, AUDIT_SUFFIX)) or native_name(Path(name)) is not None


@contextlib.contextmanager
def claim_residual_dir(directory: str | Path, *, overwrite: bool = False, resume: bool = False,
                       option: str = "--residual-dir") -> Iterator[Path]:
    """Hold ``directory`` for one run's residual files (D11): an exclusive lock on
    ``<directory>/.lam-ref.lock`` (``flock``; released when the run ends or dies, so a killed run
    leaves no stale lock; the file is removed at the end), refused with a :class:`LamValueError` while another run holds it; and,
    unless ``overwrite`` (or ``resume``, the same run continued), refused when the folder already
    holds residual or audit files of an earlier run, which the new run would replace."""
    import fcntl

    d = Path(directory)
    lock_path = d / LOCK_NAME
    while True:  # the lock file is removed at the end: lock the file that is at the path now
        try:
            fh = open(lock_path, "a+b")
        except OSError as exc:
            raise LamValueError(f"{option} {d}: cannot create the lock file {LOCK_NAME}: "
                                f"{exc.strerror or exc}") from None
        try:
            fcntl.flock(fh.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            fh.close()
            raise LamValueError(f"{option} {d}: another lam-ref run is writing into this folder (it holds "
                                f"{LOCK_NAME}); wait for it, or choose another folder") from None
        try:
            same = os.path.samestat(os.fstat(fh.fileno()), os.stat(lock_path))
        except OSError:
            same = False
        if same:
            break
        fh.close()  # the holder before us removed it between our open and our lock: again
    try:
        if not (overwrite or resume):
            earlier = sorted(p.name for p in d.iterdir() if _is_residual_file(p.name))
            if earlier:
                raise LamValueError(f"{option} {d}: already holds {len(earlier)} residual/audit files of an earlier "
                                    f"run (e.g. {earlier[0]!r}); pass --overwrite to replace them, or choose "
                                    "another folder")
        yield d
    finally:
        with contextlib.suppress(OSError):
            os.unlink(lock_path)  # still locked by us: a waiting run re-checks which file it locked
        fh.close()


def result_problems(res: CompactionResult) -> list[str]:
    """Problems found by ``--check``: ``δ̂ > δ`` (THM1), an audit round trip that fails (SPEC §8), or
    an L2 reconstruction outside its error bound (SPEC §9)."""
    problems = []
    if not res.delta_hat <= res.config.delta:
        problems.append(f"{res.trajectory.id}: δ̂ = {res.delta_hat!r} exceeds δ = {res.config.delta!r}")
    if res.l2 is not None and not res.l2.bound_holds:
        problems.append(f"{res.trajectory.id}: L2 max error {res.l2.max_abs_error!r} exceeds eb = {res.l2.eb!r}")
    try:
        restored = res.restore()
    except LamValueError as exc:
        problems.append(f"{res.trajectory.id}: audit round trip failed: {exc}")
    else:
        originals = [r.text for r in res.trajectory.records]
        if restored != originals:
            bad = next(i for i, (a, b) in enumerate(zip(restored, originals)) if a != b)
            problems.append(f"{res.trajectory.id}: audit restores record {bad} wrongly")
    return problems


def written_problems(audit_path: Path, res: CompactionResult | MappedResidual) -> list[str]:
    """``--check`` with ``--residual-dir``: the files as written (read back, as ``lam-ref restore``
    reads them) give every original record, all fields, not just the in-memory round trip; from
    the JSONL residual and, when written, from the native one (per-trajectory results and the
    corpus scope's residuals alike)."""
    originals = [r.to_json() for r in res.trajectory.records]
    problems = []
    nat = native_file(audit_path)
    for native in (None, nat) if nat is not None else (None,):
        what = "the written audit files" if native is None else f"the native residual {native.name}"
        try:
            records, _ = restore_one(audit_path, native)
        except LamValueError as exc:
            problems.append(f"{res.trajectory.id}: {what} do not restore: {exc}")
            continue
        if records != originals:
            bad = next((i for i, (a, b) in enumerate(zip(records, originals)) if a != b),
                       min(len(records), len(originals)))
            problems.append(f"{res.trajectory.id}: record {bad} restored from {what} differs from the original")
    return problems
