"""The conformance checks: plain functions, one per SPEC item, each naming the claim it covers.

Every check takes an implementation (a module, a spec string like ``"pkg.module"`` or
``"exec:COMMAND"``, or a loaded :class:`~lam_ref.conformance.impl.Implementation`) and an optional
:class:`~lam_ref.conformance.harness.Context`. It raises ``AssertionError`` naming the SPEC item,
the claim ID and the offending values when the implementation does not conform.

Reference answers never come from the implementation under test: they come from lam_ref's
oracle (:func:`lam_ref.substitution.oracle`, SPEC §5), from the construction of the data (chains,
boundary pairs, exactly representable ties) or from a model written here from the SPEC text (L0,
L2 bounds). Generated data keeps every pair outside the tie band ``|sq - δ²| <= 1e-9`` (SPEC §2),
except :func:`check_substitute_exact_ties`, built from exactly representable values.

The checks are listed, with their profiles, in docs/conformance.md (a table generated from the
registry, :mod:`lam_ref.conformance.registry`); ``lam-ref conform --list`` prints them.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import numpy as np
from hypothesis import assume
from hypothesis import strategies as st

from ..geometry import LamValueError, delta_sq, kept_mask, short_repr, sq_dist_rows, validate_map
from ..strategies import (
    adversarial_pairs,
    chains,
    embeddings_and_threshold,
    grid_rows_and_threshold,
    near_duplicate_clusters,
    stars,
    turn_splits,
    unit_rows,
)
from ..substitution import oracle
from ..text.lines import reference_tokens
from .harness import Check, Context, check
from .strategies import codec_inputs, residual_records, shared_block_rows


# -------------------------------------------------------------------------------------------
# helpers
# -------------------------------------------------------------------------------------------
def _as_pi(out: Any, n: int, where: str) -> np.ndarray:
    """Check the SPEC §15 return type ``int64[N]`` and return it as an array."""
    assert isinstance(out, np.ndarray), f"{where} must return a numpy int64 array (SPEC §15), got {type(out).__name__}"
    assert out.dtype == np.int64, f"{where} must return dtype int64 (SPEC §1, §15), got {out.dtype}"
    assert out.shape == (n,), f"{where} must return shape ({n},) for {n} rows, got {out.shape}"
    return out


def _sq_pairs(e: np.ndarray, i: np.ndarray, j: np.ndarray) -> np.ndarray:
    return sq_dist_rows(e, i, e[j])


def _assert_valid_map(e: np.ndarray, t: float, pi: np.ndarray, where: str) -> None:
    """π is a δ-substitution of the rows in arrival order (Definition 1, SPEC §1/§5)."""
    try:
        validate_map(pi, e.shape[0], "π")
    except LamValueError as exc:
        raise AssertionError(
            f"{where}: {exc}; a representative is an earlier or the same id and is itself retained (SPEC §1)"
        ) from None
    merged = np.flatnonzero(~kept_mask(pi))
    if merged.size:
        sq = _sq_pairs(e, merged, pi[merged])
        d2 = delta_sq(t)
        over = np.flatnonzero(sq > d2)
        assert over.size == 0, (
            f"{where}: chunk {merged[over[0]]} was merged into {pi[merged[over[0]]]} at sq = {sq[over[0]]!r} > "
            f"δ² = {d2!r} (t = {t!r}); every merge must be within δ (Definition 1, SPEC §2/§5)"
        )


def _assert_equal_pi(got: np.ndarray, want: np.ndarray, where: str, source: str) -> None:
    diff = np.flatnonzero(got != want)
    assert diff.size == 0, (
        f"{where}: π differs from {source} at {diff.size} position(s); first at i = {diff[0]}: "
        f"got π[i] = {got[diff[0]]}, expected {want[diff[0]]} (SPEC §5: the lowest retained id within δ)"
    )


def _substitute(impl: Any, e: np.ndarray, t: float, where: str = "substitute") -> np.ndarray:
    before = e.copy()
    out = impl.substitute(e, t)
    assert np.array_equal(e, before, equal_nan=True), f"{where} modified its input embeddings (it must not)"
    return _as_pi(out, e.shape[0], where)


def _reference_pi(e: np.ndarray, t: float) -> np.ndarray:
    return oracle(e, t).pi


def _check_map(impl: Any, e: np.ndarray, t: float, where: str) -> np.ndarray:
    """Run ``substitute`` and hold it to SPEC §15: oracle equality if COMPLETE, else soundness."""
    pi = _substitute(impl, e, t, where)
    _assert_valid_map(e, t, pi, where)
    if impl.complete:
        _assert_equal_pi(pi, _reference_pi(e, t), where, "the oracle")
    return pi


# strategies shared by several checks ---------------------------------------------------------
def _general() -> st.SearchStrategy[tuple[np.ndarray, float]]:
    return st.one_of(
        embeddings_and_threshold(min_n=1, max_n=40, min_dim=1, max_dim=24),
        embeddings_and_threshold(min_n=2, max_n=40, min_dim=2, max_dim=12, min_t=0.8, max_t=0.99, spread=1.2),
    )


def _embeddings_and_t(case: Any) -> tuple[np.ndarray, float]:
    if isinstance(case, tuple) and len(case) == 3:  # stars: (E, t, centre)
        return case[0], case[1]
    if hasattr(case, "embeddings"):  # Clusters
        return case.embeddings, case.t
    return case


# -------------------------------------------------------------------------------------------
# substitute (Algorithm 2; SPEC §2, §5, §15)
# -------------------------------------------------------------------------------------------
@check("substitute.contract", claim="DEF1", spec="§1/§15 π: int64[N], 0 <= π[i] <= i, π[π[i]] = π[i]", parts=("substitute",), profiles=("core",), shown_to_fail_on=("m05_keep_newest",))
def check_substitute_contract(impl: Any, ctx: Context) -> None:
    """substitute returns an int64[N] map to retained earlier ids, leaves its input alone, is deterministic."""

    def body(case: tuple[np.ndarray, float]) -> None:
        e, t = case
        first = _substitute(impl, e, t)
        n = e.shape[0]
        ids = np.arange(n)
        assert n == 0 or first[0] == 0, f"the first chunk has no predecessor and must be retained: π[0] = {first[0]}"
        bad = np.flatnonzero((first < 0) | (first > ids))
        assert bad.size == 0, f"π[{bad[0]}] = {first[bad[0]]} is not an id in [0, {bad[0]}] (SPEC §1)"
        assert np.all(first[first] == first), "every representative must itself be retained (π[π[i]] = π[i], SPEC §1)"
        again = _substitute(impl, e, t)
        assert np.array_equal(first, again), "two calls with the same input returned different π (must be deterministic)"

    ctx.run(_general(), body, examples=100)


@check("substitute.sound", claim="DEF1", spec="§5 every merge within δ (Definition 1)", parts=("substitute",), profiles=("core",), shown_to_fail_on=("m01_union_find", "m07_band_trust", "m11_wrong_tprime"))
def check_substitute_sound(impl: Any, ctx: Context) -> None:
    """Every merge is within δ: π is a δ-substitution (Definition 1), COMPLETE or not."""

    def body(case: tuple[np.ndarray, float]) -> None:
        e, t = case
        _assert_valid_map(e, t, _substitute(impl, e, t), "substitute")

    # small-integer directions first: a failure there shrinks to minimal values (the report's
    # counterexample), then the general and chain data
    ctx.run(grid_rows_and_threshold(min_n=1, max_n=10, min_dim=1, max_dim=4, max_t=0.95), body, examples=40)
    strategy = st.one_of(_general(), chains(min_length=3, max_length=10, min_dim=2, max_dim=16))
    ctx.run(strategy, body, examples=100)


@check(
    "substitute.equals_oracle",
    claim="DEF1",
    spec="§5 π[i] = lowest retained y < i within δ (the oracle)",
    parts=("substitute",),
    complete_only=True,
    profiles=("core",), shown_to_fail_on=("m02_nearest_witness", "m06_semdedup"),
)
def check_substitute_equals_oracle(impl: Any, ctx: Context) -> None:
    """A COMPLETE implementation returns exactly the oracle's π (clusters, stars, random data)."""

    def body(case: Any) -> None:
        e, t = _embeddings_and_t(case)
        pi = _substitute(impl, e, t)
        _assert_equal_pi(pi, _reference_pi(e, t), "substitute", "the oracle")

    strategy = st.one_of(
        _general(),
        stars(min_leaves=2, max_leaves=6, min_dim=8, max_dim=16),
        near_duplicate_clusters(max_clusters=5, max_size=5, min_dim=8, max_dim=16),
    )
    ctx.run(strategy, body, examples=150)


