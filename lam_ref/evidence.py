"""Evidence: which lines of a gold patch a compaction keeps (paper App. F.3, F.4, Table 14; SPEC §12).

One subsystem in one place:

* the gold patches: :func:`load_gold` reads ``--gold`` inputs (a JSON object ``{id: patch}``, a
  JSON object or array of SWE-bench style records ``{"instance_id": str, "patch": str, ...}``, a
  JSONL file of such records (a ``.jsonl`` suffix is always read as JSONL), or a directory of
  ``<id>.patch`` / ``<id>.diff`` files); every input must be UTF-8 (an undecodable byte is an
  error naming the file and the byte offset: replacing it would silently change evidence lines),
  and an id given twice with different patches is an error. :func:`gold_key` matches a trajectory
  by its id, then by the last component of its id (and without a ``:sample`` suffix);
  :func:`gold_digest` / :func:`cached_gold` let Dask workers check they read the patches the
  driver validated;
* the evidence lines of a patch (:func:`evidence_lines`), exact and relaxed survival
  (:func:`evidence_retention`, :func:`relaxed_match`), and the pooled micro and macro retention
  (:func:`summarize_evidence`, from counts :func:`pool_evidence`; as a report :func:`retention_json`);
  one trajectory's gold evidence (:func:`gold_evidence`, exact and relaxed) and the report of one
  result and of a pool of them (:func:`result_json`, :func:`pooled_json`), what ``lam-ref compact``
  reports and ``lam-ref sweep`` pools;
* LoCoMo's QA evidence (App. F.2): the dialogue turns its questions name, kept or lost in a
  residual by the same exact test (:func:`qa_evidence_texts`, :func:`qa_evidence_retention`); what
  ``lam-ref compact`` and ``lam-ref sweep`` both report.

``ECR@τ`` (eq. 8), which combines retention with removal, is :func:`lam_ref.metrics.ecr_at`.
Bad input raises :class:`~lam_ref.geometry.LamValueError` naming the argument and the value.
"""

from __future__ import annotations

import bisect
import functools
import hashlib
import json
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path
from typing import Any

from ._io import InputError, parse_json, read_input
from .geometry import LamValueError, validate_int

__all__ = [
    "DEFAULT_MIN_EVIDENCE_CHARS",
    "DEFAULT_RELAXED_DILATION",
    "EvidenceResult",
    "EvidenceSummary",
    "cached_gold",
    "evidence_lines",
    "evidence_retention",
    "gold_digest",
    "gold_evidence",
    "gold_key",
    "load_gold",
    "pool_evidence",
    "pooled_json",
    "qa_evidence_retention",
    "qa_evidence_texts",
    "relaxed_match",
    "result_json",
    "retention_json",
    "summarize_evidence",
]

#: Evidence lines shorter than this (after stripping whitespace) are ignored (App. F.3: "so that
#: ``else:`` does not count").
DEFAULT_MIN_EVIDENCE_CHARS = 12
#: Relaxed evidence match window: the line's alphanumeric tokens must occur in order within a window
#: of at most ``4 ×`` their count (App. F.4).
DEFAULT_RELAXED_DILATION = 4


# ----------------------------------------------------------------------------------------------
# gold patches (App. F.3)


def _read_utf8(path: Path) -> str:
    """The text of a gold file; non-UTF-8 bytes raise naming the file and the byte offset."""
    try:  # the one input-opening path: no FIFO, device or oversized file is read (issue 39 §3)
        data = read_input(path)
    except InputError as exc:
        raise LamValueError(f"--gold {str(path)!r} cannot be read: {exc.problem}") from exc
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise LamValueError(
            f"--gold {str(path)!r} is not UTF-8 text: byte 0x{data[exc.start]:02x} at offset {exc.start}"
        ) from exc


def _add(out: dict[str, str], where: dict[str, str], key: str, patch: str, loc: str, path: str) -> None:
    """Add one gold patch; the same id with another patch is an error naming both places."""
    if key in out and out[key] != patch:
        raise LamValueError(f"--gold {path!r}: {loc}: instance {key!r} already has a different patch ({where[key]})")
    out.setdefault(key, patch)
    where.setdefault(key, loc)


