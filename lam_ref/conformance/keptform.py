"""The kept-set form (SPEC §15.5) and the float32-cosine profile (SPEC §2.2): the cases, the call,
the replay judge and the four kept-set checks, shared by the check modules ``checks.kept``,
``checks.kept_f32``, ``checks.substitute_f32`` and ``checks.substitute``.

An implementation exposing ``kept(embeddings, t)`` (:mod:`lam_ref.conformance.keptset`) is judged
on the output form (indices in range, ascending, no duplicates: a failed check naming the index),
soundness (every dropped row has a kept row within δ; a named witness is within δ), equality with
the oracle's kept set (and lowest witness) for COMPLETE, the prefix property (the kept set of a
prefix is the prefix of the kept set), and, where it reports the pairs it found, the SPEC §15.1
rule over those pairs. Each judgement is :func:`lam_ref.conformance.precision.judge` (a replay of
Algorithm 2 on the implementation's own earlier decisions); the ``-f32`` variants pass it the band
of :func:`lam_ref.conformance.precision.cosine_f32_band_sq`, the exact ones an empty band.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np
from hypothesis import strategies as st

from ..geometry import TIE_BAND, delta_sq, kept_mask
from ..strategies import adversarial_pairs, embeddings_and_threshold, near_duplicate_clusters, stars
from .asserts import case_embeddings
from .harness import Context, check
from .hazards import EXACT_TIES
from .keptset import KeptOutput, read_kept
from .precision import band_for, found_pair_findings, judge

__all__ = ["SIGNED_ZEROS", "WITNESS_CASES", "as_kept", "call_kept", "case_input", "found_pairs_rule", "identical_rows_t1",
           "in_band", "judge_case", "kept_checks", "mixed_cases", "prefix_property", "run_oracle_cases"]

SIGNED_ZEROS = np.array([[0.0, 1.0, 0.0, 0.0], [-0.0, 1.0, -0.0, 0.0], [0.0, 0.0, 1.0, 0.0], [-0.0, -0.0, 1.0, -0.0]],
                         dtype=np.float32)


@st.composite
def identical_rows_t1(draw: Any, max_distinct: int = 6, max_dim: int = 48) -> tuple[np.ndarray, float]:
    """``(E, 1.0)``: generic float32 unit rows (values not exactly representable in few bits, so a
    float32 self-similarity may round below 1), later exact copies of some of them (sq = 0 = δ², in
    the tie band) and near copies a hair beyond it (sq between 1e-8 and 1e-6: they must stay apart)."""
    k = draw(st.integers(1, max_distinct))
    d = draw(st.integers(2, max_dim))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    base = rng.standard_normal((k, d))
    base = (base / np.linalg.norm(base, axis=1, keepdims=True)).astype(np.float32)
    order = draw(st.lists(st.integers(0, k - 1), min_size=k, max_size=3 * k))
    rows = [base] + ([base[np.array(order, dtype=np.int64)]] if order else [])
    for j in draw(st.lists(st.integers(0, k - 1), max_size=k)):  # near copies a hair beyond sq = 0 = δ²
        v = rng.standard_normal(d)
        v -= (v @ base[j].astype(np.float64)) * base[j].astype(np.float64)
        near = base[j].astype(np.float64) + math.sqrt(10.0 ** rng.uniform(-8, -6)) * v / np.linalg.norm(v)
        near = (near / np.linalg.norm(near)).astype(np.float32)
        if float(np.sum((near.astype(np.float64) - base[j].astype(np.float64)) ** 2)) > 2 * TIE_BAND:
            rows.append(near[None, :])
    return np.concatenate(rows), 1.0


#: Fixed cases where the lowest and the nearest kept row within δ differ (the witness rule of SPEC §5).
WITNESS_CASES: list[tuple[str, np.ndarray, float]] = [
    ("row 2 within δ of kept rows 0 and 1, nearer to 1", np.array([[1, 0, 0], [0, 1, 0], [0.6, 0.8, 0]], dtype=np.float32), 0.5),
    ("row 3 within δ of kept rows 0, 1, 2, nearest to 2",
     np.array([[1, 0, 0], [0, 1, 0], [0, 0, 1], [0.36, 0.48, 0.8]], dtype=np.float32), 0.3),
]


def mixed_cases() -> st.SearchStrategy[Any]:
    """Random, clustered, star, boundary-pair and t = 1 identical-row cases."""
    return st.one_of(
        embeddings_and_threshold(min_n=1, max_n=30, min_dim=1, max_dim=24),
        embeddings_and_threshold(min_n=2, max_n=30, min_dim=2, max_dim=12, min_t=0.8, max_t=0.99, spread=1.2),
        stars(min_leaves=2, max_leaves=6, min_dim=8, max_dim=16),
        near_duplicate_clusters(max_clusters=4, max_size=5, min_dim=8, max_dim=16),
        adversarial_pairs(min_pairs=1, max_pairs=5, min_dim=16, max_dim=64),
        adversarial_pairs(min_pairs=2, max_pairs=6, min_dim=16, max_dim=64, max_hair=3e-2),  # outside the f32 band too
        identical_rows_t1(),
    )


def case_input(case: Any) -> tuple[np.ndarray, float]:
    if hasattr(case, "inside"):  # AdversarialPairs
        return case.embeddings, case.t
    return case_embeddings(case)


def call_kept(impl: Any, e: np.ndarray, t: float, where: str = "kept") -> KeptOutput:
    """Run ``kept`` on a copy-checked input and read its answer (:func:`~lam_ref.conformance.keptset.read_kept`)."""
    before = e.copy()
    out = impl.kept(e, t)
    assert np.array_equal(e, before, equal_nan=True), f"{where} modified its input embeddings (it must not)"
    return read_kept(out, e.shape[0], where)


def judge_case(e: np.ndarray, t: float, got: KeptOutput, *, precision: str, complete: bool, soundness_only: bool,
               exact_ties: bool = False) -> None:
    """Assert the replay judge finds nothing (soundness only, or the full rule for COMPLETE); ``exact_ties``:
    the case is built from exactly representable values (no tie band under the exact profile)."""
    band = band_for(precision, e, exact_ties=exact_ties)
    findings = judge(e, t, got.mask, got.witness, band=band, complete=complete and not soundness_only)
    if findings:
        f = findings[0]
        more = f" (and {len(findings) - 1} more)" if len(findings) > 1 else ""
        raise AssertionError(f"{f.text}{more} [{f.property}; t = {t!r}, δ² = {delta_sq(t)!r}, precision {precision}]")


def found_pairs_rule(e: np.ndarray, t: float, got: KeptOutput, precision: str) -> None:
    """SPEC §15.1 over the pairs it reports (:func:`~lam_ref.conformance.precision.found_pair_findings`)."""
    if got.pairs is None:
        return
    findings = found_pair_findings(e, t, got.mask, got.pairs, band_for(precision, e))
    assert not findings, f"{findings[0].text} [{findings[0].property}; t = {t!r}, precision {precision}]"


def prefix_property(impl: Any, e: np.ndarray, t: float, got: KeptOutput, precision: str) -> None:
    """The kept set of every prefix ``E[:k]`` is the kept set of ``E`` cut at ``k`` (greedy decides row i from rows < i)."""
    n = e.shape[0]
    for k in sorted({1, n // 2, n - 1} - {0, n}):
        sub = call_kept(impl, e[:k].copy(), t, f"kept (prefix of {k} rows)")
        diff = np.flatnonzero(sub.mask != got.mask[:k])
        if diff.size:
            i = int(diff[0])
            if precision != "float64-exact":
                band = band_for(precision, e)
                if judge(e[:k], t, sub.mask, band=band, complete=False) == [] and in_band(e, t, i, band):
                    continue  # a tie-band decision may go either way in either call
            raise AssertionError(
                f"prefix property: on the first {k} rows row {i} is {'kept' if sub.mask[i] else 'dropped'}, on all {n} "
                f"rows it is {'kept' if got.mask[i] else 'dropped'}: the decision on a row must depend only on earlier rows (SPEC §5)"
            )


def in_band(e: np.ndarray, t: float, i: int, band: float) -> bool:
    if i == 0:
        return False
    sq = np.sum((e[:i].astype(np.float64) - e[i].astype(np.float64)) ** 2, axis=1)
    return bool((np.abs(sq - delta_sq(t)) <= band).any())


def as_kept(pi: np.ndarray) -> KeptOutput:
    """The kept-set form of a π (its kept rows, π as the witnesses)."""
    return KeptOutput(kept_mask(pi), pi)


def run_oracle_cases(ctx: Context, body: Callable[..., None], examples: int = 150) -> None:
    """Run an equals-the-oracle ``body(case, exact_ties=False)`` on the exact ties (no tie band),
    the witness cases (lowest vs nearest kept row) and ``examples`` drawn :func:`mixed_cases`."""
    for name, rows, t, want in EXACT_TIES:
        e = np.array(rows, dtype=np.float32)
        ctx.note({"case": name, "embeddings": e, "t": t, "expected_pi": want})
        body((e, t), exact_ties=True)
    for name, e, t in WITNESS_CASES:
        ctx.note({"case": name, "embeddings": e, "t": t})
        body((e, t))
    ctx.run(mixed_cases(), body, examples=examples)


def _as_member(module: str, prefix: str) -> Callable[[Callable[..., None]], Callable[..., None]]:
    """Name a check function made by :func:`kept_checks` as a function of ``module``
    (``check_kept_sound`` -> ``check_<prefix>_sound``), before it is registered."""

    def name(f: Callable[..., None]) -> Callable[..., None]:
        f.__name__ = f.__qualname__ = "check_" + prefix + f.__name__[len("check_kept"):]
        f.__module__ = module
        return f

    return name


def kept_checks(profile: str, precision: str, prefix: str, module: str) -> tuple[Callable[..., None], ...]:
    """Register the four kept-set checks of one profile (exact or float32-cosine) as functions of
    ``module`` (the check module of the area ``prefix``), named ``check_<prefix>_<what>``; returns them
    in the order contract, sound, equals_oracle, prefix, for the module to bind under those names."""
    tag = "" if precision == "float64-exact" else " (float32-cosine tie band)"

    @check(f"{prefix}.contract", claim="DEF1", spec="§15.5 kept: ascending in-range indices, no duplicates, input untouched",
           parts=("kept",), profiles=(profile,), shown_to_fail_on=("m200_kept_unsorted", "m201_kept_duplicate"))
    @_as_member(module, prefix)
    def check_kept_contract(impl: Any, ctx: Context) -> None:
        """kept returns ascending, distinct, in-range row indices, leaves its input alone, is deterministic."""

        def body(case: Any) -> None:
            e, t = case_input(case)
            first = call_kept(impl, e, t)
            again = call_kept(impl, e, t, "kept (second call)")
            assert np.array_equal(first.mask, again.mask), "kept is not deterministic: two calls on the same input differ"

        ctx.run(mixed_cases(), body, examples=60)

    @check(f"{prefix}.sound", claim="DEF1", spec="§5/§15.5 every dropped row has a kept row within δ" + tag,
           parts=("kept",), profiles=(profile,), shown_to_fail_on=("m202_kept_drops_unrepresented", "m210_kept_pairs_window"))
    @_as_member(module, prefix)
    def check_kept_sound(impl: Any, ctx: Context) -> None:
        """Every dropped row has an earlier kept row within δ, and a named witness is within δ, COMPLETE or not."""

        def body(case: Any) -> None:
            e, t = case_input(case)
            got = call_kept(impl, e, t)
            judge_case(e, t, got, precision=precision, complete=impl.complete, soundness_only=True)
            found_pairs_rule(e, t, got, precision)

        ctx.run(mixed_cases(), body, examples=120)

    @check(f"{prefix}.equals_oracle", claim="DEF1", spec="§5/§15.5 kept set (and lowest witness) of the oracle" + tag,
           parts=("kept",), profiles=(profile,), complete_only=True,
           shown_to_fail_on=("m204_kept_nearest_witness",) + (("m203_kept_strict",) if precision == "float64-exact" else ()))
    @_as_member(module, prefix)
    def check_kept_equals_oracle(impl: Any, ctx: Context) -> None:
        """A COMPLETE implementation keeps exactly the oracle's rows and names the lowest kept row within δ."""

        def body(case: Any, exact_ties: bool = False) -> None:
            e, t = case_input(case)
            got = call_kept(impl, e, t)
            judge_case(e, t, got, precision=precision, complete=True, soundness_only=False, exact_ties=exact_ties)

        run_oracle_cases(ctx, body)

    @check(f"{prefix}.prefix", claim="ONLINE", spec="§5/§15.5 the kept set of a prefix is the prefix of the kept set",
           parts=("kept",), profiles=(profile,), shown_to_fail_on=("m205_kept_keeps_newest",))
    @_as_member(module, prefix)
    def check_kept_prefix(impl: Any, ctx: Context) -> None:
        """kept(E[:k]) equals kept(E) cut at k for k = 1, N/2, N-1: each decision depends on earlier rows only."""

        def body(case: Any) -> None:
            e, t = case_input(case)
            got = call_kept(impl, e, t)
            prefix_property(impl, e, t, got, precision)

        ctx.run(mixed_cases(), body, examples=60)

    return check_kept_contract, check_kept_sound, check_kept_equals_oracle, check_kept_prefix