@check("substitute.shared_blocks", claim="BAND", spec="§5 every candidate verified with the exact rule", parts=("substitute",), profiles=("core",), shown_to_fail_on=("m07_band_trust",))
def check_substitute_shared_blocks(impl: Any, ctx: Context) -> None:
    """Rows sharing long exact coordinate blocks (every band matches) but far apart must not merge."""

    def body(case: tuple[np.ndarray, float]) -> None:
        e, t = case
        _check_map(impl, e, t, "substitute")

    ctx.run(shared_block_rows(), body, examples=100)


def _chain_case(t: float) -> st.SearchStrategy[tuple[np.ndarray, float]]:
    return chains(min_length=3, max_length=10, min_dim=2, max_dim=16, t=t)


@check(
    "substitute.chain",
    claim="C4",
    spec="§5 only retained chunks represent; components are not a δ-substitution",
    parts=("substitute",),
    complete_only=True,
    profiles=("core",), shown_to_fail_on=("m01_union_find", "m06_semdedup"),
)
def check_substitute_chain(impl: Any, ctx: Context) -> None:
    """On a chain x0~x1~x2… (x_i, x_j beyond δ when |i-j| >= 2) greedy keeps the even links: π[2k+1] = 2k."""

    def body(case: tuple[np.ndarray, float]) -> None:
        e, t = case
        n = e.shape[0]
        d2 = delta_sq(t)
        i, j = np.triu_indices(n, k=1)
        sq = _sq_pairs(e, i, j)
        near = (j - i) == 1
        # the construction's promise, verified exactly (else the expected π below would not follow)
        assume(bool(np.all(sq[near] <= d2)) and bool(np.all(sq[~near] > d2)))
        want = np.array([k - 1 if k % 2 else k for k in range(n)], dtype=np.int64)
        pi = _substitute(impl, e, t)
        _assert_equal_pi(pi, want, "substitute on a chain", "the chain's construction (x_{2k+1} → x_{2k})")

    ctx.run(st.sampled_from([0.9, 0.95, 0.97, 0.99]).flatmap(_chain_case), body, examples=60)


