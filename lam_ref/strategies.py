"""Hypothesis strategies for LAM's geometry (public; reusable by other projects).

Every strategy here generates **float32 unit rows** (SPEC §1) and, when it also fixes a threshold
``t``, keeps every pair of rows outside the *tie band* of SPEC §2 (``|sq - δ²| > TIE_BAND``,
checked with the exact rule of :mod:`lam_ref.geometry`), so that any conforming implementation,
however it computes distances, must reach the same merge decisions. Randomness comes from a
``numpy`` generator seeded by an integer that Hypothesis draws, which keeps the strategies fast at
any dimension while staying reproducible and shrinkable in their size parameters.

The shapes follow the objects of the paper's theory (§2.4, Appendix C):

* :func:`unit_vectors`, :func:`unit_rows`: arbitrary directions (queries, records) in any ``D``;
* :func:`grid_rows`, :func:`grid_rows_and_threshold`: rows whose values Hypothesis draws and
  shrinks (small-integer directions), so a counterexample is minimal in its values too;
* :func:`embeddings_and_threshold`: clustered data whose pairwise distances straddle ``δ``, so
  merges, near-misses and chains all occur (``DEF1``, ``THM1``, ``PROP2``, ``THM2``);
* :func:`near_duplicate_clusters`: clusters with a controlled diameter and gap;
* :func:`chains`: ``a~b, b~c, a≁c`` (the non-transitivity behind claim ``C4``);
* :func:`stars`: a centre within ``δ`` of every leaf, leaves pairwise beyond ``δ`` (the order
  sensitivity of greedy, ``PROP2``/``THM2``);
* :func:`adversarial_pairs`: pairs a hair inside and a hair outside ``δ`` (the inclusive rule);
* :func:`text_trajectories`: records with repeated and edited observations (for the text layers);
* :func:`turn_splits`: random splits of ``N`` arrivals into turns (online ≡ batch, SPEC §6).

Helpers :func:`tie_band_violations` and :func:`avoid_tie_band` are public too.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from .covering import all_pairs_sq
from .geometry import TIE_BAND, LamValueError, delta_from_t, delta_sq, sq_dist_rows, validate_threshold

__all__ = [
    "TIE_MARGIN",
    "AdversarialPairs",
    "Clusters",
    "TextTrajectory",
    "adversarial_pairs",
    "grid_rows",
    "grid_rows_and_threshold",
    "all_pairs_sq",
    "avoid_tie_band",
    "chains",
    "embeddings_and_threshold",
    "near_duplicate_clusters",
    "stars",
    "text_trajectories",
    "thresholds",
    "tie_band_violations",
    "turn_splits",
    "unit_rows",
    "unit_vectors",
]

#: Generated data keeps ``|sq - δ²| > TIE_MARGIN`` (twice the SPEC §2 tie band, for safety).
TIE_MARGIN = 2 * TIE_BAND

_SEEDS = st.integers(min_value=0, max_value=2**32 - 1)


# ---------------------------------------------------------------------------------------------
# plain numpy helpers (also usable without Hypothesis)
# ---------------------------------------------------------------------------------------------
def tie_band_violations(embeddings: np.ndarray, t: float, margin: float = TIE_MARGIN) -> list[tuple[int, int]]:
    """Pairs ``i < j`` whose exact ``sq`` lies within ``margin`` of ``δ² = 2 - 2t`` (SPEC §2)."""
    d2 = delta_sq(t)
    sq = all_pairs_sq(embeddings)
    i, j = np.nonzero(np.triu(np.abs(sq - d2) <= margin, k=1))
    return list(zip(i.tolist(), j.tolist()))


def avoid_tie_band(embeddings: np.ndarray, t: float, margin: float = TIE_MARGIN) -> float:
    """Return ``t`` if no pair is in the tie band, else a slightly larger ``t`` that clears it.

    The threshold moves by the smallest amount (a few ``margin`` in ``δ²``) that puts every pair at
    least ``margin`` away from ``δ²``; merge decisions of pairs outside the band are unchanged.
    Raises :class:`LamValueError` if no such ``t`` in ``[-1, 1]`` is found.
    """
    t = validate_threshold(t)
    sq = all_pairs_sq(embeddings)
    vals = np.sort(sq[np.triu_indices(sq.shape[0], k=1)])
    d2 = delta_sq(t)
    for _ in range(64):
        close = vals[np.abs(vals - d2) <= margin]
        if close.size == 0:
            return t
        # move δ² below the lowest offending value; repeat if that lands on another value
        d2 = float(close.min()) - 2.5 * margin
        t = 1.0 - d2 / 2.0
        if not -1.0 <= t <= 1.0:
            break
        d2 = delta_sq(t)
    raise LamValueError(f"t={t!r}: could not move the threshold out of the tie band of these embeddings")


def _unit(rng: np.random.Generator, n: int, dim: int) -> np.ndarray:
    x = rng.standard_normal((n, dim))
    norms = np.linalg.norm(x, axis=1, keepdims=True)
    while np.any(norms == 0):  # pragma: no cover - probability zero
        x = rng.standard_normal((n, dim))
        norms = np.linalg.norm(x, axis=1, keepdims=True)
    return x / norms


def _orthogonal_unit(rng: np.random.Generator, c: np.ndarray) -> np.ndarray:
    """A random unit vector orthogonal to the unit float64 vector ``c`` (needs ``D >= 2``)."""
    for _ in range(100):
        u = rng.standard_normal(c.shape[0])
        u -= (u @ c) * c
        nrm = np.linalg.norm(u)
        if nrm > 1e-6:
            return u / nrm
    raise LamValueError("could not draw a vector orthogonal to c")  # pragma: no cover


def _rotate(c: np.ndarray, u: np.ndarray, theta: float) -> np.ndarray:
    """``cos θ · c + sin θ · u``: the point at angle ``θ`` from ``c`` towards ``u`` (both unit, ⟂)."""
    return math.cos(theta) * c + math.sin(theta) * u


def _chord_to_angle(chord: float) -> float:
    return 2.0 * math.asin(min(1.0, chord / 2.0))


def _f32(x: np.ndarray) -> np.ndarray:
    x = np.asarray(x, dtype=np.float64)
    x = x / np.linalg.norm(x, axis=-1, keepdims=True)
    return np.ascontiguousarray(x, dtype=np.float32)


# ---------------------------------------------------------------------------------------------
# strategies
# ---------------------------------------------------------------------------------------------
@st.composite
def unit_vectors(draw, dim: int | st.SearchStrategy[int] = 8) -> np.ndarray:
    """One float32 unit vector of dimension ``dim`` (an int or a strategy of ints), e.g. a query."""
    d = draw(dim) if isinstance(dim, st.SearchStrategy) else int(dim)
    rng = np.random.default_rng(draw(_SEEDS))
    return _f32(_unit(rng, 1, d))[0]


@st.composite
def unit_rows(
    draw,
    min_n: int = 0,
    max_n: int = 40,
    min_dim: int = 1,
    max_dim: int = 32,
    *,
    tie_free_for: float | None = None,
) -> np.ndarray:
    """``float32[N, D]`` unit rows in general position (uniform on the sphere).

    With ``tie_free_for=t`` the rows are redrawn until no pair is in the tie band of ``t``.
    """
    n = draw(st.integers(min_n, max_n))
    d = draw(st.integers(min_dim, max_dim))
    rng = np.random.default_rng(draw(_SEEDS))
    for _ in range(100):
        e = _f32(_unit(rng, n, d)) if n else np.zeros((0, d), dtype=np.float32)
        if tie_free_for is None or not tie_band_violations(e, tie_free_for):
            return e
    raise LamValueError(f"could not draw rows outside the tie band of t={tie_free_for!r}")  # pragma: no cover


@st.composite
def grid_rows(
    draw,
    min_n: int = 1,
    max_n: int = 12,
    min_dim: int = 1,
    max_dim: int = 8,
    *,
    max_coord: int = 3,
) -> np.ndarray:
    """``float32[N, D]`` unit rows whose **values** Hypothesis draws and shrinks: each row is a
    vector of small integers in ``[-max_coord, max_coord]`` (``hypothesis.extra.numpy.arrays``),
    scaled to unit norm; an all-zero row becomes the first basis vector.

    A failing property therefore shrinks to rows like ``[1, 0]`` and ``[1, 1]/√2``: minimal in
    ``n``, ``D`` *and* in the values (the seeded strategies above shrink only in sizes and seed).

    Examples:
        >>> from hypothesis import find
        >>> find(grid_rows(min_n=2, min_dim=2), lambda e: True).tolist()
        [[1.0, 0.0], [1.0, 0.0]]
    """
    n = draw(st.integers(min_n, max_n))
    d = draw(st.integers(min_dim, max_dim))
    ints = draw(hnp.arrays(np.int64, (n, d), elements=st.integers(-max_coord, max_coord)))
    x = ints.astype(np.float64)
    zero = ~x.any(axis=1)
    x[zero, 0] = 1.0
    return _f32(x / np.linalg.norm(x, axis=1, keepdims=True))


@st.composite
def grid_rows_and_threshold(
    draw, min_n: int = 1, max_n: int = 12, min_dim: int = 1, max_dim: int = 8, min_t: float = 0.5, max_t: float = 0.995
) -> tuple[np.ndarray, float]:
    """``(E, t)``: :func:`grid_rows` and a drawn threshold moved out of the tie band (SPEC §2)."""
    e = draw(grid_rows(min_n, max_n, min_dim, max_dim))
    t = draw(thresholds(min_t, max_t))
    return e, avoid_tie_band(e, t) if e.shape[0] > 1 else t


def thresholds(min_t: float = 0.5, max_t: float = 0.995) -> st.SearchStrategy[float]:
    """Cosine thresholds ``t`` in ``[min_t, max_t]`` (default: where ``t' = 4t - 3 >= -1``)."""
    validate_threshold(min_t, "min_t")
    validate_threshold(max_t, "max_t")
    return st.floats(min_value=min_t, max_value=max_t, allow_nan=False, allow_infinity=False)


def _clustered(rng: np.random.Generator, n: int, dim: int, delta: float, spread: float) -> np.ndarray:
    """``n`` rows around a few random centres at chord distances up to ``spread · δ`` (float64)."""
    if dim == 1:
        return rng.choice([-1.0, 1.0], size=(n, 1))
    n_centres = int(rng.integers(1, max(1, n // 3) + 1))
    centres = _unit(rng, n_centres, dim)
    out = np.empty((n, dim))
    max_angle = _chord_to_angle(min(2.0, spread * delta))
    for k in range(n):
        c = centres[int(rng.integers(n_centres))]
        kind = rng.random()
        if kind < 0.1:
            out[k] = c  # exact duplicates of a centre: sq = 0
        elif kind < 0.15:
            out[k] = _unit(rng, 1, dim)[0]  # an outlier
        else:
            out[k] = _rotate(c, _orthogonal_unit(rng, c), float(rng.uniform(0.0, max_angle)))
    return out


@st.composite
def embeddings_and_threshold(
    draw,
    min_n: int = 1,
    max_n: int = 40,
    min_dim: int = 2,
    max_dim: int = 24,
    min_t: float = 0.5,
    max_t: float = 0.995,
    spread: float = 1.5,
) -> tuple[np.ndarray, float]:
    """``(E, t)``: clustered unit rows whose pairwise distances straddle ``δ = sqrt(2-2t)``.

    Points sit around a few centres at chord distances up to ``spread · δ`` (with exact duplicates
    and outliers mixed in), so merges, non-merges and chains all occur. No pair is in the tie
    band of the returned ``t`` (which may differ from the drawn one by ``~1e-9``; see
    :func:`avoid_tie_band`). Used by ``DEF1``, ``THM1``, ``PROP2``, ``THM2``, ``BAND`` tests.
    """
    n = draw(st.integers(min_n, max_n))
    d = draw(st.integers(min_dim, max_dim))
    t = draw(thresholds(min_t, max_t))
    rng = np.random.default_rng(draw(_SEEDS))
    delta = delta_from_t(t)
    e = _f32(_clustered(rng, n, d, delta, spread)) if n else np.zeros((0, d), np.float32)
    return e, avoid_tie_band(e, t) if n > 1 else t


@dataclass(frozen=True)
class Clusters:
    """Near-duplicate clusters: ``embeddings`` (shuffled), ``labels`` (cluster of each row), ``t``.

    Within a cluster every pair has chord ``<= within``; across clusters every pair ``> between``.
    """

    embeddings: np.ndarray
    labels: np.ndarray
    t: float
    within: float
    between: float


@st.composite
def near_duplicate_clusters(
    draw,
    min_clusters: int = 1,
    max_clusters: int = 6,
    min_size: int = 1,
    max_size: int = 6,
    min_dim: int = 8,
    max_dim: int = 32,
    t: float | None = None,
    shuffle: bool = True,
) -> Clusters:
    """Clusters of diameter ``<= δ`` (``within``) separated by more than ``2δ`` (``between``).

    Each cluster is a centre plus members at angle ``<= α/2`` from it, where chord ``α = δ·0.98``,
    so every within-cluster pair merges; centres are orthonormal, so (for ``t >= 0.9``) every
    cross pair exceeds ``between = 2δ + 0.02``. Hence greedy keeps exactly one row per cluster and
    ``N(S, δ) = M(S, δ) = #clusters`` — a configuration with a known exact answer.
    """
    k = draw(st.integers(min_clusters, max_clusters))
    d = draw(st.integers(max(min_dim, k), max(max_dim, k)))
    tt = draw(thresholds(0.9, 0.995)) if t is None else validate_threshold(t)
    rng = np.random.default_rng(draw(_SEEDS))
    sizes = [draw(st.integers(min_size, max_size)) for _ in range(k)]
    delta = delta_from_t(tt)
    within = 0.98 * delta
    between = 2.0 * delta + 0.02
    radius_angle = _chord_to_angle(within) / 2.0
    # orthonormal centres: cross pairs are at angle >= π/2 - 2·radius_angle
    if 2.0 * math.sin((math.pi / 2 - 2 * radius_angle) / 2) <= between:
        raise LamValueError(f"t={tt!r}: clusters of diameter δ cannot be 2δ apart here (use t >= 0.9)")
    centres, _ = np.linalg.qr(rng.standard_normal((d, k)))
    rows, labels = [], []
    for c_idx, (c, size) in enumerate(zip(centres.T, sizes)):
        for _m in range(size):
            u = _orthogonal_unit(rng, c)
            rows.append(_rotate(c, u, float(rng.uniform(0.0, radius_angle))))
            labels.append(c_idx)
    e = _f32(np.array(rows))
    lab = np.array(labels, dtype=np.int64)
    if shuffle:
        perm = rng.permutation(e.shape[0])
        e, lab = np.ascontiguousarray(e[perm]), lab[perm]
    return Clusters(e, lab, avoid_tie_band(e, tt), within, between)


@st.composite
def chains(
    draw, min_length: int = 3, max_length: int = 10, min_dim: int = 2, max_dim: int = 16, t: float | None = None
) -> tuple[np.ndarray, float]:
    """``(E, t)``: ``x_0, …, x_{L-1}`` on a great circle, consecutive pairs within ``δ``, pairs two
    steps apart beyond ``δ`` (``a~b``, ``b~c``, ``a≁c``): one connected component of the δ-graph
    whose single-representative grouping violates ``DEF1`` (claim ``C4``).

    Step angle ``α`` with ``2 sin α > δ`` and ``2 sin(α/2) <= δ``, kept a margin inside both ends.
    Requires ``t > -1/2`` so that ``2α`` can stay below ``π``.
    """
    length = draw(st.integers(min_length, max_length))
    d = draw(st.integers(min_dim, max_dim))
    tt = draw(thresholds(0.5, 0.995)) if t is None else validate_threshold(t)
    rng = np.random.default_rng(draw(_SEEDS))
    delta = delta_from_t(tt)
    hi = _chord_to_angle(delta)  # α <= hi  ⟺ chord(α) <= δ
    lo = hi / 2.0  # chord(2α) > δ ⟺ α > hi / 2
    frac = draw(st.floats(0.1, 0.9))
    alpha = lo + frac * (hi - lo)
    c = _unit(rng, 1, d)[0]
    u = _orthogonal_unit(rng, c)
    e = _f32(np.array([_rotate(c, u, j * alpha) for j in range(length)]))
    return e, avoid_tie_band(e, tt)


@st.composite
def stars(
    draw,
    min_leaves: int = 2,
    max_leaves: int = 8,
    min_dim: int = 10,
    max_dim: int = 24,
    t: float | None = None,
    centre_first: bool | None = None,
) -> tuple[np.ndarray, float, int]:
    """``(E, t, centre)``: a centre within ``δ`` of every leaf, leaves pairwise beyond ``δ``.

    Leaves are ``cos θ·c + sin θ·u_i`` with orthonormal ``u_i ⟂ c``; ``θ`` is chosen so that
    ``2 - 2cos θ <= δ²`` and ``2 sin²θ > δ²``. With the centre first, greedy keeps 1 row
    (``= N(S, δ)``); with the centre last it keeps every leaf: the gap between ``|R_greedy|`` and
    ``N`` that ``PROP2``/``THM2`` bound. ``centre`` is the centre's row index.
    """
    n_leaves = draw(st.integers(min_leaves, max_leaves))
    d = draw(st.integers(max(min_dim, n_leaves + 1), max(max_dim, n_leaves + 1)))
    tt = draw(thresholds(0.6, 0.995)) if t is None else validate_threshold(t)
    first = draw(st.booleans()) if centre_first is None else bool(centre_first)
    rng = np.random.default_rng(draw(_SEEDS))
    d2 = delta_sq(tt)
    # cos θ in (lo, hi]: 1 - cos θ <= δ²/2 and 1 - cos²θ > δ²/2
    cos_hi = math.sqrt(max(0.0, 1.0 - d2 / 2.0))  # 2 sin²θ > δ²  ⟺ cos θ < cos_hi
    cos_lo = 1.0 - d2 / 2.0  # 2 - 2cos θ <= δ² ⟺ cos θ >= cos_lo
    frac = draw(st.floats(0.05, 0.95))
    cos_t = cos_lo + frac * (cos_hi - cos_lo)
    theta = math.acos(cos_t)
    q, _ = np.linalg.qr(rng.standard_normal((d, n_leaves + 1)))
    c, us = q[:, 0], q[:, 1:].T
    leaves = [_rotate(c, u, theta) for u in us]
    rows = [c, *leaves] if first else [*leaves, c]
    e = _f32(np.array(rows))
    return e, avoid_tie_band(e, tt), 0 if first else n_leaves


@dataclass(frozen=True)
class AdversarialPairs:
    """Rows ``2k, 2k+1`` form pair ``k``; ``inside[k]`` says whether its exact ``sq <= δ²``.

    ``hair[k] = |sq_k - δ²|`` (always ``> TIE_MARGIN``); pairs are mutually beyond ``δ``.
    """

    embeddings: np.ndarray
    t: float
    inside: np.ndarray
    hair: np.ndarray = field(repr=False)


def _pair_at(rng: np.random.Generator, a: np.ndarray, target_sq: float, lo: float, hi: float) -> np.ndarray | None:
    """A float32 unit ``b`` with exact ``sq(a32, b) in [lo, hi]`` near ``target_sq`` (bisection on θ)."""
    a64 = a.astype(np.float64)
    a64 /= np.linalg.norm(a64)
    u = _orthogonal_unit(rng, a64)
    theta_lo, theta_hi = 0.0, math.pi
    a_row = a.reshape(1, -1)
    zero = np.zeros(1, dtype=np.int64)
    for _ in range(80):
        theta = 0.5 * (theta_lo + theta_hi)
        b = _f32(_rotate(a64, u, theta))
        sq = float(sq_dist_rows(a_row, zero, b.reshape(1, -1))[0])
        if lo <= sq <= hi:
            return b
        if sq < target_sq:
            theta_lo = theta
        else:
            theta_hi = theta
    return None


@st.composite
def adversarial_pairs(
    draw,
    min_pairs: int = 1,
    max_pairs: int = 6,
    min_dim: int = 16,
    max_dim: int = 64,
    t: float | None = None,
    max_hair: float = 1e-6,
) -> AdversarialPairs:
    """Pairs a hair inside (``δ² - h``) and a hair outside (``δ² + h``) ``δ``, ``h`` drawn
    log-uniformly in ``[2·TIE_MARGIN, max_hair]`` (realised within a factor 2 where float32
    allows), measured with the exact float64 rule on the float32 rows.

    Checks the inclusive, bit-exact merge rule (SPEC §2): the oracle must merge exactly the
    ``inside`` pairs. Anchors are rejection-sampled so cross-pair distances exceed ``δ`` by far.
    """
    k = draw(st.integers(min_pairs, max_pairs))
    d = draw(st.integers(min_dim, max_dim))
    tt = draw(thresholds(0.5, 0.995)) if t is None else validate_threshold(t)
    inside = np.array([draw(st.booleans()) for _ in range(k)], dtype=bool)
    hairs_frac = [draw(st.floats(0.0, 1.0)) for _ in range(k)]
    rng = np.random.default_rng(draw(_SEEDS))
    d2 = delta_sq(tt)
    floor = 2.0 * TIE_MARGIN
    if max_hair <= floor:
        raise LamValueError(f"max_hair must exceed {floor!r}, got {max_hair!r}")
    for _attempt in range(50):
        rows, hair = [], []
        for j in range(k):
            # hair log-uniform in [floor, max_hair]: every scale from 1e-8 up is exercised
            h = math.exp(math.log(floor) + hairs_frac[j] * (math.log(max_hair) - math.log(floor)))
            target = d2 - h if inside[j] else d2 + h
            a = _f32(_unit(rng, 1, d))[0]
            b = None
            # first a window of a factor 2 around h, then anything in (1.5·TIE_MARGIN, max_hair]
            for h_lo, h_hi in ((max(h / 2, 1.5 * TIE_MARGIN), min(2 * h, max_hair)), (1.5 * TIE_MARGIN, max_hair)):
                lo, hi = (d2 - h_hi, d2 - h_lo) if inside[j] else (d2 + h_lo, d2 + h_hi)
                b = _pair_at(rng, a, target, lo, hi)
                if b is not None:
                    break
            if b is None:
                break
            rows += [a, b]
            hair.append(abs(float(sq_dist_rows(a.reshape(1, -1), np.zeros(1, np.int64), b.reshape(1, -1))[0]) - d2))
        else:
            e = np.ascontiguousarray(np.array(rows, dtype=np.float32))
            sq = all_pairs_sq(e)
            pair_of = np.arange(2 * k) // 2
            cross = pair_of[:, None] != pair_of[None, :]
            if np.all(sq[cross] > d2 + 0.05):
                return AdversarialPairs(e, tt, inside, np.array(hair))
    raise LamValueError(f"could not place {k} adversarial pairs at t={tt!r} in D={d}")  # pragma: no cover


@st.composite
def turn_splits(draw, n: int, max_turns: int | None = None, allow_empty: bool = True) -> list[int]:
    """Turn lengths summing to ``n`` (random split points of ``n`` arrivals; SPEC §6).

    Empty turns (length 0) occur when ``allow_empty``; at least one turn is returned.
    """
    if n < 0:
        raise LamValueError(f"n must be >= 0, got {n!r}")
    limit = max_turns if max_turns is not None else max(1, n + 1)
    cuts = draw(st.lists(st.integers(0, n), min_size=0, max_size=max(0, limit - 1)))
    bounds = [0, *sorted(cuts), n]
    lengths = [b - a for a, b in zip(bounds[:-1], bounds[1:])]
    if not allow_empty:
        lengths = [x for x in lengths if x > 0] or [n]
    return lengths


_WORDS = (
    "def class return import self value error test file line path assert None True False "
    "index chunk token config update result output module setup build run pass fail warning "
    "Traceback File line raise KeyError ValueError numpy array shape dtype float32 int64"
).split()


@dataclass(frozen=True)
class TextTrajectory:
    """A synthetic trajectory: ``records`` (``{"role", "text"}`` dicts, ``text`` may be ``None``)
    plus, per record, ``kinds`` (``fresh``, ``repeat``, ``edit``, ``empty`` or ``-`` for
    non-observations) and ``sources`` (index of the record a repeat/edit copies, else ``-1``)."""

    records: list[dict]
    kinds: list[str]
    sources: list[int]


def _random_text(rng: np.random.Generator, lines: int, unicode: bool) -> str:
    out = []
    for _ in range(lines):
        words = [_WORDS[int(i)] for i in rng.integers(0, len(_WORDS), size=int(rng.integers(1, 12)))]
        line = " ".join(words)
        roll = rng.random()
        if unicode and roll < 0.05:
            line += " naïve ✓ 数据 🚀"
        elif roll < 0.08:
            line = "    " + line  # indentation
        elif roll < 0.1:
            line = ""  # blank line
        elif roll < 0.11:
            line += " <|endoftext|>"  # literal special token: ordinary text (SPEC §3)
        out.append(line)
    return "\n".join(out)


def _edit(rng: np.random.Generator, text: str, unicode: bool) -> str:
    lines = text.split("\n")
    for _ in range(int(rng.integers(1, 4))):
        op = rng.random()
        pos = int(rng.integers(0, len(lines) + 1))
        if op < 0.4 and lines:
            lines[min(pos, len(lines) - 1)] = _random_text(rng, 1, unicode)
        elif op < 0.7:
            lines.insert(pos, _random_text(rng, 1, unicode))
        elif lines:
            del lines[min(pos, len(lines) - 1)]
    return "\n".join(lines)


@st.composite
def text_trajectories(
    draw,
    min_observations: int = 1,
    max_observations: int = 12,
    max_lines: int = 30,
    unicode: bool = True,
    include_empty: bool = True,
) -> TextTrajectory:
    """Records ``thought → action → observation`` with observations that are fresh, exact repeats
    of an earlier observation, or edited copies (lines replaced, inserted, deleted): the redundancy
    that L1 (near-duplicates) and L0 (exact lines) remove. Some observations are empty or ``None``
    when ``include_empty`` (SPEC §3: a missing observation is empty)."""
    n_obs = draw(st.integers(min_observations, max_observations))
    rng = np.random.default_rng(draw(_SEEDS))
    records: list[dict] = []
    kinds: list[str] = []
    sources: list[int] = []
    obs_positions: list[int] = []
    for k in range(n_obs):
        records.append({"role": "thought", "text": f"step {k}: I will look at the output"})
        records.append({"role": "action", "text": f"run command_{int(rng.integers(0, 5))}"})
        kinds += ["-", "-"]
        sources += [-1, -1]
        roll = rng.random()
        non_empty = [p for p in obs_positions if records[p]["text"]]
        if include_empty and roll < 0.06:
            text, kind, src = (None if rng.random() < 0.5 else ""), "empty", -1
        elif non_empty and roll < 0.4:
            src = non_empty[int(rng.integers(len(non_empty)))]
            text, kind = records[src]["text"], "repeat"
        elif non_empty and roll < 0.7:
            src = non_empty[int(rng.integers(len(non_empty)))]
            text, kind = _edit(rng, records[src]["text"], unicode), "edit"
        else:
            text, kind, src = _random_text(rng, int(rng.integers(1, max_lines + 1)), unicode), "fresh", -1
        obs_positions.append(len(records))
        records.append({"role": "observation", "text": text})
        kinds.append(kind)
        sources.append(src)
    return TextTrajectory(records, kinds, sources)
