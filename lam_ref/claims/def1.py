r"""DEF1: δ-substitution (paper §2.4, Definition 1).

Measured on a set: the map of the compactor under test is a δ-substitution by the exact rule,
every representative has a smaller id (SPEC §1), and the ``δ̂`` it reports is the measured one.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from ..geometry import (
    delta_from_t,
    delta_sq,
    kept_mask,
    sq_dist_rows,
    validate_embeddings,
    validate_map,
    validate_threshold,
)
from ._base import Claim, Measurement, fmt

__all__ = ["CLAIM", "SubstitutionCheck", "check_substitution", "measure_substitution"]


@dataclass(frozen=True)
class SubstitutionCheck:
    """Result of :func:`measure_substitution`: ``valid`` iff ``(R, π)`` is a δ-substitution (DEF1).

    ``ordered`` additionally says every representative has a smaller id (SPEC §1 convention);
    ``problems`` lists the first violations found (row ids named).
    """

    valid: bool
    ordered: bool
    n: int
    kept: int
    delta: float
    delta_hat: float
    problems: tuple[str, ...]

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def measure_substitution(embeddings: Any, pi: Any, t: float) -> SubstitutionCheck:
    """Check Definition 1 (claim ``DEF1``): ``R = {i : π[i] = i}``, ``π`` maps into ``R``
    (``π|_R = id``) and ``sq(e_i, e_π[i]) <= δ²`` by the exact rule, for every row.

    Args:
        embeddings: ``(N, D)`` unit rows.
        pi: the map, ``N`` integer ids (violations are reported, not raised).
        t: cosine threshold.

    Returns:
        A :class:`SubstitutionCheck` with the measured bound ``δ̂ = max ||e_i - e_π[i]||``
        (0.0 if nothing merged, §C.5).

    Raises:
        LamValueError: for bad rows, a bad threshold, or a map of the wrong shape or dtype.

    Examples:
        >>> e = np.array([[1, 0], [0.6, 0.8]], dtype=np.float32)
        >>> measure_substitution(e, [0, 0], 0.5).valid
        True
        >>> measure_substitution(e, [0, 0], 0.9).problems[0][:30]
        'row 1 is 0.894427191 from pi[1'
    """
    e = validate_embeddings(embeddings)
    t = validate_threshold(t)
    n = e.shape[0]
    p = validate_map(pi, n, structure=False)
    problems: list[str] = []
    ids = np.arange(n, dtype=np.int64)
    in_range = (p >= 0) & (p < n)
    if not in_range.all():
        i = int(np.flatnonzero(~in_range)[0])
        problems.append(f"pi[{i}] = {int(p[i])} is not a row id")
        return SubstitutionCheck(False, False, n, 0, delta_from_t(t), math.nan, tuple(problems))
    kept = kept_mask(p)
    not_into_r = ~kept[p]
    if not_into_r.any():
        i = int(np.flatnonzero(not_into_r)[0])
        problems.append(f"pi[{i}] = {int(p[i])} is not retained (pi[{int(p[i])}] = {int(p[p[i]])})")
    sq = sq_dist_rows(e, ids, e[p])
    d2 = delta_sq(t)
    far = sq > d2
    if far.any():
        i = int(np.flatnonzero(far)[0])
        problems.append(f"row {i} is {math.sqrt(sq[i]):.9g} from pi[{i}] = {int(p[i])}, more than delta = {math.sqrt(d2):.9g}")
    merged = ~kept
    delta_hat = float(np.sqrt(sq[merged].max())) if merged.any() else 0.0
    ordered = bool(np.all(p <= ids))
    return SubstitutionCheck(not problems, ordered, n, int(kept.sum()), math.sqrt(d2), delta_hat, tuple(problems))


#: Former name of :func:`measure_substitution` (``check_*`` now means "raises").
check_substitution = measure_substitution


def measure(ctx) -> Measurement:
    """Definition 1 on the map under test, and the ``δ̂`` the compactor reported."""
    chk = ctx.check
    values = {"delta": ctx.delta, "delta_hat": chk.delta_hat, "kept": chk.kept, "n": chk.n,
              "valid": chk.valid, "ordered": chk.ordered, "delta_hat_reported": ctx.result.delta_hat}
    return Measurement(values, "; ".join(chk.problems))


def holds(m: dict[str, Any]) -> bool:
    """A valid, ordered δ-substitution whose reported ``δ̂`` is the measured one (to 1e-15)."""
    return bool(m["valid"] and m["ordered"] and math.isclose(m["delta_hat"], m["delta_hat_reported"], rel_tol=0, abs_tol=1e-15))


AGGREGATION = {"delta": "same", "delta_hat": "max", "kept": "sum", "n": "sum", "valid": "all", "ordered": "all",
               "delta_hat_reported": "max"}


def describe(m: dict[str, Any]) -> tuple[str, str]:
    return f"δ̂ = {fmt(m['delta_hat'])}, |R| = {m['kept']} of {m['n']}", f"δ = {fmt(m['delta'])}"


CLAIM = Claim(
    "DEF1",
    "δ-substitution",
    r"(R,\pi)\ \text{with}\ R\subseteq S,\ \pi:S\to R,\ \pi|_R=\mathrm{id},\ \|x-\pi(x)\|_2\le\delta\ \ \forall x\in S",
    "§2.4, Definition 1",
    ("lam_ref.substitution.oracle", "lam_ref.substitution.substitute", "lam_ref.claims.def1.measure_substitution"),
    measure=measure,
    holds=holds,
    aggregation=AGGREGATION,
    describe=describe,
)
