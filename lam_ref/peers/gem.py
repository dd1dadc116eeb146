"""GEM, Geometry-guided Evidence-preserving Memory (seed 002, §5, App. A–B; SPEC §16), as a
compactor of a whole recorded trajectory.

One **global rewrite** of the trajectory's full history (the request at its last step):

1. **Blocks** (§3.1, App. B.1): one block per agent step = its call (``action``), reasoning
   (``thought``/``assistant``) and results (``observation``/``tool``), kept or removed together;
   the system/task prefix and any other record are never removed. **Protocol check**: every
   block must hold at least one call and one result, and no call after a result; otherwise the
   request is returned **unchanged** (Algorithm 1, line 3). Fewer than ``min_blocks = 16``
   blocks: unchanged.
2. **Protected set** ``P`` (§5.2, App. B.2): the last 4 blocks; the block most similar to the
   task (cosine of the block and task embeddings); up to 3 most recent blocks whose call writes
   state (:data:`WRITE_PATTERN`); up to 2 most recent blocks among the last 8 whose results show an
   error (:data:`ERROR_PATTERN`); and, when at least half of the blocks read a source
   (:data:`SOURCE_PATTERN`), the most recent block of each of up to 3 distinct sources.
3. **Residual-greedy completion** (§5.3, eq. 7, App. A.2): ``B = P`` with a modified
   Gram–Schmidt basis ``Q_B``; while ``|B| < K_t = max(K, |P|)``, ``E(B) < τ`` and a candidate
   with residual ``r_i = 1 - ||Q_Bᵀ x_i||² > tol`` exists, add the largest-residual block (ties:
   lowest index). Defaults ``τ = 0.90``, ``K = 16``.
4. **Length-guarded forward pass** (eq. 8, App. B.3): from all blocks, delete blocks outside
   ``B``, largest first (ties: earlier first), whenever the request keeps at least ``(1 - δ)`` of
   its characters, ``δ = 0.05`` (≥ 95 %). Retained records are unchanged and in order.

Rules the paper leaves open and that are **ours**: the regular expressions of the state, error
and source cues and the "source" notion (a file path named by a read call), the 3-source cap,
the encoder input (markers ``ASSISTANT_REASONING``/``ACTION``/``OBSERVATION`` as App. B.1, 12,000
characters, head and tail kept), the request length ``L`` = characters of all record texts, the
tie-breaks, and ``tol = 1e-10`` for an independent candidate. The encoder is injected
(MiniLM by default in ``lam-ref compare``; the paper uses Qwen3-Embedding-8B). Not prefix-stable:
the rewrite deletes blocks that were already sent. Appendix A's identities are property-tested
(``property_tests/test_gem_identities.py``) with ``scipy.linalg.qr(..., pivoting=True)`` as the
oracle of the selection order.
"""

from __future__ import annotations

import re
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..geometry import LamValueError
from ..text.chunking import Tokenizer
from ..text.encoders import DEFAULT_BATCH_SIZE, Encoder
from ..text.records import Trajectory
from .base import PeerResult, Unit, build_result, step_units

__all__ = [
    "GemConfig",
    "GemSelection",
    "block_text",
    "captured_energy",
    "protocol_problem",
    "gem",
    "gem_vectors",
    "greedy_completion",
    "mgs_extend",
    "protected_set",
    "residuals",
    "validate_tau",
]

WRITE_PATTERN = re.compile(
    r"(^|\s)(edit|create|insert|append|str_replace|write_file|sed\s+-i|tee|patch)\b|>>?\s*\S|open\([^)]*['\"][wa]",
    re.MULTILINE)
ERROR_PATTERN = re.compile(r"Traceback \(most recent call last\)|\b\w*(Error|Exception)\b|\berror:|\bFAILED\b")
SOURCE_PATTERN = re.compile(r"^\s*(open|cat|view|less|head|tail|nl|goto|scroll_up|scroll_down|str_replace_editor\s+view)"
                            r"\s+['\"]?([\w./-]+)")