def _record(item: Any, loc: str, path: str) -> tuple[str, str]:
    if not isinstance(item, dict) or not isinstance(item.get("instance_id"), str) or not isinstance(item.get("patch"), str):
        raise LamValueError(f"--gold {path!r}: {loc}: expected an object with string 'instance_id' and 'patch'")
    return item["instance_id"], item["patch"]


def load_gold(path: str) -> dict[str, str]:
    """Gold patches by instance id (formats in the module docstring); errors name ``--gold``."""
    p = Path(path)
    if not p.exists():
        raise LamValueError(f"--gold path {path!r} does not exist")
    out: dict[str, str] = {}
    where: dict[str, str] = {}
    if p.is_dir():
        for f in sorted(set(p.rglob("*.patch")) | set(p.rglob("*.diff"))):
            if f.is_file():
                _add(out, where, f.stem, _read_utf8(f), str(f), path)
        if not out:
            raise LamValueError(f"--gold directory {path!r} holds no .patch or .diff files")
        return out
    text = _read_utf8(p)
    obj: Any = None
    if p.suffix.lower() != ".jsonl":
        try:
            obj = json.loads(text)
        except json.JSONDecodeError:
            obj = None  # not one JSON document: JSONL lines
        except (RecursionError, ValueError) as exc:  # parser limits: nesting, an integer's digits
            raise LamValueError(f"--gold {path!r}: JSON exceeds a parser limit: "
                                f"{str(exc).splitlines()[0] if str(exc) else 'nested too deeply'}") from None
    if isinstance(obj, dict) and "instance_id" in obj:
        _add(out, where, *_record(obj, "$", path), "$", path)
    elif isinstance(obj, dict):
        for k, v in obj.items():
            if not isinstance(v, str):
                raise LamValueError(f"--gold {path!r}: $.{k}: expected a patch string, got {type(v).__name__}")
            out[str(k)] = v
    elif isinstance(obj, list):
        for i, item in enumerate(obj):
            _add(out, where, *_record(item, f"$[{i}]", path), f"$[{i}]", path)
    elif obj is not None:
        raise LamValueError(f"--gold {path!r}: expected a JSON object or array, or JSONL records, "
                            f"got a JSON {type(obj).__name__}")
    else:
        for n, line in enumerate(text.splitlines(), start=1):
            if not line.strip():
                continue
            try:
                item = parse_json(path, line)
            except InputError as exc:
                raise LamValueError(f"--gold {path!r}: line {n}: {exc.problem}") from exc
            _add(out, where, *_record(item, f"line {n}", path), f"line {n}", path)
    if not out:
        raise LamValueError(f"--gold {path!r} holds no patches")
    return out


def gold_digest(gold: dict[str, str]) -> str:
    """SHA-256 over the gold patches (ids sorted; JSON of the ``[id, patch]`` pairs): what a Dask
    sweep's workers and its ``--resume`` folder check they use."""
    return hashlib.sha256(json.dumps(sorted(gold.items()), ensure_ascii=False).encode("utf-8")).hexdigest()


@functools.lru_cache(maxsize=2)
def cached_gold(path: str, sha256: str) -> dict[str, str]:
    """The gold patches at ``path``, read once per process (a Dask worker), refused when they are
    not the ones the driver validated (the file changed meanwhile)."""
    gold = load_gold(path)
    if gold_digest(gold) != sha256:
        raise LamValueError(f"--gold {path!r} changed during the run (its patches differ from the validated ones)")
    return gold


def gold_key(traj: Any, gold: dict[str, str]) -> str | None:
    """The gold id of a trajectory: its id, then the id's last path component (and without a
    LoCoMo-style ``:sample`` suffix); ``None`` when none is in ``gold``."""
    for key in (traj.id, traj.id.rsplit("/", 1)[-1], traj.id.split(":", 1)[0]):
        if key in gold:
            return key
    return None


# ----------------------------------------------------------------------------------------------
# evidence lines and their survival (App. F.3, F.4, Table 14)


_ALNUM = re.compile(r"[^\W_]+")