def _boundary_case(t: float) -> Any:
    return adversarial_pairs(min_pairs=1, max_pairs=6, min_dim=16, max_dim=64, t=t)


@check("substitute.boundary", claim="EQ1", spec="§2 merge iff sq <= δ² = 2 - 2t (pairs a hair from δ)", parts=("substitute",), profiles=("core",), shown_to_fail_on=("m04_linf", "m10_delta_not_squared", "m19_float32_gram"))
def check_substitute_boundary(impl: Any, ctx: Context) -> None:
    """Pairs a hair (2e-9 to 1e-6 in sq) inside δ merge, a hair outside do not: the threshold is exact."""

    def body(case: Any) -> None:
        e, t, inside = case.embeddings, case.t, case.inside
        pi = _substitute(impl, e, t)
        for k, ins in enumerate(inside.tolist()):
            a, b = 2 * k, 2 * k + 1
            sq = float(_sq_pairs(e, np.array([a]), np.array([b]))[0])
            assert pi[a] == a, f"pair {k}: row {a} has no earlier neighbour within δ but π[{a}] = {pi[a]}"
            if ins:
                if impl.complete:
                    assert pi[b] == a, (
                        f"pair {k}: sq = {sq!r} <= δ² = {delta_sq(t)!r} (t = {t!r}) but row {b} was not merged into "
                        f"{a} (π[{b}] = {pi[b]}); the rule is sq <= 2 - 2t, inclusive (SPEC §2, EQ1)"
                    )
            else:
                assert pi[b] == b, (
                    f"pair {k}: sq = {sq!r} > δ² = {delta_sq(t)!r} (t = {t!r}) but row {b} was merged "
                    f"(π[{b}] = {pi[b]}); the rule is sq <= 2 - 2t (SPEC §2, EQ1)"
                )

    strategy = st.one_of(
        st.sampled_from([0.5, 0.8, 0.9, 0.95, 0.99]).flatmap(_boundary_case),
        adversarial_pairs(min_pairs=1, max_pairs=6, min_dim=16, max_dim=64),
    )
    ctx.run(strategy, body, examples=100)