ENCODER_CHARS = 12_000
TOL = 1e-10
CALL_ROLES = frozenset({"action"})
RESULT_ROLES = frozenset({"observation", "tool"})


def validate_tau(tau: Any, name: str = "tau") -> float:
    """``τ`` as a float in ``(0, 1]``; otherwise an error naming it."""
    if isinstance(tau, bool) or not isinstance(tau, (int, float)) or not 0.0 < float(tau) <= 1.0:
        raise LamValueError(f"{name} must be in (0, 1] (GEM's coverage target), got {tau!r}")
    return float(tau)


@dataclass(frozen=True)
class GemConfig:
    """GEM's settings (defaults: the paper's Table B.1 where it gives them)."""

    tau: float = 0.90
    k: int = 16
    delta: float = 0.05
    min_blocks: int = 16
    recent: int = 4

    def __post_init__(self) -> None:
        validate_tau(self.tau)
        for name in ("k", "min_blocks", "recent"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, int) or v < 0:
                raise LamValueError(f"{name} must be an integer >= 0, got {v!r}")
        if not 0.0 <= float(self.delta) < 1.0:
            raise LamValueError(f"delta must be in [0, 1), got {self.delta!r}")


# ----------------------------------------------------------------------------------------------
# geometry (App. A)


def mgs_extend(q: np.ndarray, x: np.ndarray, tol: float = TOL) -> tuple[np.ndarray, bool]:
    """Add ``x`` to the orthonormal columns ``q`` (``d × b``) by modified Gram–Schmidt (eq. A.4).

    Returns ``(Q', added)``: ``added`` is false (and ``Q' = q``) when the residual norm² ``<= tol``.
    """
    v = np.asarray(x, dtype=np.float64).copy()
    for j in range(q.shape[1]):
        v -= (q[:, j] @ v) * q[:, j]
    r = float(v @ v)
    if r <= tol:
        return q, False
    return np.column_stack([q, v / np.sqrt(r)]), True


def residuals(x: np.ndarray, q: np.ndarray) -> np.ndarray:
    """``r_i = 1 - ||Q_Bᵀ x_i||²`` for unit rows ``x`` (eq. 7, A.2)."""
    x = np.asarray(x, dtype=np.float64)
    if q.shape[1] == 0:
        return np.ones(x.shape[0])
    p = x @ q
    return 1.0 - np.einsum("ij,ij->i", p, p)


def captured_energy(x: np.ndarray, q: np.ndarray) -> float:
    """``E(B) = ||X Q_B||_F² / n`` (eq. 3, A.3); 0 for an empty basis or no rows."""
    x = np.asarray(x, dtype=np.float64)
    if x.shape[0] == 0 or q.shape[1] == 0:
        return 0.0
    return float(np.sum((x @ q) ** 2) / x.shape[0])


@dataclass(frozen=True)
class GemSelection:
    """The core ``B`` (protected first, then greedy picks in order), its basis and energies."""

    core: tuple[int, ...]
    picks: tuple[int, ...]
    basis: np.ndarray
    energy: tuple[float, ...]  # E after the protected set, then after each pick


