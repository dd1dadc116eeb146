"""Claim checks on data: the theory of paper §2.4 and Appendix C, measured on a given set of rows.

Each claim of the registry (:mod:`lam_ref.claims`) that is checked on data carries its own
``measure``, the rule that decides whether it holds, its aggregation over sets and its
description (one module per claim, :mod:`lam_ref.claims`). :func:`verify_set` runs the compactor
under test on one set (one trajectory, or one ``.npy`` file) and loops over those claims;
:func:`aggregate` combines sets claim by claim into the table that ``lam-ref verify`` prints.
Tolerances are stated where floating point enters; the merge decision itself is always the
exact rule of :mod:`lam_ref.geometry`.

The theory functions the claims measure (``measure_substitution``, ``score_deficits``, ...) are
:mod:`lam_ref.theory`.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

from .claims import Claim, ClaimResult, combine, measured_claims, registry
from .claims._context import SetContext
from .geometry import validate_embeddings, validate_threshold
from .substitution import substitute

__all__ = [
    "ClaimResult",
    "SetReport",
    "aggregate",
    "describe",
    "table_rows",
    "verify_set",
]

@dataclass
class SetReport:
    """All claim results for one set of rows (one trajectory or one file)."""

    name: str
    n: int
    dim: int
    t: float
    mode: str
    results: dict[str, ClaimResult]
    wall_time_s: float

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "n": self.n,
            "dim": self.dim,
            "t": self.t,
            "mode": self.mode,
            "wall_time_s": self.wall_time_s,
            "claims": [r.to_json() for r in self.results.values()],
        }

def verify_set(
    embeddings: Any,
    t: float = 0.95,
    *,
    name: str = "set",
    r: int = 4,
    rel: float = 0.2,
    exhaustive: bool = False,
    n_queries: int = 256,
    top_k: int = 10,
    exact_limit: int = 200,
    time_limit: float = 20.0,
    hull_limit: int = 500,
    weights: Any | None = None,
    seed: int = 0,
    normalize: bool = False,
    claims: list[Claim] | None = None,
) -> SetReport:
    """Run every claim check on one set (SPEC §11).

    The compactor under test is Algorithm 2 in the given mode (banded ``r``/``rel`` by default,
    or exhaustive); ``PROP2``/``THM2``/``COR3`` concern greedy first-occurrence itself and use
    the exhaustive oracle. Each claim of :func:`lam_ref.claims.measured_claims` is measured on
    a shared :class:`~lam_ref.claims._context.SetContext` and judged by its own rule.

    Args:
        embeddings: ``(N, D)`` unit rows, ``N >= 1``.
        t: cosine threshold.
        name: the set's name in the report.
        r: band width of the compactor under test.
        rel: quantizer step of the compactor under test.
        exhaustive: test exhaustive Algorithm 2 instead of banded.
        n_queries: random unit queries (``THM1``, ``HULL``, ``COR1``, ``PROP1``).
        top_k: ``k`` of ``COR1``/``PROP1``.
        exact_limit: exact covering and packing numbers (MILP) when ``N <= exact_limit``.
        time_limit: seconds per MILP.
        hull_limit: deleted rows solved for ``HULL``.
        weights: token counts per row; enable the exact ``T(δ)`` of eq. 5 (``COR3``).
        seed: seed of the random queries and sources.
        normalize: rescale rows to unit norm first.
        claims: the claims to measure (default: all of :func:`~lam_ref.claims.measured_claims`).

    Returns:
        A :class:`SetReport` with one :class:`ClaimResult` per measured claim.

    Raises:
        LamValueError: for bad rows or a bad threshold.

    Examples:
        >>> import numpy as np
        >>> e = np.array([[1, 0], [0.6, 0.8], [0, 1]], dtype=np.float32)
        >>> rep = verify_set(e, 0.5, n_queries=8, exhaustive=True)
        >>> sorted(c for c, res in rep.results.items() if res.passed is False)
        []
        >>> rep.results["DEF1"].measured["kept"]
        2
    """
    start = time.perf_counter()
    t = validate_threshold(t)
    e = validate_embeddings(embeddings, normalize=normalize, allow_empty=False)
    n, dim = e.shape
    res = substitute(e, t, r=r, rel=rel, exhaustive=exhaustive)
    greedy = res if exhaustive else substitute(e, t, exhaustive=True)
    ctx = SetContext(e, t, res, greedy, r=r, rel=rel, exhaustive=exhaustive, n_queries=n_queries, top_k=top_k,
                     exact_limit=exact_limit, time_limit=time_limit, hull_limit=hull_limit, weights=weights, seed=seed)
    out: dict[str, ClaimResult] = {}
    for claim in measured_claims(claims):
        measurement = claim.measure(ctx)
        if measurement is not None:
            out[claim.id] = claim.result(measurement)
    mode = "exhaustive" if exhaustive else f"banded r={r} rel={rel}"
    return SetReport(name, n, dim, t, mode, out, time.perf_counter() - start)

def aggregate(reports: list[SetReport]) -> list[ClaimResult]:
    """Combine per-set results claim by claim (:func:`lam_ref.claims.combine`): a claim passes
    iff it passed on every set; each measured key by the claim's declared aggregation (counts add
    up, within-trajectory scope: ``N`` of the corpus is the sum of per-trajectory ``N``; bounds
    and deficits take the max, energies the min); rates and bits are recomputed from the sums.

    Raises:
        ValueError: when a measured key has no declared aggregation.

    Examples:
        >>> import numpy as np
        >>> e = np.array([[1, 0], [0.6, 0.8], [0, 1]], dtype=np.float32)
        >>> reps = [verify_set(e, 0.5, n_queries=8), verify_set(e[:2], 0.5, n_queries=8)]
        >>> {r.claim: r.measured for r in aggregate(reps)}["DEF1"]["n"]
        5
    """
    if not reports:
        return []
    reg = registry()
    order = list(reports[0].results)
    for rep in reports[1:]:
        order += [cid for cid in rep.results if cid not in order]
    out: list[ClaimResult] = []
    for cid in order:
        rows = [rep.results[cid] for rep in reports if cid in rep.results]
        out.append(combine(reg[cid], rows))
    return out

def describe(result: ClaimResult) -> tuple[str, str]:
    """``(measured, bound)`` strings of one claim row (the CLI table), by the claim's own
    ``describe``; the raw measured values for a claim without one."""
    claim = registry().get(result.claim)
    if claim is None or claim.describe is None:
        return str(result.measured), ""
    return claim.describe(result.measured)

def table_rows(results: list[ClaimResult]) -> list[list[str]]:
    """Rows ``[claim, measured, bound, result]`` for :func:`lam_ref.tables.table`; a claim's note
    (why a part was not measured, issue 23 §6) follows its measurement in brackets."""
    rows = []
    for r in results:
        measured, bound = describe(r)
        if r.note:
            measured = f"{measured} [{r.note}]"
        verdict = "info" if r.passed is None else ("pass" if r.passed else "FAIL")
        rows.append([r.claim, measured, bound, verdict])
    return rows