_H = 0.5
#: Exactly representable cases: (name, rows, t, π). Every sq and δ² here is exact in binary.
EXACT_TIES: list[tuple[str, list[list[float]], float, list[int]]] = [
    ("SPEC §2 example: (1,0), (0,1) at t=0: sq = 2 = δ²", [[1, 0], [0, 1]], 0.0, [0, 0]),
    ("(1,0), (0,1) at t=0.5: sq = 2 > δ² = 1", [[1, 0], [0, 1]], 0.5, [0, 1]),
    ("antipodes at t=-1: sq = 4 = δ²", [[1, 0], [-1, 0]], -1.0, [0, 0]),
    ("antipodes at t=0: sq = 4 > δ² = 2", [[1, 0], [-1, 0]], 0.0, [0, 1]),
    ("three axes at t=0: sq = 2 = δ² for every pair", [[1, 0, 0], [0, 1, 0], [0, 0, 1]], 0.0, [0, 0, 0]),
    ("duplicates at t=1: sq = 0 = δ²", [[0, 1, 0], [1, 0, 0], [0, 1, 0]], 1.0, [0, 1, 0]),
    ("half vectors at t=0.5: sq = 1 = δ²", [[_H, _H, _H, _H], [_H, _H, _H, -_H]], 0.5, [0, 0]),
    ("half vectors at t=0.75: sq = 1 > δ² = 0.5", [[_H, _H, _H, _H], [_H, _H, _H, -_H]], 0.75, [0, 1]),
    (
        "two retained at sq = 1 = δ² from the arrival: the lower id wins",
        [[_H, _H, _H, _H], [_H, -_H, -_H, _H], [_H, _H, -_H, _H]],
        0.5,
        [0, 1, 0],
    ),
    ("a tie with a dropped chunk does not count: only retained chunks represent", [[1, 0], [0, 1], [-1, 0]], 0.0, [0, 0, 2]),
]


@check(
    "substitute.exact_ties",
    claim="EQ1",
    spec="§2 inclusive rule sq <= δ² on exactly representable values",
    parts=("substitute",),
    complete_only=True,
    profiles=("core",), shown_to_fail_on=("m03_strict_less",),
)
def check_substitute_exact_ties(impl: Any, ctx: Context) -> None:
    """Exact ties merge (sq == δ², e.g. (1,0), (0,1) at t = 0): the comparison is <=, not <."""
    for name, rows, t, want in EXACT_TIES:
        e = np.array(rows, dtype=np.float32)
        ctx.note({"case": name, "embeddings": e, "t": t, "expected_pi": want})
        pi = _substitute(impl, e, t, f"substitute ({name})")
        assert pi.tolist() == want, f"{name}: expected π = {want}, got {pi.tolist()} (SPEC §2, inclusive merge rule)"


@check("substitute.large", claim="DEF1", spec="§5 oracle equality at N ≈ 1,000 (block boundaries)", parts=("substitute",), profiles=("core",), shown_to_fail_on=("m02_nearest_witness",))
def check_substitute_large(impl: Any, ctx: Context) -> None:
    """N between 600 and 1,100 clustered rows: COMPLETE ⇒ π equals the oracle; always sound."""

    def body(case: tuple[np.ndarray, float]) -> None:
        e, t = case
        _check_map(impl, e, t, f"substitute (N = {e.shape[0]})")

    ctx.run(embeddings_and_threshold(min_n=600, max_n=1100, min_dim=8, max_dim=24, min_t=0.8, max_t=0.99), body, examples=4)


# -------------------------------------------------------------------------------------------
# online (Algorithm 1; SPEC §6)
# -------------------------------------------------------------------------------------------
def _admit_all(impl: Any, e: np.ndarray, t: float, lengths: list[int], where: str) -> np.ndarray:
    session = impl.online_session(t)
    outs, start = [], 0
    for k, length in enumerate(lengths):
        turn = e[start : start + length]
        out = session.admit(turn)
        outs.append(_as_pi(out, length, f"{where}: admit of turn {k} ({length} rows)"))
        start += length
    return np.concatenate(outs) if outs else np.zeros(0, dtype=np.int64)


@st.composite
def _online_case(draw: Any) -> tuple[np.ndarray, float, list[int]]:
    e, t = draw(_general().filter(lambda c: c[0].shape[0] >= 1))
    lengths = draw(turn_splits(e.shape[0], allow_empty=False))
    return e, t, lengths


@check("online.equals_batch", claim="ONLINE", spec="§6 online ≡ batch for any split into turns", parts=("substitute", "online"), profiles=("online",), shown_to_fail_on=("m05_keep_newest", "m08_no_intra_turn"))
def check_online_equals_batch(impl: Any, ctx: Context) -> None:
    """Concatenated admit() outputs equal substitute()'s π for a random split, one turn, and one row per turn."""

    def body(case: tuple[np.ndarray, float, list[int]]) -> None:
        e, t, lengths = case
        n = e.shape[0]
        batch = _substitute(impl, e, t)
        _assert_valid_map(e, t, batch, "substitute")
        reference = _reference_pi(e, t) if impl.complete else batch
        source = "the oracle (COMPLETE = True)" if impl.complete else "this implementation's substitute()"
        if impl.complete:
            _assert_equal_pi(batch, reference, "substitute", "the oracle")
        for label, split in (("random split", lengths), ("one turn", [n]), ("one row per turn", [1] * n)):
            where = f"online, {label} {split if len(split) <= 12 else f'({len(split)} turns)'}"
            pi = _admit_all(impl, e, t, split, where)
            _assert_valid_map(e, t, pi, where)
            _assert_equal_pi(pi, reference, where, source)

    ctx.run(_online_case(), body, examples=100)


