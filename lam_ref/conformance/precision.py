"""Precision profiles and the replay judge: how a π or a kept set is held to the greedy rule (SPEC §2.2).

Two precision profiles exist (SPEC §2.2):

* ``float64-exact`` (the default): every pair is decided by ``sq <= δ²`` in float64; the tie
  band is empty.
* ``float32-cosine`` (declared with ``PRECISION = "float32-cosine"``): an implementation that
  normalizes its rows and compares a float32 cosine with ``t``. Pairs whose exact ``sq`` lies
  within :func:`cosine_f32_band_sq` of ``δ²`` are in the **tie band**: either decision is
  accepted there; every other pair is judged exactly.

:func:`judge` replays Algorithm 2 on the implementation's *own* earlier decisions: row ``i`` is
judged given the rows the implementation kept before it, so one in-band decision is not blamed
for the different (but correct) decisions that follow from it. With an empty band this is
exactly ``π == oracle`` (by induction over the rows). Each departure is a :class:`Finding` whose
``property`` is a word of :data:`lam_ref.conformance.diagnosis.VOCABULARY`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from ..geometry import TIE_BAND, delta_sq, sq_dist_rows

__all__ = [
    "PRECISIONS",
    "U32",
    "Finding",
    "band_for",
    "cosine_f32_band_sq",
    "found_pair_findings",
    "gamma",
    "judge",
    "norm_deviation",
]

#: The precision profiles an implementation may declare (``PRECISION = ...``; default the first).
PRECISIONS = ("float64-exact", "float32-cosine")
#: The unit roundoff of float32 (round to nearest).
U32 = 2.0**-24


def gamma(n: int, u: float = U32) -> float:
    """Higham's ``γ_n = n u / (1 - n u)``: the relative error bound of an n-term float sum or dot product."""
    if n * u >= 1:
        raise ValueError(f"gamma: n = {n} too large for u = {u!r}")
    return n * u / (1.0 - n * u)


def cosine_f32_band_sq(d: int, nu: float = 0.0) -> float:
    """Half-width, in ``sq``, of the float32-cosine tie band for dimension ``d`` (SPEC §2.2).

    ``ε_D = γ_D (1 + γ_{D+2})² + 2 γ_{D+2} + γ_{D+2}²`` bounds ``|fl32(â·b̂) - cos(a, b)|`` when each
    row is normalized in float32 and the dot product is summed in float32 (any order); ``u`` more
    covers ``t`` rounded to float32. In ``sq = 2 - 2 cos`` that is ``2 (ε_D + u)``. Rows that are
    unit only to ``|‖a‖ - 1| <= ν`` (SPEC §2.3 accepts ``ν = 5e-5``) move ``sq`` away from
    ``2 - 2 cos`` by at most ``8ν + 4ν²``.

    >>> round(cosine_f32_band_sq(384) * 1e4, 3)
    1.379
    """
    if d < 1:
        raise ValueError(f"cosine_f32_band_sq: d must be >= 1, got {d!r}")
    g = gamma(d + 2)
    eps = gamma(d) * (1 + g) ** 2 + 2 * g + g * g
    return 2.0 * (eps + U32) + 8.0 * nu + 4.0 * nu * nu


def norm_deviation(e: np.ndarray) -> float:
    """``max |‖row‖₂ - 1|`` over the rows (float64), 0 for no rows."""
    if e.shape[0] == 0:
        return 0.0
    n = np.sqrt(np.einsum("ij,ij->i", e.astype(np.float64), e.astype(np.float64)))
    return float(np.max(np.abs(n - 1.0)))


def band_for(precision: str, e: np.ndarray, *, exact_ties: bool = False) -> float:
    """The tie band half-width (in ``sq``) that ``precision`` allows on input ``e``.

    ``float64-exact``: the generator's margin :data:`~lam_ref.geometry.TIE_BAND` (1e-9, where an
    implementation computing distances another way, e.g. ``2 - 2a·b`` in float64, may differ), and 0
    on ``exact_ties`` (cases built from exactly representable values, where ``sq == δ²`` MUST merge).
    ``float32-cosine``: :func:`cosine_f32_band_sq` for the input's D and norms.
    """
    if precision == "float64-exact":
        return 0.0 if exact_ties else TIE_BAND
    if precision == "float32-cosine":
        return cosine_f32_band_sq(max(1, int(e.shape[1])), norm_deviation(e))
    raise ValueError(f"precision must be one of {PRECISIONS}, got {precision!r}")


@dataclass(frozen=True)
class Finding:
    """One departure of row ``row`` from the greedy rule: ``property`` (vocabulary word), the
    rows involved, their exact ``sq`` and ``δ²``, and a sentence."""

    property: str
    row: int
    other: int | None
    sq: float | None
    d2: float
    text: str

    def to_json(self) -> dict[str, Any]:
        return {"property": self.property, "row": self.row, "other": self.other, "sq": self.sq, "d2": self.d2,
                "text": self.text}


def _near(sq: float, d2: float, hint: float) -> str | None:
    """``strict-threshold`` for an exact tie, ``threshold-precision`` within ``hint`` of δ², else None."""
    if sq == d2:
        return "strict-threshold"
    if abs(sq - d2) <= hint:
        return "threshold-precision"
    return None


