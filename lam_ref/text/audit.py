"""The audit store: every original record, byte for byte, from the residual (SPEC §8: "nothing is
lost, only moved"; paper §2.3 "The stub supports later lookup and inspection").

Each layer that edits a record (L1 or L0) records **patches** ``(start, end, original)``: the
byte span ``[start, end)`` of the layer's output (UTF-8) that stands where ``original`` (the bytes
the layer removed) stood — a stub line plus any line separator inserted around it. Undoing a
layer replaces each span by its original bytes; undoing all layers of a record in reverse order
gives the original text. The store keeps only the moved bytes and a SHA-256 of every original
record, which :meth:`AuditStore.restore` checks: a residual edited after compaction, or a corrupt
store, is refused with :class:`AuditError` instead of returning wrong text.

Since format version 2 the store also keeps each record's ``role``, ``turn``, ``source`` and
``name`` (:meth:`AuditStore.restore_records` checks a residual record's against them, so a whole
record, not only its text, comes back as it was); version 1 files (texts only) are still read.

Since format version 3 everything that decides how a store is checked lies inside the
checksummed body: the ``version`` is repeated there and must equal the outer one, so editing the
version (``3`` to ``1``, to switch the field checks off) breaks the checksum (D9). Older stores
are still read; :attr:`AuditStore.checked` says what was checked, and for a version-1/2 store
that its version was not covered. A version-1 store whose body holds ``meta`` (a version-2 store
whose version was edited down) is refused.

A store written since issue 39 also holds, in its checksummed body, a ``binding``: the name of
its files and the SHA-256 of its residual file's bytes (:mod:`lam_ref.text.residuals` writes and
checks it), so a store found under another trajectory's name (two pairs swapped), or beside a
residual it was not written with, is refused.

Threat model: the SHA-256 checksums detect accidental corruption and casual edits of the store
or of the residual. Without a key they are not authentication: whoever can write the files can
recompute every checksum, so a store from an untrusted source proves nothing.

Files are JSON (atomic write); :meth:`AuditStore.load` refuses another format or version and a
body whose checksum does not match.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .._io import InputError, atomic_write_text, read_json_input
from ..geometry import LamValueError

__all__ = ["AuditError", "AuditStore", "LayerPatch", "undo_patches"]

FORMAT = "lam_ref.audit"
FORMAT_VERSION = 3
READABLE_VERSIONS = (1, 2, 3)
#: The record fields besides ``text`` that a version-2 store keeps (SPEC §1 records).
META_FIELDS = ("role", "turn", "source", "name")


class AuditError(LamValueError):
    """A residual that does not restore to its recorded original, or an unreadable audit file."""


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", errors="surrogatepass")).hexdigest()


def undo_patches(output: str, patches: Sequence[tuple[int, int, bytes]]) -> str:
    """A layer's input from its output: each ``[start, end)`` byte span replaced by its original.

    Spans must be sorted, non-overlapping and inside the output; otherwise :class:`AuditError`.
    """
    b = output.encode("utf-8", errors="surrogatepass")
    parts: list[bytes] = []
    pos = 0
    for k, (start, end, original) in enumerate(patches):
        if not pos <= start <= end <= len(b):
            raise AuditError(
                f"patches[{k}] = ({start}, {end}) does not fit the text (length {len(b)} bytes, previous end {pos})"
            )
        parts.append(b[pos:start])
        parts.append(original)
        pos = end
    parts.append(b[pos:])
    try:
        return b"".join(parts).decode("utf-8", errors="surrogatepass")
    except UnicodeDecodeError as exc:
        raise AuditError(f"undoing the patches gives invalid UTF-8 at byte {exc.start}") from exc


@dataclass(frozen=True)
class LayerPatch:
    """The patches one layer (``"L1"`` or ``"L0"``) applied to one record."""

    layer: str
    patches: tuple[tuple[int, int, bytes], ...]

    @property
    def moved_bytes(self) -> int:
        return sum(len(p[2]) for p in self.patches)


@dataclass
class AuditStore:
    """Moved bytes and original checksums of one trajectory's records (SPEC §8)."""

    trajectory_id: str
    sha256: list[str]
    edits: dict[int, list[LayerPatch]] = field(default_factory=dict)
    #: Per record ``[role, turn, source, name]`` (:data:`META_FIELDS`); ``None`` in version-1 files.
    meta: list[list[Any]] | None = None
    #: The format version the store was read from (:data:`FORMAT_VERSION` for a new one).
    version: int = FORMAT_VERSION
    #: What binds the store to its files (issue 39 §4), inside the checksummed body:
    #: ``{"name", "residual_sha256"}`` (the ``<name>`` of its files, the SHA-256 of the residual
    #: file's bytes) and with a native residual ``native_sha256``; ``None`` in stores written before.
    binding: dict[str, str] | None = None

    @property
    def checked(self) -> str:
        """What :meth:`restore_records` checks for this store, in words (``lam-ref restore``'s table)."""
        what = "SHA-256 of every record text" + (" and its role, turn, source, name" if self.meta is not None
                                                 else "; fields not recorded")
        if self.version < 3:
            what += f"; version-{self.version} store, its version not covered by the checksum"
        if self.binding is not None:
            what += "; bound to its name and its residual's SHA-256"
        return what

    @classmethod
    def for_records(cls, trajectory_id: str, texts: Sequence[str], meta: Sequence[Sequence[Any]] | None = None) -> AuditStore:
        """An empty store for records with these original texts (and, optionally, their
        ``(role, turn, source, name)``)."""
        if meta is not None and len(meta) != len(texts):
            raise LamValueError(f"meta has {len(meta)} entries for {len(texts)} texts")
        return cls(str(trajectory_id), [_sha(t) for t in texts],
                   meta=None if meta is None else [list(m) for m in meta])

    @property
    def n_records(self) -> int:
        return len(self.sha256)

    @property
    def moved_bytes(self) -> int:
        """Bytes moved out of the residual into the store (all layers)."""
        return sum(lp.moved_bytes for edits in self.edits.values() for lp in edits)

    def add(self, record: int, layer: str, patches: Sequence[tuple[int, int, bytes]]) -> None:
        """Record that ``layer`` edited ``record`` (no-op without patches). Layers are added in
        the order they ran."""
        if not 0 <= record < self.n_records:
            raise LamValueError(f"record must be in [0, {self.n_records}), got {record}")
        if patches:
            self.edits.setdefault(int(record), []).append(LayerPatch(str(layer), tuple(patches)))

    def restore_record(self, record: int, residual: str) -> str:
        """The original text of ``record`` from its residual text; checked against its SHA-256."""
        if not 0 <= record < self.n_records:
            raise AuditError(f"record {record} is not in this audit store ({self.n_records} records)")
        text = residual
        for lp in reversed(self.edits.get(record, [])):
            text = undo_patches(text, lp.patches)
        if _sha(text) != self.sha256[record]:
            raise AuditError(
                f"record {record} of trajectory {self.trajectory_id!r} does not restore to its original "
                "(SHA-256 mismatch): the residual or the audit store was changed"
            )
        return text

    def restore(self, residual: Sequence[str]) -> list[str]:
        """Every original record text from the residual record texts (same order and count)."""
        if len(residual) != self.n_records:
            raise AuditError(f"residual has {len(residual)} records, the audit store {self.n_records}")
        return [self.restore_record(i, t) for i, t in enumerate(residual)]

    def restore_records(self, residual: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
        """Whole original records (dicts with ``text`` and :data:`META_FIELDS`) from residual
        records: texts as :meth:`restore`; with a version-2 store every other field must equal the
        one recorded at compaction (a residual record edited, reordered or from another trajectory
        is refused with :class:`AuditError`)."""
        if len(residual) != self.n_records:
            raise AuditError(f"residual has {len(residual)} records, the audit store {self.n_records}")
        out = []
        for i, rec in enumerate(residual):
            if not isinstance(rec, dict) or not isinstance(rec.get("text"), str):
                raise AuditError(f"residual record {i} is not an object with a string 'text'")
            d = {k: rec.get(k) for k in META_FIELDS if k in rec}
            if self.meta is not None:
                for k, v in zip(META_FIELDS, self.meta[i]):
                    if rec.get(k) != v:
                        raise AuditError(f"record {i} of trajectory {self.trajectory_id!r}: residual {k} "
                                         f"{rec.get(k)!r} differs from the original's {v!r}")
                d = {k: v for k, v in zip(META_FIELDS, self.meta[i]) if not (k == "name" and v is None)}
            d["text"] = self.restore_record(i, rec["text"])
            out.append(d)
        return out

    # -- persistence -------------------------------------------------------------------------
    def to_json(self) -> dict[str, Any]:
        edits = {}
        for rec, layers in sorted(self.edits.items()):
            edits[str(rec)] = [
                {"layer": lp.layer, "patches": [[s, e, *_enc(o)] for s, e, o in lp.patches]} for lp in layers
            ]
        body: dict[str, Any] = {"version": FORMAT_VERSION, "trajectory": self.trajectory_id,
                                "sha256": self.sha256, "edits": edits}
        if self.meta is not None:
            body["meta"] = self.meta
        if self.binding is not None:
            body["binding"] = dict(self.binding)
        return {"format": FORMAT, "version": FORMAT_VERSION, "body_sha256": _body_digest(body), "body": body}

    @classmethod
    def from_json(cls, obj: Any, source: str = "<json>") -> AuditStore:
        try:
            if obj.get("format") != FORMAT:
                raise AuditError(f"{source} is not a lam_ref audit store (format {obj.get('format')!r})")
            if obj.get("version") not in READABLE_VERSIONS:
                raise AuditError(f"{source} has audit format version {obj.get('version')!r}, "
                                 f"this lam_ref reads {READABLE_VERSIONS}")
            body = obj["body"]
            if _body_digest(body) != obj["body_sha256"]:
                raise AuditError(f"{source} is corrupt: body checksum mismatch")
            version = obj["version"]
            inner = body.get("version")
            if (version >= 3 or inner is not None) and inner != version:
                raise AuditError(f"{source} is corrupt: version {version!r} differs from the checksummed body's "
                                 f"{inner!r} (the version was edited)")
            if version == 1 and "meta" in body:
                raise AuditError(f"{source} is corrupt: a version-1 store holds 'meta', which only version 2 and "
                                 "later write (the version was edited)")
            meta = body.get("meta") if version >= 2 else None
            if version == 2 and meta is None or meta is not None and (
                    not isinstance(meta, list) or len(meta) != len(body["sha256"])
                    or any(not isinstance(m, list) or len(m) != len(META_FIELDS) for m in meta)):
                raise AuditError(f"{source} is corrupt: 'meta' must hold one [role, turn, source, name] per record")
            binding = body.get("binding")
            if binding is not None and (not isinstance(binding, dict) or not all(
                    isinstance(binding.get(k), str) for k in ("name", "residual_sha256"))):
                raise AuditError(f"{source} is corrupt: 'binding' must hold the strings name and residual_sha256")
            store = cls(str(body["trajectory"]), [str(s) for s in body["sha256"]], meta=meta, version=int(version),
                        binding=binding)
            for rec, layers in body["edits"].items():
                for lp in layers:
                    patches = tuple((int(p[0]), int(p[1]), _dec(p[2], p[3])) for p in lp["patches"])
                    store.add(int(rec), str(lp["layer"]), patches)
            return store
        except AuditError:
            raise
        except (AttributeError, KeyError, TypeError, ValueError, IndexError) as exc:
            raise AuditError(f"{source} is not a readable audit store: {type(exc).__name__}: {exc}") from exc

    def save(self, path: str | os.PathLike[str]) -> Path:
        """Write the store as JSON, atomically (temp file, fsync, rename)."""
        return atomic_write_text(path, json.dumps(self.to_json()))

    @classmethod
    def load(cls, path: str | os.PathLike[str]) -> AuditStore:
        """Read a store written by :meth:`save`; refuses other formats and corrupt files."""
        p = Path(path)
        try:  # the one input-opening path: no FIFO, device or oversized file is read (issue 39 §3)
            obj = read_json_input(p)
        except InputError as exc:  # not a regular file, too large, not UTF-8, not JSON, a parser limit
            raise AuditError(f"audit file {str(p)!r} cannot be read: {exc.problem}") from exc
        return cls.from_json(obj, f"audit file {str(p)!r}")


def _body_digest(body: Any) -> str:
    return hashlib.sha256(json.dumps(body, sort_keys=True).encode()).hexdigest()


def _enc(b: bytes) -> list[str]:
    try:
        return ["t", b.decode("utf-8")]
    except UnicodeDecodeError:
        return ["b64", base64.b64encode(b).decode("ascii")]


def _dec(kind: str, value: str) -> bytes:
    if kind == "t":
        return value.encode("utf-8")
    if kind == "b64":
        return base64.b64decode(value.encode("ascii"), validate=True)
    raise ValueError(f"unknown patch encoding {kind!r}")