def greedy_completion(x: np.ndarray, protected: Sequence[int], tau: float, k: int, *,
                      eligible: Sequence[int] | None = None, tol: float = TOL) -> GemSelection:
    """Residual-greedy completion of the core from ``protected`` (§5.3, Algorithm 1 lines 8–13).

    Args:
        x: unit block vectors ``(n, d)``.
        protected: indices in ``P`` (kept in ``B`` even when dependent on the others, App. A.1).
        tau: coverage target in ``(0, 1]``.
        k: nominal capacity ``K``; ``K_t = max(K, |P|)``.
        eligible: candidates for completion (default: all blocks).

    Returns:
        The :class:`GemSelection`.
    """
    tau = validate_tau(tau)
    x = np.asarray(x, dtype=np.float64)
    n = x.shape[0]
    core = list(dict.fromkeys(int(i) for i in protected))
    if any(not 0 <= i < n for i in core):
        raise LamValueError(f"protected indices must be in [0, {n}), got {core}")
    q = np.zeros((x.shape[1], 0))
    for i in core:
        q, _ = mgs_extend(q, x[i], tol)
    kt = max(int(k), len(core))
    cand = np.zeros(n, dtype=bool)
    cand[list(range(n)) if eligible is None else [int(i) for i in eligible]] = True
    cand[core] = False
    r = residuals(x, q)
    energy = [captured_energy(x, q)]
    picks: list[int] = []
    while len(core) < kt and energy[-1] < tau:
        scores = np.where(cand & (r > tol), r, -np.inf)
        j = int(np.argmax(scores))
        if not np.isfinite(scores[j]):
            break
        q, added = mgs_extend(q, x[j], tol)
        core.append(j)
        picks.append(j)
        cand[j] = False
        if added:
            qn = q[:, -1]
            r = r - (x @ qn) ** 2  # eq. A.7
        energy.append(captured_energy(x, q))
    return GemSelection(tuple(core), tuple(picks), q, tuple(energy))


# ----------------------------------------------------------------------------------------------
# blocks and protection (§3.1, §5.2, App. B)


def protocol_problem(traj: Trajectory, units: Sequence[Unit]) -> str | None:
    """``None`` when every block has a call before its results, else the first problem found."""
    for u in units:
        roles = [traj.records[i].role for i in u.records]
        calls = [k for k, r in enumerate(roles) if r in CALL_ROLES]
        results = [k for k, r in enumerate(roles) if r in RESULT_ROLES]
        if not calls:
            return f"turn {u.turn}: a result without a call"
        if not results:
            return f"turn {u.turn}: a call without a result"
        if max(calls) > min(results):
            return f"turn {u.turn}: a call after a result"
    return None