def judge(
    e: np.ndarray,
    t: float,
    kept: np.ndarray,
    witness: np.ndarray | None = None,
    *,
    band: float = 0.0,
    complete: bool = True,
    hint: float | None = None,
) -> list[Finding]:
    """Every departure of (``kept``, ``witness``) from Algorithm 2 on ``e`` at ``t`` (module docstring).

    ``kept`` is a boolean mask of the rows the implementation kept; ``witness[i]`` (optional) the
    row it names for a dropped row ``i``. ``band`` is the tie band half-width in ``sq`` (0: exact
    rule). ``complete`` False holds the implementation to soundness only (SPEC §15.1).
    ``hint`` (default: the float32-cosine band of this D) labels a failure whose pair lies that
    close to δ² as ``threshold-precision`` rather than a logic error.
    """
    e = np.asarray(e)
    n = e.shape[0]
    d2 = delta_sq(t)
    hint = cosine_f32_band_sq(max(1, e.shape[1]), norm_deviation(e)) if hint is None else hint
    out: list[Finding] = []
    kept_ids = np.flatnonzero(kept)
    for i in range(n):
        earlier = kept_ids[kept_ids < i]
        sq = sq_dist_rows(e, earlier, np.broadcast_to(e[i], (earlier.size, e.shape[1]))) if earlier.size else np.empty(0)
        sure = earlier[sq < d2 - band] if band > 0 else earlier[sq <= d2]
        maybe = earlier[np.abs(sq - d2) <= band] if band > 0 else earlier[:0]
        if kept[i]:
            if complete and sure.size:
                j = int(sure[0])
                s = float(sq[earlier == j][0])
                prop = _near(s, d2, hint) or "later-duplicate-kept"
                out.append(Finding(prop, i, j, s, d2, f"row {i} was kept although kept row {j} is within δ "
                                   f"(sq = {s!r} <= δ² = {d2!r}): greedy drops it"))
            continue
        allowed = np.union1d(sure, maybe)
        if witness is None:
            if allowed.size == 0:
                out.append(_unrepresented(e, i, kept_ids, earlier, sq, d2, band, hint))
            continue
        w = int(witness[i])
        if not (0 <= w < i) or not kept[w]:
            later = " (a later row)" if w > i else ""
            out.append(Finding("witness-not-kept", i, w, None, d2,
                               f"dropped row {i} names row {w}{later}, which is not an earlier kept row"))
            continue
        s = float(sq_dist_rows(e, np.array([i]), e[np.array([w])])[0])
        if s > d2 + band:
            prop = _near(s, d2, hint) or "unsound-merge"
            out.append(Finding(prop, i, w, s, d2, f"row {i} was merged into row {w} at sq = {s!r} > δ² = {d2!r}"))
        elif complete and sure.size and w > int(sure[0]):
            j = int(sure[0])
            out.append(Finding("witness-differs", i, w, s, d2,
                               f"row {i} names kept row {w}; the lowest kept row within δ is {j} (SPEC §5)"))
    return out


def _unrepresented(e: np.ndarray, i: int, kept_ids: np.ndarray, earlier: np.ndarray, sq: np.ndarray, d2: float,
                   band: float, hint: float) -> Finding:
    """The finding for a dropped row no earlier kept row represents."""
    if earlier.size:
        k = int(np.argmin(sq))
        prop = _near(float(sq[k]), d2, hint)
        if prop is not None:
            return Finding(prop, i, int(earlier[k]), float(sq[k]), d2,
                           f"row {i} was dropped; its nearest earlier kept row {int(earlier[k])} is at sq = {float(sq[k])!r}, "
                           f"just beyond δ² = {d2!r}")
    later = kept_ids[kept_ids > i]
    if later.size:
        sql = sq_dist_rows(e, later, np.broadcast_to(e[i], (later.size, e.shape[1])))
        if (sql <= d2 + band).any():
            j = int(later[np.flatnonzero(sql <= d2 + band)[0]])
            return Finding("later-row-kept", i, j, float(sql[later == j][0]), d2,
                           f"row {i} was dropped and the later row {j} within δ was kept: greedy keeps the earlier one")
    return Finding("unrepresented-drop", i, None, None, d2, f"row {i} was dropped but no kept row lies within δ of it")


def found_pair_findings(e: np.ndarray, t: float, kept: np.ndarray, pairs: np.ndarray, band: float = 0.0) -> list[Finding]:
    """SPEC §15.1 over the pairs an implementation reports: row ``i`` is dropped iff one of its pairs
    within δ (up to ``band``) names an earlier kept row (the lowest id among the pairs it found)."""
    d2 = delta_sq(t)
    partners: dict[int, list[int]] = {}
    for i, j in np.asarray(pairs).reshape(-1, 2).tolist():
        sq = float(sq_dist_rows(e, np.array([i]), e[np.array([j])])[0])
        if sq <= d2 + band and kept[j]:
            partners.setdefault(i, []).append(j)
    out = []
    for i in range(e.shape[0]):
        mine = partners.get(i, [])
        if kept[i] and mine:
            out.append(Finding("found-pair-ignored", i, min(mine), None, d2,
                               f"row {i} was kept although it reported a pair with kept row {min(mine)} within δ "
                               "(SPEC §15.1: it merges into the lowest id among the pairs it found)"))
        elif not kept[i] and i and not mine:
            out.append(Finding("unrepresented-drop", i, None, None, d2,
                               f"row {i} was dropped but none of the pairs it reported names an earlier kept row within δ"))
    return out
