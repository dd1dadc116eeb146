"""The records shared by every claim module: :class:`Claim`, :class:`Measurement`,
:class:`ClaimResult`, and the per-key aggregation over sets (SPEC §11).

A claim module (``lam_ref/claims/<id>.py``) defines ``CLAIM = Claim(...)``. A claim that
``lam-ref verify`` checks on data passes four parts to its record:

* ``measure(ctx)``: what is measured on one set (a :class:`~lam_ref.claims._context.SetContext`),
  returned as a :class:`Measurement` (or ``None``: not measured on this set);
* ``holds(measured)``: the rule that decides whether the claim holds, a pure function of the
  measured numbers (``None`` for an informational row);
* ``aggregation``: for every measured key, how it combines over sets (see :data:`AGGREGATORS`);
  an unknown key is an error, never a silent default; ``finish(measured)`` recomputes the
  derived quantities (rates, bits) from the combined counts;
* ``describe(measured)``: the ``(measured, bound)`` strings of the printed table.

A claim without ``measure`` is metadata only (checked by its tests and proofs, skipped by
``lam-ref verify``): it has no module, only an entry of :data:`lam_ref.claims.metadata.CLAIMS`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, NamedTuple

__all__ = ["AGGREGATORS", "Claim", "ClaimResult", "Measurement", "combine", "fmt"]



class Measurement(NamedTuple):
    """What one claim measured on one set: ``values`` (name → number, bool, string or ``None``)
    and a ``note`` for the reader (empty if none)."""

    values: dict[str, Any]
    note: str = ""


@dataclass
class ClaimResult:
    """One row of the verify table: the claim, what was measured, and whether it held.

    ``passed`` is ``None`` for informational rows (e.g. ``C4`` on data where DSU happens to be
    a valid substitution). ``measured`` maps quantity names to numbers (``None``: not computed).
    """

    claim: str
    passed: bool | None
    measured: dict[str, Any] = field(default_factory=dict)
    note: str = ""

    def to_json(self) -> dict[str, Any]:
        return {"claim": self.claim, "passed": self.passed, "measured": self.measured, "note": self.note}


def _same(vals: list[Any]) -> Any:
    if any(v != vals[0] for v in vals[1:]):
        raise ValueError(f"a setting differs between sets: {vals!r}")
    return vals[0]


#: How a measured key combines over sets: counts ``sum`` (within-trajectory scope, SPEC §1:
#: the corpus's ``N`` is the sum of per-trajectory ``N``), bounds and deficits ``max``,
#: energies and slacks ``min``, flags ``all``, settings ``same`` (equal on every set).
AGGREGATORS: dict[str, Callable[[list[Any]], Any]] = {
    "sum": sum,
    "max": max,
    "min": min,
    "all": lambda vals: all(bool(v) for v in vals),
    "same": _same,
}


@dataclass(frozen=True)
class Claim:
    """One claim: ``id`` (as used in ``@pytest.mark.claim``), a short ``title``, the
    ``statement`` in LaTeX (math mode, without delimiters), the ``location`` in the paper (or
    ``SPEC §n`` / "beyond the paper"), and ``implements``: dotted names of the functions or
    classes that realise or check it. The optional parts ``measure``, ``holds``,
    ``aggregation``, ``finish`` and ``describe`` make it a claim ``lam-ref verify`` checks on
    data (module docstring). ``rank`` places it on the claims page and in verify's table
    (ascending, ties by id; the paper's order, measured claims first)."""

    id: str
    title: str
    statement: str
    location: str
    implements: tuple[str, ...]
    origin: str = "paper"
    note: str = ""
    measure: Callable[[Any], Measurement | None] | None = None
    holds: Callable[[dict[str, Any]], bool | None] | None = None
    aggregation: Mapping[str, str] = field(default_factory=dict, hash=False, compare=False)
    finish: Callable[[dict[str, Any]], None] | None = None
    describe: Callable[[dict[str, Any]], tuple[str, str]] | None = None
    rank: int = 0

    @property
    def measured_on_data(self) -> bool:
        """Whether ``lam-ref verify`` measures this claim on a set (it has a ``measure``)."""
        return self.measure is not None

    def result(self, measurement: Measurement) -> ClaimResult:
        """The verify row of one set: the measured values and the verdict of :attr:`holds`."""
        if self.holds is None:
            raise ValueError(f"claim {self.id} has a measure but no rule (holds)")
        return ClaimResult(self.id, self.holds(measurement.values), measurement.values, measurement.note)


def combine(claim: Claim, rows: list[ClaimResult]) -> ClaimResult:
    """Combine one claim's rows over sets: it passes iff it passed on every set (``None`` if
    informational everywhere); each measured key by ``claim.aggregation[key]`` (a key without a
    rule raises ``ValueError``); ``None`` anywhere gives ``None``; then ``claim.finish``.

    Examples:
        >>> from lam_ref.claims import registry
        >>> a = ClaimResult("GEMLINK", True, {"energy": 0.9, "bound_delta_hat": 0.8,
        ...     "bound_delta": 0.7, "min_margin": 0.1, "norm_slack": 1e-12})
        >>> b = ClaimResult("GEMLINK", True, {"energy": 0.95, "bound_delta_hat": 0.85,
        ...     "bound_delta": 0.75, "min_margin": 0.1, "norm_slack": 1e-12})
        >>> combine(registry()["GEMLINK"], [a, b]).measured["energy"]
        0.9
    """
    if not rows:
        raise ValueError(f"claim {claim.id}: nothing to combine")
    flags = [r.passed for r in rows if r.passed is not None]
    passed = None if not flags else all(flags)
    merged: dict[str, Any] = {}
    for key in rows[0].measured:
        rule = claim.aggregation.get(key)
        if rule not in AGGREGATORS:
            raise ValueError(f"claim {claim.id}: no aggregation rule for measured key {key!r} (got {rule!r})")
        vals = [r.measured.get(key) for r in rows]
        merged[key] = None if any(v is None for v in vals) else AGGREGATORS[rule](vals)
    if claim.finish is not None:
        claim.finish(merged)
    notes = sorted({r.note for r in rows if r.note})
    return ClaimResult(claim.id, passed, merged, "; ".join(notes)[:200])


def fmt(x: Any, digits: int = 4) -> str:
    """A measured value for the table: ``—`` for ``None``, yes/no, integers as such, floats
    with ``digits`` decimals (significant digits below 1e-3)."""
    if x is None:
        return "—"
    if isinstance(x, bool):
        return "yes" if x else "no"
    if isinstance(x, int):
        return str(x)
    return f"{x:.{digits}g}" if abs(x) < 1e-3 and x != 0 else f"{x:.{digits}f}"