def block_text(traj: Trajectory, unit: Unit, limit: int = ENCODER_CHARS) -> str:
    """The encoder input of a block (App. B.1), at most ``limit`` characters (head and tail kept)."""
    marker = {"thought": "ASSISTANT_REASONING", "assistant": "ASSISTANT_TEXT", "action": "ACTION",
              "observation": "OBSERVATION", "tool": "OBSERVATION"}
    text = "\n".join(f"{marker.get(traj.records[i].role, traj.records[i].role.upper())}:\n{traj.records[i].text}"
                     for i in unit.records)
    if len(text) > limit:
        text = text[: limit // 2] + text[len(text) - (limit - limit // 2):]
    return text


def task_text(traj: Trajectory, prefix: Sequence[int]) -> str:
    """The current task: the prefix's ``user`` records (else every prefix record), joined."""
    users = [traj.records[i].text for i in prefix if traj.records[i].role == "user"]
    return "\n".join(users or [traj.records[i].text for i in prefix])


def _texts(traj: Trajectory, u: Unit, roles: frozenset[str]) -> str:
    return "\n".join(traj.records[i].text for i in u.records if traj.records[i].role in roles)


def protected_set(traj: Trajectory, units: Sequence[Unit], x: np.ndarray, task: np.ndarray | None,
                  recent: int = 4) -> dict[str, list[int]]:
    """The protected groups of §5.2 by name (``recent``, ``goal``, ``state``, ``error``, ``source``)."""
    n = len(units)
    groups: dict[str, list[int]] = {"recent": list(range(max(0, n - recent), n))}
    groups["goal"] = [int(np.argmax(x @ task))] if task is not None and n else []
    writes = [j for j in range(n) if WRITE_PATTERN.search(_texts(traj, units[j], CALL_ROLES))]
    groups["state"] = writes[-3:]
    errors = [j for j in range(max(0, n - 8), n) if ERROR_PATTERN.search(_texts(traj, units[j], RESULT_ROLES))]
    groups["error"] = errors[-2:]
    sources: dict[str, int] = {}
    for j in range(n):
        m = SOURCE_PATTERN.search(_texts(traj, units[j], CALL_ROLES))
        if m:
            sources[m.group(2)] = j
    src = sorted(sources.values())
    groups["source"] = src[-3:] if n and 2 * sum(
        1 for j in range(n) if SOURCE_PATTERN.search(_texts(traj, units[j], CALL_ROLES))) >= n else []
    return groups


def gem_vectors(traj: Trajectory, encoder: Encoder, *, batch_size: int = DEFAULT_BATCH_SIZE) -> tuple[np.ndarray, np.ndarray | None]:
    """Block vectors and the task vector of a trajectory (one encoder call; reuse across ``τ``)."""
    prefix, units, _ = step_units(traj)
    task = task_text(traj, prefix)
    texts = [block_text(traj, u) for u in units] + ([task] if task.strip() else [])
    e = encoder.encode(texts, batch_size=batch_size)
    if task.strip():
        return e[: len(units)], e[len(units)]
    return e, None


def gem(traj: Trajectory, tokenizer: Tokenizer, config: GemConfig | None = None, *,
        encoder: Encoder | None = None, vectors: tuple[np.ndarray, np.ndarray | None] | None = None) -> PeerResult:
    """GEM's global rewrite of one trajectory (module docstring).

    Args:
        encoder: encodes blocks and the task when ``vectors`` is not given.
        vectors: precomputed :func:`gem_vectors` (shared across operating points).

    Returns:
        The :class:`~lam_ref.peers.base.PeerResult`; units are blocks (ids in step order);
        ``extra`` holds the protected groups, the core, the captured energy and why nothing was
        removed (``unchanged``) when that is the case.
    """
    cfg = config or GemConfig()
    t0 = time.perf_counter()
    prefix, units, other = step_units(traj)
    op = {"tau": cfg.tau}

    def unchanged(reason: str) -> PeerResult:
        return build_result("gem", op, traj, tokenizer, unit="block", kept_units=[u.id for u in units],
                            deleted_units=[], prefix_stable=False, wall_s=time.perf_counter() - t0,
                            extra={"unchanged": reason})

    problem = protocol_problem(traj, units)
    if problem is not None:
        return unchanged(f"invalid tool protocol: {problem}")
    if len(units) < cfg.min_blocks:
        return unchanged(f"{len(units)} blocks < min_blocks {cfg.min_blocks}")
    if vectors is None:
        if encoder is None:
            raise LamValueError("gem needs an encoder or precomputed vectors")
        vectors = gem_vectors(traj, encoder)
    x, task = vectors
    if x.shape[0] != len(units):
        raise LamValueError(f"vectors has {x.shape[0]} rows for {len(units)} blocks")
    groups = protected_set(traj, units, x, task, cfg.recent)
    protected = sorted(set(j for g in groups.values() for j in g))
    sel = greedy_completion(x, protected, cfg.tau, cfg.k)
    core = set(sel.core)
    size = [sum(len(traj.records[i].text) for i in u.records) for u in units]
    total = sum(len(r.text) for r in traj.records)
    floor = (1.0 - cfg.delta) * total
    length = total
    deleted: list[int] = []
    for j in sorted((j for j in range(len(units)) if j not in core), key=lambda j: (-size[j], j)):
        if length - size[j] >= floor:
            length -= size[j]
            deleted.append(j)
    deleted.sort()
    removed = [i for j in deleted for i in units[j].records]
    return build_result("gem", op, traj, tokenizer, removed=removed, unit="block",
                        kept_units=[u.id for u in units if u.id not in set(deleted)], deleted_units=deleted,
                        prefix_stable=False, wall_s=time.perf_counter() - t0,
                        extra={"protected": groups, "core": list(sel.core), "energy": sel.energy[-1],
                               "chars_kept": length / total if total else 1.0, "other_records": len(other)})