@check("online.sessions_independent", claim="ONLINE", spec="§6 a session holds its own (t, R, index, next id)", parts=("online",), profiles=("online",), shown_to_fail_on=("m17_shared_session_state",))
def check_online_sessions_independent(impl: Any, ctx: Context) -> None:
    """Two sessions admitted in alternation (different data, same or different t) each match their batch π."""

    def body(case: tuple[tuple[np.ndarray, float], tuple[np.ndarray, float]]) -> None:
        (ea, ta), (eb, tb) = case
        sa, sb = impl.online_session(ta), impl.online_session(tb)
        got_a, got_b = [], []
        for k in range(max(ea.shape[0], eb.shape[0])):
            if k < ea.shape[0]:
                got_a.append(_as_pi(sa.admit(ea[k : k + 1]), 1, f"session A admit {k}"))
            if k < eb.shape[0]:
                got_b.append(_as_pi(sb.admit(eb[k : k + 1]), 1, f"session B admit {k}"))
        for label, e, t, got in (("A", ea, ta, got_a), ("B", eb, tb, got_b)):
            pi = np.concatenate(got)
            _assert_valid_map(e, t, pi, f"session {label} (interleaved with another session)")
            if impl.complete:
                _assert_equal_pi(pi, _reference_pi(e, t), f"session {label} (interleaved)", "the oracle")

    data = embeddings_and_threshold(min_n=2, max_n=20, min_dim=4, max_dim=4, min_t=0.8, max_t=0.99)
    ctx.run(st.tuples(data, data), body, examples=50)


# -------------------------------------------------------------------------------------------
# validation (SPEC §2): bad input → ValueError naming the argument and the value / row
# -------------------------------------------------------------------------------------------
def _expect_value_error(call: Any, what: str, must_mention: str | None = None) -> None:
    try:
        result = call()
    except ValueError as exc:
        message = str(exc)
        assert message.strip(), f"{what}: raised ValueError with an empty message; it must name the argument and value"
        if must_mention is not None:
            assert re.search(rf"(?<![\d.]){re.escape(must_mention)}(?![\d])", message, re.IGNORECASE), (
                f"{what}: the ValueError message {message!r} does not name the offending value/row "
                f"{must_mention!r} (SPEC §2)"
            )
        return
    except Exception as exc:  # noqa: BLE001 - any other exception type is the violation we report
        raise AssertionError(
            f"{what}: expected ValueError (SPEC §2), got {type(exc).__name__}: {exc}"
        ) from exc
    raise AssertionError(f"{what}: expected ValueError (SPEC §2), but the call returned {_short(result)}")


def _short(obj: Any) -> str:
    return short_repr(obj, 120)


def _bad_rows(e: np.ndarray, row: int) -> list[tuple[str, np.ndarray, str | None]]:
    """Variants of ``e`` with one bad row (name, array, text the message must contain)."""
    out = []
    mention = str(row) if row >= 1 else None  # "0" is too common in messages to prove anything
    for label, value in (("NaN", np.nan), ("+inf", np.inf), ("-inf", -np.inf)):
        bad = e.copy()
        bad[row, 0] = value
        out.append((f"a {label} in row {row}", bad, mention))
    zero = e.copy()
    zero[row] = 0.0
    out.append((f"a zero row {row}", zero, mention))
    for scale in (1.01, 0.98, 2.0):
        bad = e.copy()
        bad[row] = (e[row].astype(np.float64) * scale).astype(np.float32)
        out.append((f"row {row} with norm {scale}", bad, mention))
    return out


@st.composite
def _validation_case(draw: Any) -> tuple[np.ndarray, float, int]:
    e = draw(unit_rows(min_n=3, max_n=8, min_dim=2, max_dim=8))
    row = draw(st.integers(1, e.shape[0] - 1))
    t = draw(st.sampled_from([0.5, 0.9, 0.95]))
    return e, t, row


