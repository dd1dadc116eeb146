"""Evaluation metrics of the paper (§3, Appendix F; SPEC §12): pure functions over plain inputs.

Every function here takes strings, integers, floats or numpy arrays and returns numbers or small
frozen dataclasses; none runs a compactor, a tokenizer or an encoder. The text pipeline counts
tokens (cl100k, SPEC §3) and runs the layers; this module turns those counts into the paper's
quantities:

* removal, gross and net, over whole texts (§2.3, App. B "Accounting", Tables 12 and 15);
* the token-weighted distribution of merge distances and ``δ̂`` (App. F.2, Table 11, ``THM1``);
* evidence retention against a unified-diff gold patch, exact and relaxed (App. F.3, F.4, Table 14):
  :mod:`lam_ref.evidence`;
* ``ECR@τ`` with exact rational comparison (eq. 8, Table 17), ``RSC`` (eq. 10), ``BFR@B`` (Table 19),
  ``η(κ)`` and the break-even ``κ`` (eq. 9, Table 18);
* retrieval recall@k after substitution (App. F.2, Table 11 "R@10", ``COR1``).

Bad input raises :class:`~lam_ref.geometry.LamValueError` naming the argument and the value.
Ratios whose comparison matters (micro retention, RSC, BFR) are returned as
:class:`fractions.Fraction` so that thresholds are compared exactly; convert with ``float()`` to print.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import numpy as np

from .geometry import (
    LamValueError,
    delta_from_t,
    kept_mask,
    sq_dist_rows,
    validate_embeddings,
    validate_int,
    validate_map,
    validate_real,
)
from .tables import pct

__all__ = [
    "MergeDistanceStats",
    "OperatingPoint",
    "REPAIR_TOKENS",
    "RemovalResult",
    "break_even_kappa",
    "bfr",
    "corpus_removal",
    "ecr_at",
    "eta",
    "format_ecr",
    "independence_estimate",
    "layer_removal",
    "merge_distance_stats",
    "merge_distances",
    "parse_budget",
    "recall_at_k",
    "recall_at_k_per_query",
    "evidence_hits_at_k",
    "removal",
    "removal_exact",
    "removal_from_texts",
    "removal_of_counts",
    "rsc",
    "to_fraction",
    "validate_taus",
    "weighted_quantile",
]

#: Tokens charged per repair turn in eq. 9 (``Δ = 636.8`` measured tokens per turn, App. E).
REPAIR_TOKENS = 636.8


# ----------------------------------------------------------------------------------------------
# small validators


def to_fraction(value: Any, name: str = "value") -> Fraction:
    """Exact rational form of ``value``: a ``Fraction``/int as is, a string parsed (``"0.999"``,
    ``"999/1000"``), a float through its shortest repr (``Fraction(str(0.999)) == 999/1000``).

    Used for ``τ`` in :func:`ecr_at` (eq. 8) so that ``0.999`` means exactly ``999/1000``.
    """
    if isinstance(value, bool):
        raise LamValueError(f"{name} must be a number or a numeric string, got {value!r}")
    if isinstance(value, Fraction):
        return value
    if isinstance(value, (int, np.integer)):
        return Fraction(int(value))
    if isinstance(value, (float, np.floating)):
        if not math.isfinite(float(value)):
            raise LamValueError(f"{name} must be finite, got {value!r}")
        return Fraction(str(float(value)))
    if isinstance(value, str):
        try:
            return Fraction(value.strip())
        except (ValueError, ZeroDivisionError) as exc:
            raise LamValueError(f"{name} is not a number: {value!r}") from exc
    raise LamValueError(f"{name} must be a number, Fraction or numeric string, got {value!r} ({type(value).__name__})")


# ----------------------------------------------------------------------------------------------
# removal (§2.3, App. B "Accounting", Tables 12, 15)


def removal_exact(original_tokens: int, residual_tokens: int) -> Fraction:
    """Token removal ``(tok(original) - tok(residual)) / tok(original)`` as an exact fraction.

    Both counts are over whole texts (SPEC §3: never a sum of per-piece savings). An empty original
    (0 tokens) with an empty residual has removal ``0``; a residual longer than an empty original
    is an error. A residual longer than a non-empty original gives a negative removal (stubs can
    cost more than they save) and is returned as such.
    """
    o = validate_int(original_tokens, "original_tokens")
    r = validate_int(residual_tokens, "residual_tokens")
    if o == 0:
        if r != 0:
            raise LamValueError(f"residual_tokens = {r} but original_tokens = 0: removal is undefined")
        return Fraction(0)
    return Fraction(o - r, o)


def removal(original_tokens: int, residual_tokens: int) -> float:
    """Token removal ``ρ = 1 - tok(residual)/tok(original)`` as a float (see :func:`removal_exact`)."""
    return float(removal_exact(original_tokens, residual_tokens))


def removal_from_texts(original: str, residual: str, count_tokens: Callable[[str], int]) -> float:
    """Removal of one whole text: ``count_tokens`` is applied once to each full string (SPEC §3)."""
    if not isinstance(original, str) or not isinstance(residual, str):
        raise LamValueError(
            f"original and residual must be str, got {type(original).__name__} and {type(residual).__name__}"
        )
    return removal(count_tokens(original), count_tokens(residual))


@dataclass(frozen=True)
class RemovalResult:
    """Gross and net removal of one run (§2.3: "gross removal and net removal after ... stubs").

    ``gross`` counts the residual without its stub lines, ``net`` with them (SPEC §3); ``stub_cost``
    is ``gross - net``, the share of original tokens spent on stubs (0.69% in the paper).
    """

    original_tokens: int
    residual_tokens: int
    residual_tokens_without_stubs: int

    @property
    def gross(self) -> float:
        return removal(self.original_tokens, self.residual_tokens_without_stubs)

    @property
    def net(self) -> float:
        return removal(self.original_tokens, self.residual_tokens)

    @property
    def stub_cost(self) -> float:
        return float(
            removal_exact(self.original_tokens, self.residual_tokens_without_stubs)
            - removal_exact(self.original_tokens, self.residual_tokens)
        )

    @property
    def context_gain(self) -> float:
        """``1 / (1 - ρ_net)`` (Table 15 "context gain"); ``inf`` when everything is removed."""
        kept = 1.0 - self.net
        return math.inf if kept == 0 else 1.0 / kept

    def to_json(self) -> dict[str, Any]:
        return {
            "original_tokens": self.original_tokens,
            "residual_tokens": self.residual_tokens,
            "residual_tokens_without_stubs": self.residual_tokens_without_stubs,
            "gross": self.gross,
            "net": self.net,
            "stub_cost": self.stub_cost,
        }


def corpus_removal(
    original_tokens: Iterable[int],
    residual_tokens: Iterable[int],
    residual_tokens_without_stubs: Iterable[int] | None = None,
) -> RemovalResult:
    """Token-weighted removal over many trajectories: the sums of whole-text counts (Table 15).

    ``residual_tokens`` include stubs (net); ``residual_tokens_without_stubs`` (gross) defaults to
    ``residual_tokens`` (a layer that emits no stubs). Per-trajectory removals are never averaged.
    """
    o = [validate_int(x, f"original_tokens[{i}]") for i, x in enumerate(original_tokens)]
    r = [validate_int(x, f"residual_tokens[{i}]") for i, x in enumerate(residual_tokens)]
    g = r if residual_tokens_without_stubs is None else [
        validate_int(x, f"residual_tokens_without_stubs[{i}]") for i, x in enumerate(residual_tokens_without_stubs)
    ]
    if not (len(o) == len(r) == len(g)):
        raise LamValueError(
            f"original_tokens, residual_tokens, residual_tokens_without_stubs differ in length: "
            f"{len(o)}, {len(r)}, {len(g)}"
        )
    for i, (a, b) in enumerate(zip(r, g)):
        if b > a:
            raise LamValueError(
                f"residual_tokens_without_stubs[{i}] = {b} exceeds residual_tokens[{i}] = {a} (stubs cost tokens)"
            )
    out = RemovalResult(sum(o), sum(r), sum(g))
    removal_exact(out.original_tokens, out.residual_tokens)  # validates the empty-corpus case
    return out


def removal_of_counts(counts: Sequence[Sequence[int]]) -> RemovalResult | None:
    """:func:`corpus_removal` over ``(original, residual net, residual gross)`` token triples, one
    per trajectory (how ``lam-ref sweep`` and ``lam-ref compare`` keep their counts); ``None`` when
    there are none (no figure, not a vacuous 0 %).

    Examples:
        >>> r = removal_of_counts([(100, 80, 70), (50, 50, 50)])
        >>> round(r.net, 4), round(r.gross, 4), removal_of_counts([])
        (0.1333, 0.2, None)
    """
    if not counts:
        return None
    return corpus_removal([x[0] for x in counts], [x[1] for x in counts], [x[2] for x in counts])


def layer_removal(original_tokens: int, residual_tokens: Mapping[str, int]) -> dict[str, float]:
    """Removal per layer configuration over one common denominator (Table 12).

    ``residual_tokens`` maps a configuration name (``"L1"``, ``"L0"``, ``"L1->L0"``, ``"L0->L1"``, ...)
    to the whole-text token count of its residual; the same ``original_tokens`` is the denominator
    of every row ("same denominator").
    """
    if not isinstance(residual_tokens, Mapping):
        raise LamValueError(f"residual_tokens must be a mapping name -> tokens, got {type(residual_tokens).__name__}")
    return {str(k): removal(original_tokens, v) for k, v in residual_tokens.items()}


def independence_estimate(*removals: float) -> float:
    """Joint removal if layers removed independent tokens: ``1 - Π(1 - ρ_i)`` (Table 12, rejected).

    Table 12: L0 18.04% and L1 13.81% give 29.35%, against 22.97% measured for L1 → L0.
    """
    prod = 1.0
    for i, x in enumerate(removals):
        v = validate_real(x, f"removals[{i}]")
        if not 0.0 <= v <= 1.0:
            raise LamValueError(f"removals[{i}] must be in [0, 1], got {v!r}")
        prod *= 1.0 - v
    return 1.0 - prod


# ----------------------------------------------------------------------------------------------
# merge distances (App. F.2, Table 11)


def merge_distances(embeddings: Any, pi: Any) -> tuple[np.ndarray, np.ndarray]:
    """``(ids, d)`` of every merged chunk: ``d_i = ||e_i - e_π[i]||₂`` by the exact float64 rule (SPEC §2).

    ``ids`` are the ``i`` with ``π[i] != i`` in increasing order. ``π`` must be a valid map (SPEC §1):
    each ``π[i]`` is ``i`` or a smaller id that is itself retained.
    """
    e = validate_embeddings(embeddings, "embeddings")
    p = validate_map(pi, e.shape[0])
    ids = np.flatnonzero(~kept_mask(p))
    if ids.size == 0:
        return ids.astype(np.int64), np.zeros(0, dtype=np.float64)
    return ids.astype(np.int64), np.sqrt(sq_dist_rows(e, ids, e[p[ids]]))


def weighted_quantile(values: Any, weights: Any, q: Any) -> float:
    """Lower weighted quantile: the smallest ``v_j`` (values sorted) whose cumulative weight is ``>= q·W``.

    ``weights`` are non-negative integers (token counts) and ``q`` in ``[0, 1]`` is compared exactly
    (:func:`to_fraction`), so the result is one of the values, never an interpolation. ``q = 0.5``
    is the lower weighted median; ``q = 1`` is the largest value of positive weight.
    """
    v, w = _values_weights(values, weights)
    if v.size == 0:
        raise LamValueError("values is empty: a quantile needs at least one value")
    qq = to_fraction(q, "q")
    if not 0 <= qq <= 1:
        raise LamValueError(f"q must be in [0, 1], got {q!r}")
    order = np.argsort(v, kind="stable")
    total = int(w.sum())
    target = qq * total
    cum = 0
    for j in order.tolist():
        cum += int(w[j])
        if w[j] > 0 and cum >= target:
            return float(v[j])
    return float(v[order[-1]])  # unreachable when total > 0


def _values_weights(values: Any, weights: Any) -> tuple[np.ndarray, np.ndarray]:
    v = np.asarray(values, dtype=np.float64).reshape(-1) if np.size(values) else np.zeros(0)
    w_raw = np.asarray(weights).reshape(-1) if np.size(weights) else np.zeros(0, dtype=np.int64)
    if v.shape != w_raw.shape:
        raise LamValueError(f"values and weights differ in length: {v.size} vs {w_raw.size}")
    if v.size and not np.isfinite(v).all():
        raise LamValueError(f"values has a non-finite entry at {int(np.flatnonzero(~np.isfinite(v))[0])}")
    if w_raw.size and not np.issubdtype(w_raw.dtype, np.integer):
        raise LamValueError(f"weights must be integer token counts, got dtype {w_raw.dtype}")
    w = w_raw.astype(np.int64)
    if (w < 0).any():
        raise LamValueError(f"weights[{int(np.flatnonzero(w < 0)[0])}] is negative")
    if v.size and int(w.sum()) == 0:
        raise LamValueError("weights sum to 0: no token carries the distribution")
    return v, w


@dataclass(frozen=True)
class MergeDistanceStats:
    """Token-weighted distribution of the substitution distances ``d_i`` of one run (Table 11).

    ``delta_hat`` is ``max d_i`` (``0.0`` when nothing merged; SPEC §1, ``THM1``), ``median`` and
    ``p99`` are lower weighted quantiles (:func:`weighted_quantile`) over merged tokens, ``mean`` is
    the token-weighted mean and ``mean_over_delta = mean / δ`` (Table 11's "mean/δ"),
    ``share_below_half_delta`` the fraction of merged tokens with ``d_i < δ/2`` (App. F.2).
    Quantile fields are ``None`` when nothing merged.
    """

    t: float
    delta: float
    merged: int
    merged_tokens: int
    delta_hat: float
    median: float | None
    p99: float | None
    mean: float | None
    mean_over_delta: float | None
    share_below_half_delta: float | None

    @property
    def within_bound(self) -> bool:
        """``δ̂ <= δ`` (``THM1``; always true for a sound compactor)."""
        return self.delta_hat <= self.delta

    def to_json(self) -> dict[str, Any]:
        return {k: getattr(self, k) for k in self.__dataclass_fields__}


def merge_distance_stats(distances: Any, tokens: Any, t: float) -> MergeDistanceStats:
    """Token-weighted statistics of merge distances ``d_i`` with weights ``tokens_i`` (Table 11, App. F.2).

    ``distances[k]`` and ``tokens[k]`` belong to the same merged chunk (e.g. from :func:`merge_distances`
    and the pipeline's chunk token counts); ``t`` is the merge threshold, ``δ = sqrt(2 - 2t)`` (``EQ1``).
    """
    delta = delta_from_t(t)
    v, w = _values_weights(distances, tokens)
    if (v < 0).any():
        raise LamValueError(f"distances[{int(np.flatnonzero(v < 0)[0])}] is negative")
    if v.size == 0:
        return MergeDistanceStats(float(t), delta, 0, 0, 0.0, None, None, None, None, None)
    total = int(w.sum())
    mean = float(np.dot(v, w.astype(np.float64)) / total)
    below = int(w[v < delta / 2.0].sum())
    return MergeDistanceStats(
        t=float(t),
        delta=delta,
        merged=int(v.size),
        merged_tokens=total,
        delta_hat=float(v.max()),
        median=weighted_quantile(v, w, Fraction(1, 2)),
        p99=weighted_quantile(v, w, Fraction(99, 100)),
        mean=mean,
        mean_over_delta=mean / delta if delta > 0 else None,
        share_below_half_delta=below / total,
    )


# ----------------------------------------------------------------------------------------------
# ECR@τ (eq. 8, Table 17)


@dataclass(frozen=True)
class OperatingPoint:
    """One setting of a method (a threshold ``t``, masking's ``k``): net removal ``rho`` and the
    evidence counts that give its exact micro retention ``lines_kept / lines_witnessed`` (eq. 8)."""

    label: str
    rho: float
    lines_kept: int
    lines_witnessed: int

    def __post_init__(self) -> None:
        validate_real(self.rho, "rho")
        k = validate_int(self.lines_kept, "lines_kept")
        w = validate_int(self.lines_witnessed, "lines_witnessed")
        if k > w:
            raise LamValueError(f"lines_kept = {k} exceeds lines_witnessed = {w} ({self.label!r})")

    @property
    def micro(self) -> Fraction:
        """Exact micro retention; ``1`` when nothing is witnessed."""
        return Fraction(self.lines_kept, self.lines_witnessed) if self.lines_witnessed else Fraction(1)


def ecr_at(points: Iterable[OperatingPoint], tau: Any) -> float | None:
    """``ECR@τ = max{ρ(m) : m ∈ M, micro(m) >= τ}`` (eq. 8); ``None`` ("—") when no point qualifies.

    The comparison ``micro(m) >= τ`` is exact: ``micro`` is a ``Fraction`` of line counts and ``τ``
    is converted by :func:`to_fraction` (a float through ``Fraction(str(τ))``), so at ``τ = 0.999``
    over 6,276 lines a point losing 6 lines qualifies and one losing 7 does not (SPEC §12).
    """
    tt = to_fraction(tau, "tau")
    if not 0 <= tt <= 1:
        raise LamValueError(f"tau must be in [0, 1], got {tau!r}")
    best: float | None = None
    for i, m in enumerate(points):
        if not isinstance(m, OperatingPoint):
            raise LamValueError(f"points[{i}] must be an OperatingPoint, got {type(m).__name__}")
        if m.micro >= tt and (best is None or float(m.rho) > best):
            best = float(m.rho)
    return best


def validate_taus(values: Iterable[Any], name: str = "--taus") -> dict[str, Fraction]:
    """The ECR levels τ as exact fractions (SPEC §12), keyed by their text (repeats dropped), each
    in [0, 1]; else a :class:`LamValueError` naming ``name`` and the value.

    Examples:
        >>> validate_taus(["1.0", "999/1000", "1.0"])
        {'1.0': Fraction(1, 1), '999/1000': Fraction(999, 1000)}
    """
    taus: dict[str, Fraction] = {}
    for s in dict.fromkeys(values):
        tau = to_fraction(s, name)
        if not 0 <= tau <= 1:
            raise LamValueError(f"{name} must be in [0, 1], got {s!r}")
        taus[s] = tau
    return taus


def format_ecr(value: float | None, digits: int = 2) -> str:
    """``"—"`` for ``None``, else a percentage with ``digits`` decimals (Table 17's cells;
    :func:`lam_ref.tables.pct`)."""
    return pct(value, digits)


# ----------------------------------------------------------------------------------------------
# RSC (eq. 10), BFR@B (Table 19), η(κ) (eq. 9, Table 18)


def rsc(resolved: Sequence[bool], intact: Sequence[bool]) -> Fraction:
    """Conditional resolve-rate ceiling (eq. 10): ``|{resolved and intact}| / n_trajectories``.

    ``resolved[j]`` is the recorded outcome of trajectory ``j``; ``intact[j]`` that it retains every
    witnessed evidence line (true when it has none). The denominator counts all trajectories, so
    with nothing lost ``RSC`` equals the recorded resolve rate (the harness check of App. F.6).
    """
    res = _bools(resolved, "resolved")
    itc = _bools(intact, "intact")
    if len(res) != len(itc):
        raise LamValueError(f"resolved and intact differ in length: {len(res)} vs {len(itc)}")
    if not res:
        raise LamValueError("resolved is empty: RSC needs at least one trajectory")
    return Fraction(sum(1 for a, b in zip(res, itc) if a and b), len(res))


def _bools(seq: Any, name: str) -> list[bool]:
    out = []
    for i, x in enumerate(seq):
        if not isinstance(x, (bool, np.bool_)):
            raise LamValueError(f"{name}[{i}] must be a bool, got {x!r}")
        out.append(bool(x))
    return out


_BUDGET = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([kKmM]?)\s*$")


def parse_budget(budget: int | str) -> int:
    """A token budget: an int, or a string like ``"16K"`` with ``K = 1000`` and ``M = 10**6`` (Table 19)."""
    if isinstance(budget, bool):
        raise LamValueError(f"budget must be a positive token count, got {budget!r}")
    if isinstance(budget, (int, np.integer)):
        b = int(budget)
    elif isinstance(budget, str):
        m = _BUDGET.match(budget)
        if not m:
            raise LamValueError(f"budget must look like 16000 or '16K', got {budget!r}")
        mult = {"": 1, "k": 1000, "m": 1_000_000}[m.group(2).lower()]
        value = Fraction(m.group(1)) * mult
        if value.denominator != 1:
            raise LamValueError(f"budget must be a whole number of tokens, got {budget!r}")
        b = int(value)
    else:
        raise LamValueError(f"budget must be an int or a string like '16K', got {budget!r}")
    if b < 1:
        raise LamValueError(f"budget must be >= 1 token, got {budget!r}")
    return b


def bfr(stream_tokens: Iterable[int], budget: int | str) -> Fraction:
    """Budget-feasibility rate ``BFR@B`` (Table 19): share of trajectories whose residual observation
    stream has ``tokens <= B`` (``B`` via :func:`parse_budget`, ``K = 1000``)."""
    b = parse_budget(budget)
    toks = [validate_int(x, f"stream_tokens[{i}]") for i, x in enumerate(stream_tokens)]
    if not toks:
        raise LamValueError("stream_tokens is empty: BFR needs at least one trajectory")
    return Fraction(sum(1 for x in toks if x <= b), len(toks))


def eta(rho: float, repairs: int, kappa: float, total_tokens: int, repair_tokens: float = REPAIR_TOKENS) -> float:
    """Net reduction after repair turns, ``η(κ) = ρ - repairs·κ·Δ/T`` (eq. 9, Table 18).

    ``repairs`` is the number of lost evidence lines, ``κ`` the repair turns charged per lost line,
    ``Δ = repair_tokens`` (636.8) and ``T = total_tokens`` the observation tokens of the corpus
    (9,017,033 in the paper).
    """
    r = validate_real(rho, "rho")
    n = validate_int(repairs, "repairs")
    k = validate_real(kappa, "kappa")
    if k < 0:
        raise LamValueError(f"kappa must be >= 0, got {k!r}")
    t = validate_int(total_tokens, "total_tokens")
    if t == 0:
        raise LamValueError("total_tokens must be >= 1, got 0")
    d = validate_real(repair_tokens, "repair_tokens")
    if d < 0:
        raise LamValueError(f"repair_tokens must be >= 0, got {d!r}")
    return r - n * k * d / t


def break_even_kappa(
    rho: float, repairs: int, rho_ref: float, repairs_ref: int, total_tokens: int, repair_tokens: float = REPAIR_TOKENS
) -> float | None:
    """The ``κ`` at which ``η`` of a method equals ``η`` of a reference (Table 18, "break-even κ vs. ours").

    Solves ``ρ - n·κ·Δ/T = ρ_ref - n_ref·κ·Δ/T``; ``None`` when the lines are parallel (equal
    repairs) or the crossing is at a negative ``κ``.
    """
    r, rr = validate_real(rho, "rho"), validate_real(rho_ref, "rho_ref")
    n, nr = validate_int(repairs, "repairs"), validate_int(repairs_ref, "repairs_ref")
    t = validate_int(total_tokens, "total_tokens")
    if t == 0:
        raise LamValueError("total_tokens must be >= 1, got 0")
    d = validate_real(repair_tokens, "repair_tokens")
    if n == nr or d <= 0:
        return None
    k = (r - rr) / ((n - nr) * d / t)
    return k if k >= 0 else None


# ----------------------------------------------------------------------------------------------
# retrieval after substitution (App. F.2, Table 11 "R@10", COR1)


def recall_at_k_per_query(chunks: Any, queries: Any, pi: Any, k: int) -> np.ndarray:
    """Per-query recall@k of retrieval over the retained set, against the full index (Table 11).

    For a unit query ``q`` the full index's top-``k`` ``T`` ranks all chunks by ``q·e`` (float64,
    descending; ties to the lower id); the retained index ranks only the chunks with ``π[i] = i``
    the same way, giving ``T_R``. Recall is ``|{x ∈ T : π(x) ∈ T_R}| / |T|``: a true top-k chunk
    counts as recovered when its representative is retrieved ("compares with the full index's
    top-10 after applying the substitution map"). With ``π`` the identity it is exactly 1.

    ``chunks`` (N, D) and ``queries`` (Q, D) are unit rows (SPEC §2 validation); in App. F.2 the
    queries are the trajectory's own action texts, encoded with the chunks' encoder.
    """
    e = validate_embeddings(chunks, "chunks", allow_empty=False)
    qs = validate_embeddings(queries, "queries", dim=e.shape[1])
    p = validate_map(pi, e.shape[0])
    kk = validate_int(k, "k")
    if kk < 1:
        raise LamValueError(f"k must be >= 1, got {kk}")
    if qs.shape[0] == 0:
        return np.zeros(0, dtype=np.float64)
    scores = qs.astype(np.float64) @ e.astype(np.float64).T  # (Q, N)
    kept = np.flatnonzero(kept_mask(p))
    out = np.empty(qs.shape[0], dtype=np.float64)
    for j in range(qs.shape[0]):
        top, top_r = _top_k(scores[j], kept, kk)
        out[j] = np.isin(p[top], top_r).sum() / top.size
    return out


def _top_k(s: np.ndarray, kept: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """The top-``k`` ids of one query's scores ``s`` over all chunks and over ``kept`` (descending
    score, ties to the lower id): the one ranking of every retrieval metric here."""
    top = np.lexsort((np.arange(s.shape[0]), -s))[:k]
    top_r = kept[np.lexsort((kept, -s[kept]))[:k]]
    return top, top_r


def evidence_hits_at_k(chunks: Any, queries: Any, pi: Any, k: int, targets: Sequence[Any]) -> tuple[np.ndarray, np.ndarray]:
    """Per query, whether an evidence chunk is retrieved in the top-``k``: ``(full, substituted)``
    (LoCoMo QA, App. K.1: each question's evidence turns are its targets).

    Ranking is that of :func:`recall_at_k_per_query`. ``full[j]``: some chunk of ``targets[j]``
    is in the full index's top-``k``. ``substituted[j]``: some chunk ``x`` of ``targets[j]`` has
    ``π(x)`` in the top-``k`` over the kept chunks: a deleted chunk is retrieved through its
    representative. ``chunks`` (N, D) and ``queries`` (Q, D) are unit rows; ``targets[j]`` are
    chunk ids (an empty target is never hit).
    """
    e = validate_embeddings(chunks, "chunks", allow_empty=False)
    qs = validate_embeddings(queries, "queries", dim=e.shape[1])
    n = e.shape[0]
    p = validate_map(pi, n)
    kk = validate_int(k, "k")
    if kk < 1:
        raise LamValueError(f"k must be >= 1, got {kk}")
    if len(targets) != qs.shape[0]:
        raise LamValueError(f"targets has {len(targets)} entries for {qs.shape[0]} queries")
    tgts = []
    for j, t in enumerate(targets):
        arr = np.asarray(t, dtype=np.int64).reshape(-1)
        if arr.size and (arr.min() < 0 or arr.max() >= n):
            raise LamValueError(f"targets[{j}] holds a chunk id outside [0, {n}): {arr.tolist()}")
        tgts.append(arr)
    scores = qs.astype(np.float64) @ e.astype(np.float64).T
    kept = np.flatnonzero(kept_mask(p))
    full = np.zeros(qs.shape[0], dtype=bool)
    sub = np.zeros(qs.shape[0], dtype=bool)
    for j, tgt in enumerate(tgts):
        if tgt.size:
            top, top_r = _top_k(scores[j], kept, kk)
            full[j] = bool(np.isin(tgt, top).any())
            sub[j] = bool(np.isin(p[tgt], top_r).any())
    return full, sub


def recall_at_k(chunks: Any, queries: Any, pi: Any, k: int = 10) -> float:
    """Mean over queries of :func:`recall_at_k_per_query` (Table 11 "R@10"; ``nan`` is never
    returned: zero queries raise)."""
    per = recall_at_k_per_query(chunks, queries, pi, k)
    if per.size == 0:
        raise LamValueError("queries is empty: recall@k needs at least one query")
    return float(per.mean())