def evidence_lines(gold_patch: str, min_chars: int = DEFAULT_MIN_EVIDENCE_CHARS) -> list[str]:
    """The evidence lines of a unified-diff gold patch (App. F.3, SPEC §12).

    Every line starting with ``+`` except file headers (``+++ ``) is an added line; its ``+`` marker
    is removed and surrounding whitespace stripped; lines with fewer than ``min_chars`` characters
    after stripping are dropped. Duplicates are kept once, in first-occurrence order (a line is one
    piece of evidence however often the patch adds it). ``\\r\\n`` line ends are accepted.
    """
    if not isinstance(gold_patch, str):
        raise LamValueError(f"gold_patch must be str, got {type(gold_patch).__name__}")
    n = validate_int(min_chars, "min_chars")
    seen: dict[str, None] = {}
    for raw in gold_patch.split("\n"):
        line = raw[:-1] if raw.endswith("\r") else raw
        if not line.startswith("+") or line.startswith("+++ ") or line == "+++":
            continue
        body = line[1:].strip()
        if len(body) >= n and body not in seen:
            seen[body] = None
    return list(seen)


def _as_texts(texts: str | Sequence[str], name: str) -> list[str]:
    if isinstance(texts, str):
        return [texts]
    if isinstance(texts, (bytes, bytearray)) or not isinstance(texts, Iterable):
        raise LamValueError(f"{name} must be a str or a sequence of str, got {type(texts).__name__}")
    out = []
    for i, t in enumerate(texts):
        if t is None:
            t = ""  # a missing observation is empty (SPEC §3)
        if not isinstance(t, str):
            raise LamValueError(f"{name}[{i}] must be str, got {type(t).__name__}")
        out.append(t)
    return out


class _TokenIndex:
    """Positions of each alphanumeric token of one text, for the relaxed match (App. F.4)."""

    def __init__(self, text: str):
        self.positions: dict[str, list[int]] = {}
        for pos, m in enumerate(_ALNUM.finditer(text)):
            self.positions.setdefault(m.group(), []).append(pos)

    def contains(self, tokens: Sequence[str], dilation: int) -> bool:
        k = len(tokens)
        width = dilation * k
        lists = []
        for tok in tokens:
            lst = self.positions.get(tok)
            if lst is None:
                return False
            lists.append(lst)
        for start in lists[0]:
            limit = start + width - 1  # last admissible position of the final token
            pos = start
            ok = True
            for lst in lists[1:]:
                j = bisect.bisect_right(lst, pos)
                if j == len(lst) or lst[j] > limit:
                    ok = False
                    break
                pos = lst[j]
            if ok:
                return True
        return False


def relaxed_match(line: str, text: str, dilation: int = DEFAULT_RELAXED_DILATION) -> bool:
    """Relaxed survival of one evidence line in one text (App. F.4).

    Alphanumeric tokens are maximal runs of Unicode letters and digits (regex ``[^\\W_]+``; ``_``
    separates tokens), case-sensitive. With ``k`` tokens in ``line``, the match holds iff ``text``
    has tokens at positions ``p_1 < ... < p_k`` equal to them in order with ``p_k - p_1 + 1 <=
    dilation·k``. A line without alphanumeric tokens falls back to the exact substring test.
    """
    d = validate_int(dilation, "dilation")
    if d < 1:
        raise LamValueError(f"dilation must be >= 1, got {d}")
    toks = _ALNUM.findall(line)
    if not toks:
        return line in text
    return _TokenIndex(text).contains(toks, d)


@dataclass(frozen=True)
class EvidenceResult:
    """Evidence survival of one trajectory (Table 14): witnessed lines, and which were lost.

    ``witnessed`` are the gold-patch evidence lines found verbatim in some original observation;
    ``lost`` those of them not found in the residual (exact: substring; relaxed: :func:`relaxed_match`).
    """

    witnessed: tuple[str, ...]
    lost: tuple[str, ...]
    relaxed: bool = False

    @property
    def witnessed_count(self) -> int:
        return len(self.witnessed)

    @property
    def kept_count(self) -> int:
        return len(self.witnessed) - len(self.lost)

    @property
    def intact(self) -> bool:
        """No witnessed line lost (vacuously true when nothing is witnessed; eq. 10)."""
        return not self.lost

    @property
    def retention(self) -> Fraction:
        """``kept / witnessed``; ``1`` when nothing is witnessed."""
        return Fraction(self.kept_count, self.witnessed_count) if self.witnessed else Fraction(1)

    def to_json(self) -> dict[str, Any]:
        return {
            "witnessed": self.witnessed_count,
            "kept": self.kept_count,
            "lost_lines": list(self.lost),
            "relaxed": self.relaxed,
        }