@check("validation.substitute", claim="VALID", spec="§2 input validation: ValueError naming the argument/row", parts=("substitute",), profiles=("core",), shown_to_fail_on=("m09_accepts_unnormalized",))
def check_validation_substitute(impl: Any, ctx: Context) -> None:
    """NaN/inf/zero/non-unit rows, wrong rank, D = 0 and t outside [-1, 1] raise ValueError; |norm-1| <= 5e-5 passes."""

    def body(case: tuple[np.ndarray, float, int]) -> None:
        e, t, row = case
        for what, bad, mention in _bad_rows(e, row):
            _expect_value_error(lambda bad=bad: impl.substitute(bad, t), f"substitute with {what}", mention)
        shapes = {
            "a 1-D array (one vector)": e[0].copy(),
            "a 3-D array": e.reshape(1, *e.shape).copy(),
            "D = 0 (shape (N, 0))": np.zeros((e.shape[0], 0), dtype=np.float32),
        }
        for what, bad in shapes.items():
            _expect_value_error(lambda bad=bad: impl.substitute(bad, t), f"substitute with {what}")
        for bad_t, mention in ((1.5, "1.5"), (-1.5, "-1.5"), (1.0000001, None), (float("nan"), "nan"), (float("inf"), "inf")):
            _expect_value_error(lambda bad_t=bad_t: impl.substitute(e, bad_t), f"substitute with t = {bad_t!r}", mention)
        # rows within the SPEC §2 tolerance (|norm - 1| <= 1e-4) are valid input
        near = e.copy()
        near[row] = (e[row].astype(np.float64) * (1.0 + 5e-5)).astype(np.float32)
        try:
            out = impl.substitute(near, t)
        except ValueError as exc:
            raise AssertionError(
                f"row {row} with norm 1 + 5e-5 is within the SPEC §2 tolerance 1e-4 but was rejected: {exc}"
            ) from exc
        _as_pi(out, e.shape[0], "substitute with a row of norm 1 + 5e-5")

    ctx.run(_validation_case(), body, examples=20)


