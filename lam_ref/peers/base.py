"""The compactor interface every method of ``lam-ref compare`` implements (paper §3.1–3.2, App. F.3–F.8;
SPEC §16).

A method maps one loaded :class:`~lam_ref.text.records.Trajectory` and one **operating point**
(its single parameter: LAM's threshold ``t``, masking's ``k``, SemDeDup's ``eps``, GEM's ``τ``,
LRE's budget ``B``) to a :class:`PeerResult`:

* the **residual trajectory** (:meth:`PeerResult.residual_records`): records in order, an edited
  record carrying its residual text, a removed record absent;
* the **units** it decides on (``"chunk"``, ``"line"``, ``"observation"``, ``"block"``,
  ``"step"``) and which were kept and which deleted;
* the number of **stubs or placeholders** it inserted (net removal counts them, gross does not);
* whether it is **prefix-stable**: it decides on each arrival before prefill and never revises
  (LAM's layers), or it rewrites context that was already sent (masking, SemDeDup, GEM, LRE; the
  schedule distinction of §3.2 and App. E.2);
* a **removal record** (:class:`RemovalRecord`) such that residual + record reproduces the input
  exactly (:func:`restore_trajectory`; tested for every method). Edited records keep their byte
  patches in an :class:`~lam_ref.text.audit.AuditStore` (the same store as LAM's audit); a removed
  record is an edit of the empty text plus its index.

Removal is counted as everywhere in lam_ref (App. B "Accounting", SPEC §3): over whole
observation texts, ``tok(original) - tok(residual)``, net (placeholders counted) and gross
(placeholder lines removed). A method that removes whole steps (GEM, LRE) also removes their
action and thought records; those are not observation tokens and are not counted (the paper's
removal axis is observation tokens), which understates those methods' context saving slightly.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from .. import metrics as _metrics
from ..geometry import LamValueError
from ..text.audit import AuditError, AuditStore
from ..text.chunking import Tokenizer
from ..text.records import OBSERVATION, Record, Trajectory

__all__ = [
    "PREFIX_ROLES",
    "STEP_ROLES",
    "PeerResult",
    "RemovalRecord",
    "Unit",
    "build_result",
    "restore_trajectory",
    "step_units",
]

#: Roles that belong to an agent step (an interaction block: call, reasoning, results).
STEP_ROLES = frozenset({"thought", "action", "assistant", OBSERVATION, "tool"})
#: Roles of the non-removable prefix (system prompt, task, demonstrations).
PREFIX_ROLES = frozenset({"system", "user", "demonstration"})


@dataclass(frozen=True)
class RemovalRecord:
    """What a method removed from one trajectory: byte patches of edited records (``audit``, with
    every original record's SHA-256 and ``(role, turn, source, name)``) and the indices of records
    removed whole. :func:`restore_trajectory` turns residual + record back into the input."""

    audit: AuditStore
    removed_records: tuple[int, ...]

    @property
    def n_records(self) -> int:
        return self.audit.n_records

    def to_json(self) -> dict[str, Any]:
        return {"audit": self.audit.to_json(), "removed_records": list(self.removed_records)}

    @classmethod
    def from_json(cls, obj: Any) -> RemovalRecord:
        try:
            return cls(AuditStore.from_json(obj["audit"]), tuple(int(i) for i in obj["removed_records"]))
        except (KeyError, TypeError, ValueError) as exc:
            raise AuditError(f"not a removal record: {type(exc).__name__}: {exc}") from exc


def restore_trajectory(residual: Sequence[Record], record: RemovalRecord) -> list[Record]:
    """The original records from a residual trajectory and its removal record (exact, checked).

    Args:
        residual: the residual records in order (removed records absent).
        record: the method's :class:`RemovalRecord`.

    Returns:
        The original records, every field and byte as loaded.

    Raises:
        AuditError: the residual does not fit the record (count, fields or bytes differ).
    """
    removed = set(record.removed_records)
    n = record.n_records
    if len(residual) + len(removed) != n:
        raise AuditError(f"residual has {len(residual)} records and {len(removed)} were removed, "
                         f"the record describes {n}")
    meta = record.audit.meta
    if meta is None:
        raise AuditError("the removal record keeps no record fields (audit format 1)")
    it = iter(residual)
    out: list[Record] = []
    for i in range(n):
        role, turn, source, name = meta[i]
        if i in removed:
            text = ""
        else:
            r = next(it)
            if (r.role, r.turn, r.source, r.name) != (role, turn, source, name):
                raise AuditError(f"residual record for original {i} has fields {(r.role, r.turn, r.source, r.name)!r}, "
                                 f"expected {(role, turn, source, name)!r}")
            text = r.text
        out.append(Record(role, record.audit.restore_record(i, text), turn, source, name))
    return out


@dataclass(frozen=True)
class Unit:
    """A removable group of records (GEM's interaction block, LRE's step): its id, turn and records."""

    id: int
    turn: int
    records: tuple[int, ...]


def step_units(traj: Trajectory) -> tuple[list[int], list[Unit], list[int]]:
    """Split a trajectory into ``(prefix, units, other)`` (SPEC §16; GEM §3.1, LRE §3.2).

    ``prefix``: the leading records with a role in :data:`PREFIX_ROLES` (system prompt, task);
    ``units``: one per turn, the records with a role in :data:`STEP_ROLES` of that turn, in order;
    ``other``: every remaining record (e.g. a later user message), never removed.
    """
    recs = traj.records
    k = 0
    while k < len(recs) and recs[k].role in PREFIX_ROLES:
        k += 1
    prefix = list(range(k))
    by_turn: dict[int, list[int]] = {}
    other: list[int] = []
    for i in range(k, len(recs)):
        if recs[i].role in STEP_ROLES:
            by_turn.setdefault(recs[i].turn, []).append(i)
        else:
            other.append(i)
    units = [Unit(j, t, tuple(ix)) for j, (t, ix) in enumerate(sorted(by_turn.items()))]
    return prefix, units, other


@dataclass
class PeerResult:
    """One method at one operating point on one trajectory (see the module docstring)."""

    method: str
    operating_point: dict[str, Any]
    trajectory: Trajectory
    residual_texts: list[str]
    removal: RemovalRecord
    unit: str
    kept_units: tuple[Any, ...]
    deleted_units: tuple[Any, ...]
    placeholders: int
    prefix_stable: bool
    tokens_original: int
    tokens_residual_net: int
    tokens_residual_gross: int
    wall_s: float = 0.0
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def removed_records(self) -> tuple[int, ...]:
        return self.removal.removed_records

    def residual_records(self) -> list[Record]:
        """The residual trajectory: records in order, edited texts in place, removed records absent."""
        gone = set(self.removal.removed_records)
        return [Record(r.role, t, r.turn, r.source, r.name)
                for i, (r, t) in enumerate(zip(self.trajectory.records, self.residual_texts)) if i not in gone]

    def observation_residuals(self) -> list[str]:
        """Residual text of each original observation record ("" when removed), in order."""
        return [self.residual_texts[i] for i in self.trajectory.observation_indices]

    def restore(self) -> list[Record]:
        """The input records from :meth:`residual_records` and the removal record."""
        return restore_trajectory(self.residual_records(), self.removal)

    @property
    def removal_tokens(self) -> _metrics.RemovalResult:
        return _metrics.RemovalResult(self.tokens_original, self.tokens_residual_net, self.tokens_residual_gross)

    def to_json(self) -> dict[str, Any]:
        rem = self.removal_tokens
        return {
            "id": self.trajectory.id,
            "method": self.method,
            "operating_point": dict(self.operating_point),
            "unit": self.unit,
            "kept_units": len(self.kept_units),
            "deleted_units": len(self.deleted_units),
            "removed_records": len(self.removal.removed_records),
            "placeholders": self.placeholders,
            "prefix_stable": self.prefix_stable,
            "tokens_original": self.tokens_original,
            "tokens_residual_net": self.tokens_residual_net,
            "tokens_residual_gross": self.tokens_residual_gross,
            "removal_net": rem.net,
            "removal_gross": rem.gross,
            "wall_s": self.wall_s,
            **self.extra,
        }


def build_result(
    method: str,
    operating_point: dict[str, Any],
    traj: Trajectory,
    tokenizer: Tokenizer,
    *,
    edits: dict[int, tuple[str, list[tuple[int, int, bytes]]]] | None = None,
    removed: Sequence[int] = (),
    unit: str,
    kept_units: Sequence[Any],
    deleted_units: Sequence[Any],
    placeholders: int = 0,
    prefix_stable: bool,
    gross_text: Callable[[int, str], str] | None = None,
    wall_s: float = 0.0,
    extra: dict[str, Any] | None = None,
) -> PeerResult:
    """Assemble a :class:`PeerResult` from a method's edits and removals (the shared bookkeeping).

    Args:
        edits: ``{record: (residual text, patches)}``; patches ``(start, end, original bytes)`` in
            the residual's UTF-8 bytes, sorted (see :func:`lam_ref.text.audit.undo_patches`).
        removed: indices of records removed whole.
        gross_text: ``(record, residual text) -> text without placeholder lines`` (gross
            accounting); ``None`` when the method inserts no placeholder.

    Raises:
        LamValueError: a record both edited and removed, or an index out of range.
    """
    edits = edits or {}
    n = len(traj.records)
    gone = tuple(sorted(set(int(i) for i in removed)))
    for i in list(edits) + list(gone):
        if not 0 <= i < n:
            raise LamValueError(f"record index {i} out of range [0, {n})")
    if set(edits) & set(gone):
        raise LamValueError(f"records both edited and removed: {sorted(set(edits) & set(gone))}")
    audit = AuditStore.for_records(traj.id, [r.text for r in traj.records],
                                   meta=[(r.role, r.turn, r.source, r.name) for r in traj.records])
    texts = [r.text for r in traj.records]
    for i, (text, patches) in sorted(edits.items()):
        texts[i] = text
        audit.add(i, method, patches)
    for i in gone:
        original = traj.records[i].text.encode("utf-8", errors="surrogatepass")
        texts[i] = ""
        if original:
            audit.add(i, method, [(0, 0, original)])
    obs = traj.observation_indices
    orig_counts = tokenizer.count_many([traj.records[i].text for i in obs])
    net = gross = 0
    for k, i in enumerate(obs):
        t = texts[i]
        if t == traj.records[i].text:
            net += orig_counts[k]
            gross += orig_counts[k]
            continue
        c = tokenizer.count(t) if t else 0
        net += c
        g = gross_text(i, t) if gross_text is not None else t
        gross += c if g == t else (tokenizer.count(g) if g else 0)
    return PeerResult(
        method=method,
        operating_point=dict(operating_point),
        trajectory=traj,
        residual_texts=texts,
        removal=RemovalRecord(audit, gone),
        unit=unit,
        kept_units=tuple(kept_units),
        deleted_units=tuple(deleted_units),
        placeholders=int(placeholders),
        prefix_stable=bool(prefix_stable),
        tokens_original=sum(orig_counts),
        tokens_residual_net=net,
        tokens_residual_gross=gross,
        wall_s=wall_s,
        extra=dict(extra or {}),
    )