def evidence_retention(
    gold_patch: str | Sequence[str],
    originals: str | Sequence[str],
    residual: str | Sequence[str],
    *,
    relaxed: bool = False,
    min_chars: int = DEFAULT_MIN_EVIDENCE_CHARS,
    dilation: int = DEFAULT_RELAXED_DILATION,
) -> EvidenceResult:
    """Which witnessed gold-patch lines survive compaction in one trajectory (App. F.3, F.4).

    ``gold_patch`` is the unified diff text (or an already extracted list of evidence lines);
    ``originals`` the trajectory's original observation texts; ``residual`` its residual
    observation texts, stubs in place and not expanded (SPEC §12: "lines reachable only through
    stubs count as lost"). Each text is searched on its own, never across a text boundary. A line
    is witnessed iff it is a substring of some original. It survives iff it is a substring of some
    residual text (``relaxed=False``) or :func:`relaxed_match` holds in some residual text.
    """
    lines = evidence_lines(gold_patch, min_chars) if isinstance(gold_patch, str) else _as_texts(gold_patch, "gold_patch")
    orig = _as_texts(originals, "originals")
    res = _as_texts(residual, "residual")
    witnessed = tuple(ln for ln in lines if any(ln in o for o in orig))
    if relaxed:
        indexes = [_TokenIndex(r) for r in res]
        d = validate_int(dilation, "dilation")
        if d < 1:
            raise LamValueError(f"dilation must be >= 1, got {d}")

        def survives(ln: str) -> bool:
            toks = _ALNUM.findall(ln)
            if not toks:
                return any(ln in r for r in res)
            return any(ix.contains(toks, d) for ix in indexes)
    else:

        def survives(ln: str) -> bool:
            return any(ln in r for r in res)

    lost = tuple(ln for ln in witnessed if not survives(ln))
    return EvidenceResult(witnessed, lost, bool(relaxed))


@dataclass(frozen=True)
class EvidenceSummary:
    """Pooled evidence over trajectories (Table 14): micro retention and macro intactness.

    ``micro = Σ kept / Σ witnessed`` (exact; ``1`` if nothing witnessed); ``macro_intact`` is the
    fraction of trajectories with at least one witnessed line that lose none.
    """

    trajectories: int
    trajectories_with_evidence: int
    witnessed: int
    kept: int
    intact: int

    @property
    def lost(self) -> int:
        return self.witnessed - self.kept

    @property
    def micro(self) -> Fraction:
        return Fraction(self.kept, self.witnessed) if self.witnessed else Fraction(1)

    @property
    def macro_intact(self) -> Fraction:
        n = self.trajectories_with_evidence
        return Fraction(self.intact, n) if n else Fraction(1)

    def to_json(self) -> dict[str, Any]:
        return {
            "trajectories": self.trajectories,
            "trajectories_with_evidence": self.trajectories_with_evidence,
            "witnessed": self.witnessed,
            "kept": self.kept,
            "lost": self.lost,
            "micro": float(self.micro),
            "macro_intact": float(self.macro_intact),
        }


def pool_evidence(counts: Iterable[tuple[int, int]]) -> EvidenceSummary:
    """Pool per-trajectory ``(witnessed, kept)`` counts into micro and macro retention (Table 14):
    the one pooling rule, for :class:`EvidenceResult` s (:func:`summarize_evidence`) and for their
    JSON (a compact report's per-trajectory ``qa_evidence``)."""
    n = with_ev = wit = kept = intact = 0
    for i, (w, k) in enumerate(counts):
        w, k = validate_int(w, f"counts[{i}].witnessed"), validate_int(k, f"counts[{i}].kept")
        if not 0 <= k <= w:
            raise LamValueError(f"counts[{i}] must have 0 <= kept <= witnessed, got kept={k}, witnessed={w}")
        n += 1
        wit += w
        kept += k
        if w:
            with_ev += 1
            intact += int(k == w)
    return EvidenceSummary(n, with_ev, wit, kept, intact)