@check("validation.online", claim="VALID", spec="§2/§6 bad thresholds and turns rejected whole", parts=("online",), profiles=("online",), shown_to_fail_on=("m18_partial_turn",))
def check_validation_online(impl: Any, ctx: Context) -> None:
    """OnlineSession rejects bad t; admit rejects bad rows and dimension changes, leaving the session as it was."""

    def body(case: tuple[np.ndarray, float, int]) -> None:
        e, t, row = case
        for bad_t in (1.5, -2.0, float("nan")):

            def open_and_admit(bad_t: float = bad_t) -> Any:
                return impl.online_session(bad_t).admit(e)

            _expect_value_error(open_and_admit, f"OnlineSession({bad_t!r}) then admit")
        n = e.shape[0]
        half = max(1, n // 2)
        session = impl.online_session(t)
        first = _as_pi(session.admit(e[:half]), half, "admit of the first turn")
        for what, bad, mention in _bad_rows(e[half:], row % (n - half)) if n - half > 0 else []:
            _expect_value_error(lambda bad=bad: session.admit(bad), f"admit with {what} of the turn", mention)
        wrong_dim = np.zeros((2, e.shape[1] + 1), dtype=np.float32)
        wrong_dim[:, 0] = 1.0
        _expect_value_error(lambda: session.admit(wrong_dim), f"admit of D = {e.shape[1] + 1} rows after D = {e.shape[1]}")
        rest = session.admit(e[half:]) if n - half > 0 else np.zeros(0, np.int64)
        rest = _as_pi(rest, n - half, "admit after rejected turns")
        pi = np.concatenate([first, rest])
        _assert_valid_map(e, t, pi, "online after rejected turns")
        want = _reference_pi(e, t) if impl.complete else impl.substitute(e, t)
        _assert_equal_pi(
            pi, np.asarray(want), "online after rejected turns (a rejected turn must leave no partial result)",
            "the batch π of the accepted rows",
        )

    ctx.run(_validation_case(), body, examples=20)


@check("validation.codec", claim="VALID", spec="§2/§9 codec: bad vectors, bounds and bytes raise ValueError", parts=("codec",), profiles=("codec-bound", "codec-v1"), shown_to_fail_on=("m21_codec_partial_decode",))
def check_validation_codec(impl: Any, ctx: Context) -> None:
    """codec_encode rejects eb <= 0 or non-finite and non-finite x; codec_decode rejects truncated bytes."""
    x = np.linspace(-1.0, 1.0, 70, dtype=np.float32)
    ctx.note({"x": x})
    for eb in (0.0, -1e-3, float("nan"), float("inf"), 1e308):  # 1e308: 2·eb overflows (SPEC §9.4)
        _expect_value_error(lambda eb=eb: impl.codec_encode(x, eb), f"codec_encode with eb = {eb!r}")
    for label, value in (("NaN", np.nan), ("inf", np.inf)):
        bad = x.copy()
        bad[37] = value
        _expect_value_error(lambda bad=bad: impl.codec_encode(bad, 1e-3), f"codec_encode of x with a {label} at index 37", "37")
    blob = impl.codec_encode(x, 1e-3)
    assert isinstance(blob, (bytes, bytearray)), f"codec_encode must return bytes, got {type(blob).__name__}"
    blob = bytes(blob)
    for cut in (1, len(blob) // 2):
        if cut < len(blob):
            _expect_value_error(
                lambda cut=cut: impl.codec_decode(blob[: len(blob) - cut]),
                f"codec_decode of the encoding of 70 values with its last {cut} byte(s) cut off",
            )
    _expect_value_error(lambda: impl.codec_decode(b""), "codec_decode of empty bytes")


# -------------------------------------------------------------------------------------------
# L0 lines (SPEC §7)
# -------------------------------------------------------------------------------------------
def expected_dedup(records: list[str], stub_prefix: str) -> list[list[tuple[str, str | None]]]:
    """The SPEC §7 model: per record, a list of ``("keep", line)`` and ``("stub", None)`` tokens.

    A line is dropped iff an equal line (same UTF-8 bytes, hence same XXH3-64) was kept earlier in
    the trajectory; blank/whitespace-only lines and stub lines are kept and never registered; a
    maximal run of dropped lines becomes one stub. The projection of lam_ref's one L0 reference
    model (:func:`lam_ref.text.lines.reference_tokens`) onto what every implementation shares
    (a stub's text is the implementation's own).
    """
    return [
        [("keep", tok[1]) if tok[0] == "keep" else ("stub", None) for tok in rec]
        for rec in reference_tokens(records, stub_prefix)
    ]


@check("lines.semantics", claim="L0", spec="§7 exact line dedup over residual records; one stub per run", parts=("lines",), profiles=("l0", "l0-stubs"), shown_to_fail_on=("m12_l0_dedups_blank", "m13_l0_per_record", "m14_l0_stub_per_line", "m15_l0_dedups_stubs"))
def check_lines_semantics(impl: Any, ctx: Context) -> None:
    """dedup_lines drops exactly the repeated lines (across and within records), one stub line per run."""
    prefix = impl.stub_prefix

    def body(records: list[str]) -> None:
        out = impl.dedup_lines(list(records))
        assert isinstance(out, list) and all(isinstance(r, str) for r in out), (
            f"dedup_lines must return a list of str, got {_short(out)}"
        )
        assert len(out) == len(records), f"dedup_lines returned {len(out)} records for {len(records)} (SPEC §7)"
        for k, (tokens, got) in enumerate(zip(expected_dedup(records, prefix), out)):
            lines = got.split("\n")
            want = [line if kind == "keep" else f"<a line starting with {prefix!r}>" for kind, line in tokens]
            assert len(lines) == len(tokens), (
                f"record {k}: expected {len(tokens)} lines after dedup, got {len(lines)}\n"
                f"input:    {_short(records[k].split(chr(10)))}\nexpected: {_short(want)}\ngot:      {_short(lines)}"
            )
            for pos, ((kind, line), have) in enumerate(zip(tokens, lines)):
                if kind == "keep":
                    assert have == line, (
                        f"record {k} line {pos}: expected the kept line {line!r}, got {have!r} "
                        "(only lines seen earlier are dropped; blank and stub lines always stay; SPEC §7)"
                    )
                else:
                    assert have.startswith(prefix), (
                        f"record {k} line {pos}: a run of repeated lines must become one stub line starting "
                        f"with STUB_PREFIX {prefix!r}, got {have!r} (SPEC §7, §15)"
                    )

    ctx.run(residual_records(prefix), body, examples=120)


# -------------------------------------------------------------------------------------------
# L2 codec (SPEC §9)
# -------------------------------------------------------------------------------------------
def codec_slack(x: np.ndarray, y: np.ndarray, eb: float) -> np.ndarray:
    """Allowed excess over ``eb`` per value: the one tolerance of SPEC §9.3.

    One float32 ulp of ``max(|x|, |y|)`` (the reconstruction's rounding, computed in float32 or
    float64) plus ``2**-50·(|x| + eb)`` for float64 roundings of the quotient and product. lam_ref's
    own codec guarantees the tighter ``ulp32(y)/2 + 2**-52·(|x| + eb)`` (:func:`lam_ref.codec.error_slack`);
    the suite accepts any implementation within one ulp.
    """
    mag = np.maximum(np.abs(x.astype(np.float32)), np.abs(y.astype(np.float32)))
    return np.spacing(mag).astype(np.float64) + 2.0**-50 * (np.abs(x.astype(np.float64)) + eb)


def _roundtrip(impl: Any, x: np.ndarray, eb: float) -> tuple[bytes, np.ndarray]:
    before = x.copy()
    blob = impl.codec_encode(x, eb)
    assert np.array_equal(x, before, equal_nan=True), "codec_encode modified its input"
    assert isinstance(blob, (bytes, bytearray)), f"codec_encode must return bytes, got {type(blob).__name__}"
    y = impl.codec_decode(bytes(blob))
    assert isinstance(y, np.ndarray) and y.dtype == np.float32, (
        f"codec_decode must return a float32 array, got {type(y).__name__} {getattr(y, 'dtype', '')}"
    )
    assert y.shape == x.shape, f"codec_decode returned shape {y.shape} for an input of shape {x.shape}"
    return bytes(blob), y


@check("codec.error_bound", claim="L2", spec="§9 |x - decode(encode(x))| <= eb (+ float32 rounding)", parts=("codec",), profiles=("codec-bound", "codec-v1"), shown_to_fail_on=("m16_codec_truncation",))
def check_codec_error_bound(impl: Any, ctx: Context) -> None:
    """Every decoded value keeps the SPEC §9.3 bound: eb plus one float32 ulp plus a float64 term."""

    def body(case: Any) -> None:
        x, eb = case.x, case.eb
        _, y = _roundtrip(impl, x, eb)
        err = np.abs(x.astype(np.float64) - y.astype(np.float64))
        allowed = eb + codec_slack(x, y, eb)
        bad = np.flatnonzero(~(err <= allowed))
        assert bad.size == 0, (
            f"{case.kind} input, n = {x.size}, eb = {eb!r}: |x - y| = {err[bad[0]]!r} at index {bad[0]} "
            f"(x = {float(x[bad[0]])!r}, y = {float(y[bad[0]])!r}) exceeds eb + one float32 ulp = "
            f"{allowed[bad[0]]!r} (SPEC §9); {bad.size} value(s) out of bound, worst excess "
            f"{float(np.max(err[bad] - eb)) / eb:.3g}·eb"
        )

    ctx.run(codec_inputs(), body, examples=120)


@check("codec.deterministic", claim="L2", spec="§9 deterministic bytes; decoding is a pure function", parts=("codec",), profiles=("codec-bound", "codec-v1"), shown_to_fail_on=("m20_codec_timestamp",))
def check_codec_deterministic(impl: Any, ctx: Context) -> None:
    """Encoding the same vector twice gives identical bytes; decoding them twice gives identical values."""

    def body(case: Any) -> None:
        blob1, y1 = _roundtrip(impl, case.x, case.eb)
        blob2, y2 = _roundtrip(impl, case.x.copy(), case.eb)
        assert blob1 == blob2, f"two encodings of the same {case.kind} vector differ ({len(blob1)} vs {len(blob2)} bytes)"
        assert np.array_equal(y1.view(np.uint32), y2.view(np.uint32)), "two decodings of the same bytes differ"

    ctx.run(codec_inputs(max_n=120), body, examples=30)


# -------------------------------------------------------------------------------------------
# the suite: derived from the registry (lam_ref.conformance.registry)
# -------------------------------------------------------------------------------------------
def __getattr__(name: str) -> Any:
    """``CHECKS`` (every registered check, :mod:`lam_ref.conformance.registry`), resolved lazily:
    the registry imports this module, so it cannot be imported at this module's top."""
    if name == "CHECKS":
        from .registry import CHECKS

        return CHECKS
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def yield_checks(impl: Any) -> Iterator[tuple[Check, str | None]]:
    """The checks for ``impl`` with, for each, ``None`` (it applies) or the reason it is skipped,
    driven by the parts the implementation declares (SPEC §15), as scikit-learn's
    ``_yield_all_checks``: ``substitute`` is required (its checks run, and fail if it is
    missing); ``online``, ``lines`` and ``codec`` are optional parts; the oracle-equality checks
    run only for an implementation declaring ``COMPLETE = True``. Every check is yielded, so the
    report lists skipped ones with their reason.

    Args:
        impl: a loaded :class:`~lam_ref.conformance.impl.Implementation`.
    """
    from .registry import CHECKS

    for c in CHECKS:
        yield c, c.applicable(impl)


def checks_for_area(area: str) -> list[Check]:
    """The checks of one area (``substitute``, ``online``, ``validation``, ``lines``, ``codec``)."""
    from .registry import checks_for_area as of_area

    return of_area(area)


#: The public names: the helpers above and every check function this module registers (derived
#: from the registry, never listed by hand).
__all__ = ["CHECKS", "checks_for_area", "codec_slack", "expected_dedup", "yield_checks"] + sorted(  # noqa: F822
    name for name, obj in list(globals().items()) if name.startswith("check_") and hasattr(obj, "check")
)