def summarize_evidence(results: Iterable[EvidenceResult]) -> EvidenceSummary:
    """Pool per-trajectory :class:`EvidenceResult` s into micro and macro retention (Table 14)."""
    counts = []
    for i, r in enumerate(results):
        if not isinstance(r, EvidenceResult):
            raise LamValueError(f"results[{i}] must be an EvidenceResult, got {type(r).__name__}")
        counts.append((r.witnessed_count, r.kept_count))
    return pool_evidence(counts)


def retention_json(summary: EvidenceSummary) -> dict[str, Any]:
    """A pooled retention as a report: :meth:`EvidenceSummary.to_json`, with ``micro`` and
    ``macro_intact`` ``None`` when nothing is witnessed (nothing to retain: no retention figure,
    not a vacuous 100 %)."""
    out = summary.to_json()
    if not summary.witnessed:
        out.update(micro=None, macro_intact=None)
    return out


def result_json(r: EvidenceResult) -> dict[str, Any]:
    """One trajectory's result as a report: :meth:`EvidenceResult.to_json` and its ``retention``
    (``None`` when nothing is witnessed)."""
    return {**r.to_json(), "retention": float(r.retention) if r.witnessed else None}


def pooled_json(per: Iterable[dict[str, Any] | None]) -> dict[str, Any] | None:
    """Pool per-trajectory reports (:func:`result_json`; ``None``: the trajectory carries no such
    evidence) into :func:`retention_json`, by :func:`pool_evidence`; ``None`` when none carries it."""
    got = [q for q in per if q is not None]
    return retention_json(pool_evidence((q["witnessed"], q["kept"]) for q in got)) if got else None


def gold_evidence(traj: Any, residual: Sequence[str], lines: Sequence[str]) -> tuple[EvidenceResult, EvidenceResult]:
    """Exact and relaxed survival (App. F.3, F.4) of a trajectory's gold evidence ``lines``
    (:func:`evidence_lines` of its patch) in its residual observation texts, witnessed in its
    original observations."""
    originals = [traj.records[i].text for i in traj.observation_indices]
    return (evidence_retention(lines, originals, residual),
            evidence_retention(lines, originals, residual, relaxed=True))


# ----------------------------------------------------------------------------------------------
# LoCoMo's QA evidence (App. F.2)


def qa_evidence_texts(traj: Any) -> list[str] | None:
    """The texts of the dialogue turns a LoCoMo trajectory's QA items name as evidence (the loader's
    ``meta["qa"][*]["evidence_records"]``, observation records), each distinct text once, in record
    order; ``None`` when the trajectory has no QA item (it carries no QA evidence). A QA item whose
    evidence ids were all dropped by the loader names no turn (an empty list is possible)."""
    qa = traj.meta.get("qa") if isinstance(traj.meta, dict) else None
    if not isinstance(qa, list) or not qa:
        return None
    idx = sorted({int(i) for item in qa if isinstance(item, dict) for i in (item.get("evidence_records") or [])})
    texts = (traj.records[i].text for i in idx if 0 <= i < len(traj.records) and traj.records[i].role == "observation")
    return list(dict.fromkeys(t for t in texts if t.strip()))


def qa_evidence_retention(traj: Any, residual: Sequence[str]) -> EvidenceResult | None:
    """Which QA evidence turns of a LoCoMo trajectory survive in its residual observation texts
    (stubs in place, not expanded): :func:`evidence_retention` (exact) with each evidence turn's
    whole text as one evidence line (:func:`qa_evidence_texts`), so a turn survives iff its text is
    still readable verbatim in some residual observation; one stubbed window or L0-dropped line of
    it loses it (SPEC §12: reachable only through stubs counts as lost). ``None`` without QA items."""
    texts = qa_evidence_texts(traj)
    if texts is None:
        return None
    originals = [traj.records[i].text for i in traj.observation_indices]
    return evidence_retention(texts, originals, residual)
