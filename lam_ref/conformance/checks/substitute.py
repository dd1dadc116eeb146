"""Checks of the area ``substitute``: Algorithm 2's map π (SPEC §1, §2, §5, §15; DEF1, EQ1, C4, BAND).

The contract (``int64[N]``, earlier retained representatives, input untouched, deterministic),
soundness and, for a ``COMPLETE`` implementation, equality with the oracle on generated data
(clusters, stars, chains, rows sharing exact coordinate blocks, pairs a hair from δ, exact ties,
N ≈ 1,000); then the edges where real bugs live: N = 0, every memory layout and dtype SPEC §2.4
lists, ids past 2¹⁶ and retained sets past 1,024 and 4,096 rows, D = 768 / 1,024, fresh result
arrays, signed zeros, the end points t = ±1 and big-endian input.

Generated data keeps every pair outside the tie band ``|sq - δ²| <= 1e-9`` (SPEC §2), except
:func:`check_substitute_exact_ties`, built from exactly representable values. Expected answers
come from the oracle (:func:`lam_ref.substitution.oracle`) or from how the data is built, never
from the implementation under test.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from hypothesis import assume
from hypothesis import strategies as st

from ...geometry import delta_sq, sq_dist_rows
from ...strategies import (
    adversarial_pairs,
    chains,
    embeddings_and_threshold,
    grid_rows_and_threshold,
    near_duplicate_clusters,
    stars,
)
from ...substitution import oracle
from ..asserts import (
    accepts,
    as_pi,
    assert_equal_pi,
    assert_map,
    assert_valid_map,
    call_substitute,
    case_embeddings,
    expected_pi,
    oracle_pi,
    two_inputs,
)
from ..harness import Context, check
from ..hazards import EXACT_TIES, REQUEST_IDS
from ..keptform import SIGNED_ZEROS, as_kept, identical_rows_t1, judge_case
from ..strategies import mixed_embeddings, shared_block_rows


def _sq_pairs(e: np.ndarray, i: np.ndarray, j: np.ndarray) -> np.ndarray:
    return sq_dist_rows(e, i, e[j])


@check("substitute.contract", claim="DEF1", spec="§1/§15 π: int64[N], 0 <= π[i] <= i, π[π[i]] = π[i]", parts=("substitute",), profiles=("core",), shown_to_fail_on=("m05_keep_newest",))
def check_substitute_contract(impl: Any, ctx: Context) -> None:
    """substitute returns an int64[N] map to retained earlier ids, leaves its input alone, is deterministic."""

    def body(case: tuple[np.ndarray, float]) -> None:
        e, t = case
        first = call_substitute(impl, e, t)
        n = e.shape[0]
        ids = np.arange(n)
        assert n == 0 or first[0] == 0, f"the first chunk has no predecessor and must be retained: π[0] = {first[0]}"
        bad = np.flatnonzero((first < 0) | (first > ids))
        assert bad.size == 0, f"π[{bad[0]}] = {first[bad[0]]} is not an id in [0, {bad[0]}] (SPEC §1)"
        assert np.all(first[first] == first), "every representative must itself be retained (π[π[i]] = π[i], SPEC §1)"
        again = call_substitute(impl, e, t)
        assert np.array_equal(first, again), "two calls with the same input returned different π (must be deterministic)"

    ctx.run(mixed_embeddings(), body, examples=100)


@check("substitute.sound", claim="DEF1", spec="§5 every merge within δ (Definition 1)", parts=("substitute",), profiles=("core",), shown_to_fail_on=("m01_union_find", "m07_band_trust", "m11_wrong_tprime"))
def check_substitute_sound(impl: Any, ctx: Context) -> None:
    """Every merge is within δ: π is a δ-substitution (Definition 1), COMPLETE or not."""

    def body(case: tuple[np.ndarray, float]) -> None:
        e, t = case
        assert_valid_map(e, t, call_substitute(impl, e, t), "substitute")

    # small-integer directions first: a failure there shrinks to minimal values (the report's
    # counterexample), then the general and chain data
    ctx.run(grid_rows_and_threshold(min_n=1, max_n=10, min_dim=1, max_dim=4, max_t=0.95), body, examples=40)
    strategy = st.one_of(mixed_embeddings(), chains(min_length=3, max_length=10, min_dim=2, max_dim=16))
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
        e, t = case_embeddings(case)
        pi = call_substitute(impl, e, t)
        assert_equal_pi(pi, oracle_pi(e, t), "substitute", "the oracle")

    strategy = st.one_of(
        mixed_embeddings(),
        stars(min_leaves=2, max_leaves=6, min_dim=8, max_dim=16),
        near_duplicate_clusters(max_clusters=5, max_size=5, min_dim=8, max_dim=16),
    )
    ctx.run(strategy, body, examples=150)


@check("substitute.shared_blocks", claim="BAND", spec="§5 every candidate verified with the exact rule", parts=("substitute",), profiles=("core",), shown_to_fail_on=("m07_band_trust",))
def check_substitute_shared_blocks(impl: Any, ctx: Context) -> None:
    """Rows sharing long exact coordinate blocks (every band matches) but far apart must not merge."""

    def body(case: tuple[np.ndarray, float]) -> None:
        e, t = case
        assert_map(impl, e, t, "substitute")

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
        pi = call_substitute(impl, e, t)
        assert_equal_pi(pi, want, "substitute on a chain", "the chain's construction (x_{2k+1} → x_{2k})")

    ctx.run(st.sampled_from([0.9, 0.95, 0.97, 0.99]).flatmap(_chain_case), body, examples=60)


def _boundary_case(t: float) -> Any:
    return adversarial_pairs(min_pairs=1, max_pairs=6, min_dim=16, max_dim=64, t=t)


@check("substitute.boundary", claim="EQ1", spec="§2 merge iff sq <= δ² = 2 - 2t (pairs a hair from δ)", parts=("substitute",), profiles=("core",), shown_to_fail_on=("m04_linf", "m10_delta_not_squared", "m19_float32_gram"))
def check_substitute_boundary(impl: Any, ctx: Context) -> None:
    """Pairs a hair (2e-9 to 1e-6 in sq) inside δ merge, a hair outside do not: the threshold is exact."""

    def body(case: Any) -> None:
        e, t, inside = case.embeddings, case.t, case.inside
        pi = call_substitute(impl, e, t)
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
        pi = call_substitute(impl, e, t, f"substitute ({name})")
        assert pi.tolist() == want, f"{name}: expected π = {want}, got {pi.tolist()} (SPEC §2, inclusive merge rule)"


@check("substitute.large", claim="DEF1", spec="§5 oracle equality at N ≈ 1,000 (block boundaries)", parts=("substitute",), profiles=("core",), shown_to_fail_on=("m02_nearest_witness",))
def check_substitute_large(impl: Any, ctx: Context) -> None:
    """N between 600 and 1,100 clustered rows: COMPLETE ⇒ π equals the oracle; always sound."""

    def body(case: tuple[np.ndarray, float]) -> None:
        e, t = case
        assert_map(impl, e, t, f"substitute (N = {e.shape[0]})")

    ctx.run(embeddings_and_threshold(min_n=600, max_n=1100, min_dim=8, max_dim=24, min_t=0.8, max_t=0.99), body, examples=4)


_UNIT = np.eye(8, dtype=np.float32)


def _layouts(e: np.ndarray) -> list[tuple[str, np.ndarray]]:
    """The same values in every layout SPEC §2.4 requires an implementation to accept."""
    n, d = e.shape
    fortran = np.asfortranarray(e)
    big = np.full((2 * n + 1, 2 * d + 1), 7.0, dtype=np.float32)  # garbage between the strided values
    big[1::2, 1::2] = e
    strided = big[1::2, 1::2]
    ro = e.copy()
    ro.setflags(write=False)
    reversed_view = e[::-1].copy()[::-1]
    out = [
        ("Fortran-ordered", fortran),
        ("strided (a view of every other row and column)", strided),
        ("read-only", ro),
        ("negative row stride", reversed_view),
        ("float64 (values exact in float32)", e.astype(np.float64)),
        ("big-endian float32", e.astype(">f4")),
    ]
    for name, arr in out:
        assert np.array_equal(np.asarray(arr, dtype=np.float64), e.astype(np.float64)), f"layout {name} changed values"
    return out


@check("substitute.empty", claim="DEF1", spec="§2.3 N = 0 is valid input: substitute returns int64[0]; N = 1 gives [0]",
       parts=("substitute",), profiles=("core",), shown_to_fail_on=("m22_empty_crash",))
def check_substitute_empty(impl: Any, ctx: Context) -> None:
    """An empty (0, D) array is valid (π = int64[0]) for D = 1, 3, 768; a single row is retained."""
    for d in (1, 3, 768):
        e = np.zeros((0, d), dtype=np.float32)
        ctx.note({"embeddings": e, "t": 0.9})
        out = accepts(lambda e=e: impl.substitute(e, 0.9), f"substitute of an empty (0, {d}) array (SPEC §2.3: N = 0 is valid)")
        as_pi(out, 0, f"substitute of an empty (0, {d}) array")
    one = _UNIT[:1, :3].copy()
    pi = as_pi(accepts(lambda: impl.substitute(one, 0.5), "substitute of one row"), 1, "substitute of one row")
    assert pi.tolist() == [0], f"a single row is retained: expected π = [0], got {pi.tolist()} (SPEC §1.4)"


@check("substitute.layouts", claim="DEF1",
       spec="§2.4 C/Fortran order, strided, read-only, float64 and big-endian input give the same π",
       parts=("substitute",), profiles=("core",),
       shown_to_fail_on=("m23_ignores_strides", "m24_float64_as_float32", "m25_readonly_refused"))
def check_substitute_layouts(impl: Any, ctx: Context) -> None:
    """The same values in any memory layout or dtype SPEC §2.4 lists give the same π, input untouched."""

    def body(case: tuple[np.ndarray, float]) -> None:
        e, t = case
        want, source = expected_pi(impl, e, t)
        for name, arr in _layouts(e):
            before = np.array(arr, copy=True)
            if name.startswith("big-endian"):  # SPEC §2.4: MAY be refused with ValueError; if accepted, same π
                try:
                    out = impl.substitute(arr, t)
                except ValueError:
                    continue
            else:
                out = accepts(lambda arr=arr: impl.substitute(arr, t), f"substitute of a {name} array")
            assert np.array_equal(np.asarray(arr), before), f"substitute modified its {name} input (it must not)"
            pi = as_pi(out, e.shape[0], f"substitute of a {name} array")
            assert_equal_pi(pi, want, f"substitute of a {name} array (SPEC §2.4: layout never changes π)", source)

    ctx.run(embeddings_and_threshold(min_n=3, max_n=16, min_dim=2, max_dim=10, min_t=0.8, max_t=0.99), body, examples=12)


def _id_width_case() -> tuple[np.ndarray, float, np.ndarray]:
    """65,600 rows in D = 8: three far-apart anchors at ids 0, 65,541 and 65,590, every other
    row an exact copy of the last anchor: π is known from the construction."""
    n, anchors = 65_600, (0, 65_541, 65_590)
    idx = np.zeros(n, dtype=np.int64)
    for k, a in enumerate(anchors):
        idx[a:] = k
    e = _UNIT[idx]
    pi = np.asarray(anchors, dtype=np.int64)[idx]
    return e, 0.9, pi


def _many_retained_case() -> tuple[np.ndarray, float, np.ndarray]:
    """1,100 far-apart rows in D = 16 (all retained), then exact copies of rows 0, 1,023, 1,024,
    1,050 and 1,099: each copy's representative is its original (retained set past 1,024)."""
    rng = np.random.default_rng(20_260_101)
    base = rng.standard_normal((1100, 16))
    base = (base / np.linalg.norm(base, axis=1, keepdims=True)).astype(np.float32)
    t = 0.99
    b64 = base.astype(np.float64)
    gram = b64 @ b64.T
    np.fill_diagonal(gram, -2.0)
    # the construction's promise: no two originals within δ (cos > t), far from the tie band
    assert float(gram.max()) < t - 0.01, f"construction failed: max cos {gram.max()}"
    copies = np.array([0, 1023, 1024, 1050, 1099, 5, 1090], dtype=np.int64)
    e = np.vstack([base, base[copies]])
    pi = np.concatenate([np.arange(1100), copies])
    return e, t, pi


def _wide_case(d: int) -> tuple[np.ndarray, float]:
    """Rows in D = ``d`` (768 or 1,024): pairs equal on their first 600 coordinates and far apart
    beyond them, exact copies, and near copies (SPEC §2.1 sums every coordinate)."""
    rng = np.random.default_rng(d)
    rows = []
    for _ in range(6):
        head = rng.standard_normal(600) * 0.05
        tail = rng.standard_normal(d - 600)
        x = np.concatenate([head, tail])
        y = np.concatenate([head, -tail])  # same head, opposite tail: far apart
        x, y = x / np.linalg.norm(x), y / np.linalg.norm(y)
        near = x + rng.standard_normal(d) * 1e-4
        rows += [x, y, x.copy(), near / np.linalg.norm(near)]
    return np.asarray(rows, dtype=np.float32), 0.95


@check("substitute.large_ids", claim="DEF1",
       spec="§1.2/§2.1 ids past 65,536, retained sets past 1,024, D = 768 and 1,024",
       parts=("substitute",), profiles=("core",),
       shown_to_fail_on=("m26_uint16_ids", "m27_retained_cap_1024", "m28_dim_buffer_512"), heavy=True)
def check_substitute_large_ids(impl: Any, ctx: Context) -> None:
    """Cheap large cases with π known by construction: ids past 2¹⁶, > 1,024 retained rows, D = 768/1,024."""
    for label, (e, t, want) in (
        ("65,600 rows, representatives past id 65,536", _id_width_case()),
        ("1,100 retained rows, then copies", _many_retained_case()),
    ):
        ctx.note({"case": label, "t": t, "n": e.shape[0]})
        pi = call_substitute(impl, e, t, f"substitute ({label})")
        assert_valid_map(e, t, pi, f"substitute ({label})")
        if impl.complete:
            assert_equal_pi(pi, want, f"substitute ({label})", "the construction (exact copies, far-apart originals)")
    for d in (768, 1024):
        e, t = _wide_case(d)
        ctx.note({"case": f"D = {d}", "embeddings": e, "t": t})
        pi = call_substitute(impl, e, t, f"substitute (D = {d})")
        assert_valid_map(e, t, pi, f"substitute (D = {d}; every coordinate counts, SPEC §2.1)")
        if impl.complete:
            assert_equal_pi(pi, oracle(e, t).pi, f"substitute (D = {d})", "the oracle")


@check("substitute.fresh_results", claim="DEF1",
       spec="§2.4 a returned π is a fresh array the caller owns: later calls never change it",
       parts=("substitute",), profiles=("core",), shown_to_fail_on=("m33_substitute_static_buffer",))
def check_substitute_fresh_results(impl: Any, ctx: Context) -> None:
    """π from one call is unchanged after a call on different input; writing into it changes nothing later."""
    (a, ta), (b, tb) = two_inputs()
    first = call_substitute(impl, a, ta)
    kept = first.copy()
    call_substitute(impl, b, tb)
    assert np.array_equal(first, kept), (
        f"substitute's earlier result changed from {kept.tolist()} to {first.tolist()} when the next call ran on "
        "different input: it must return a fresh array, not a view of a reused buffer (SPEC §2.4)"
    )
    if first.flags.writeable:
        first[:] = -7
        again = call_substitute(impl, a, ta)
        assert np.array_equal(again, kept), (
            f"after the caller wrote into a returned π, substitute returned {again.tolist()} for the same input "
            f"(expected {kept.tolist()}): the caller owns the returned array (SPEC §2.4)"
        )


@check("substitute.signed_zeros", claim="EQ1", spec="§2.1 sq is arithmetic: -0.0 and +0.0 coordinates are equal (t = 1 included)",
       parts=("substitute",), profiles=("core",), shown_to_fail_on=("m96_t1_memcmp",), complete_only=True)
def check_substitute_signed_zeros(impl: Any, ctx: Context) -> None:
    """Rows that differ only in the sign of zero coordinates are at sq = 0 and merge, at t = 1 and below."""
    a = np.array([[0.0, 1.0, 0.0, 0.0], [-0.0, 1.0, -0.0, 0.0], [0.0, 0.0, 1.0, 0.0], [-0.0, -0.0, 1.0, -0.0]], dtype=np.float32)
    for t in (1.0, 0.999, 0.5):
        ctx.note({"embeddings": a, "t": t, "expected_pi": [0, 0, 2, 2]})
        pi = call_substitute(impl, a, t, f"substitute of rows differing only in signed zeros (t = {t})")
        assert pi.tolist() == [0, 0, 2, 2], (
            f"t = {t}: rows equal up to the sign of zero are at sq = 0 <= δ² and merge; expected π = [0, 0, 2, 2], "
            f"got {pi.tolist()} (SPEC §2.1: sq is computed, not a byte comparison)"
        )


def _scaled_axis(d: int, k: int, norm: float) -> np.ndarray:
    row = np.zeros(d, dtype=np.float32)
    row[k] = np.float32(norm)
    return row


@check("substitute.threshold_ends", claim="EQ1", spec="§1.3/§2.1 t = ±1 are decided by sq <= δ², never by a shortcut",
       parts=("substitute",), profiles=("core",), shown_to_fail_on=("m97_t_minus1_all_merge", "m95_t1_no_merges"))
def check_substitute_threshold_ends(impl: Any, ctx: Context) -> None:
    """At t = -1 (δ² = 4) antipodes of norm 1 + 7e-5 stay apart and those of norm 1 - 7e-5 merge; at t = 1 only equal rows merge."""
    long_, short = 1.0 + 7e-5, 1.0 - 7e-5  # both inside the norm tolerance 1e-4 (SPEC §2.3)
    cases = []
    e = np.stack([_scaled_axis(3, 0, long_), -_scaled_axis(3, 0, long_), _scaled_axis(3, 1, short), -_scaled_axis(3, 1, short)])
    cases.append(("antipodes of norm 1 ± 7e-5 at t = -1", e, -1.0))
    e1 = np.stack([_scaled_axis(3, 0, 1.0), _scaled_axis(3, 0, 1.0), _scaled_axis(3, 0, short), _scaled_axis(3, 1, 1.0)])
    cases.append(("equal and nearly equal rows at t = 1", e1, 1.0))
    for label, e, t in cases:
        want = oracle(e, t).pi
        ctx.note({"case": label, "embeddings": e, "t": t, "expected_pi": want.tolist()})
        pi = call_substitute(impl, e, t, f"substitute ({label})")
        assert_valid_map(e, t, pi, f"substitute ({label})")
        if impl.complete:
            assert_equal_pi(pi, want, f"substitute ({label}; the rule sq <= 2 - 2t holds at the ends too)", "the oracle")


def _retained_4096_case() -> tuple[np.ndarray, float, np.ndarray]:
    """4,300 far-apart rows in D = 16 (all retained), then exact copies of rows 0, 1, 4,095, 4,096
    and 4,299: each copy's representative is its original (a retained set past 4,096)."""
    rng = np.random.default_rng(4096)
    base = rng.standard_normal((4300, 16))
    base = (base / np.linalg.norm(base, axis=1, keepdims=True)).astype(np.float32)
    t = 0.99
    b64 = base.astype(np.float64)
    worst = max(float(np.max(np.triu(b64[i : i + 512] @ b64.T, k=i + 1))) for i in range(0, 4300, 512))
    assert worst < t - 0.005, f"construction failed: two originals at cos {worst} >= {t - 0.005}"
    copies = np.array([0, 1, 4095, 4096, 4299, 2048], dtype=np.int64)
    return np.vstack([base, base[copies]]), t, np.concatenate([np.arange(4300), copies])


@check("substitute.retained_4096", claim="DEF1", spec="§5.1 every retained chunk is a candidate, past 4,096 retained rows",
       parts=("substitute",), profiles=("core",), shown_to_fail_on=("m47_retained_cap_4096",), heavy=True)
def check_substitute_retained_4096(impl: Any, ctx: Context) -> None:
    """4,300 retained far-apart rows, then copies of early and late ones: each copy maps to its original."""
    e, t, want = _retained_4096_case()
    ctx.note({"case": "4,300 retained rows then copies", "t": t, "n": e.shape[0]})
    pi = call_substitute(impl, e, t, "substitute (4,300 retained rows, then copies)")
    assert_valid_map(e, t, pi, "substitute (4,300 retained rows, then copies)")
    if impl.complete:
        assert_equal_pi(pi, want, "substitute (4,300 retained rows, then copies)", "the construction")


#: p and q = p with its four bytes reversed: both unit-norm partners (p² + q² = 1 within 7e-6), so a
#: byte-swapped read of a big-endian row is again valid input, with other distances.
_P, _Q = np.float32(0.5365028), np.float32(0.8438911)


@check("substitute.byte_order", claim="DEF1", spec="§2.4 a big-endian array is refused or gives the π of its native copy",
       parts=("substitute",), profiles=("core",), shown_to_fail_on=("m64_big_endian_rows_read_raw",))
def check_substitute_byte_order(impl: Any, ctx: Context) -> None:
    """Rows (p, q, 0) and (p, 0, q) whose byte-swapped values (q, p, 0), (q, 0, p) are valid unit rows
    at another distance: a big-endian copy is refused with ValueError or gives the native π."""
    assert _P.view(np.uint32).byteswap().view(np.float32) == _Q, "construction: q is p byte-swapped"
    e = np.array([[_P, _Q, 0.0], [_P, 0.0, _Q], [0.0, _P, _Q]], dtype=np.float32)
    t = 0.5  # native sq = 2q² ≈ 1.42 > δ² = 1; byte-swapped sq = 2p² ≈ 0.58 <= 1
    want, source = expected_pi(impl, e, t)
    ctx.note({"embeddings": e, "t": t, "expected_pi": want.tolist()})
    try:
        out = impl.substitute(e.astype(">f4"), t)
    except ValueError:
        return  # SPEC §2.4: a non-native byte order MAY be refused
    pi = as_pi(out, 3, "substitute of a big-endian array")
    assert_equal_pi(pi, want, "substitute of a big-endian array (SPEC §2.4: if accepted, the π of the native copy)", source)


@check("substitute.request_ids", claim="DEF1",
       spec="conformance §6 every reply carries its request's id exactly, ids past 2²⁴ and 2³² up to 2⁵³ - 1 (exec); answers are the oracle's",
       parts=("substitute",), profiles=("core",), shown_to_fail_on=("m150_exec_float32_request_ids",))
def check_substitute_request_ids(impl: Any, ctx: Context) -> None:
    """Over exec, ``substitute`` requests numbered from each of :data:`REQUEST_IDS` (a reply with another
    id is a protocol error); in-process the same calls run directly. Each answer is the oracle's π."""
    (a, t), (b, t2) = two_inputs()
    for rid in REQUEST_IDS:
        numbered = getattr(impl, "next_request_id", None)
        if callable(numbered):
            numbered(rid)
        ctx.note({"request_id": rid})
        for e, tt in ((a, t), (b, t2)):
            got = as_pi(impl.substitute(e, tt), e.shape[0], f"substitute (request id {rid})")
            if impl.complete:
                assert_equal_pi(got, oracle(e, tt).pi, f"substitute sent with request id {rid}", "the oracle")


# -------------------------------------------------------------------------------------------
# generic identical rows at t = 1, ties held evenly (issue 34 §2)
# -------------------------------------------------------------------------------------------
@check("substitute.identical_t1", claim="EQ1", spec="§2.1/§2.2 at t = 1 near copies beyond the tie band stay apart; exact copies merge or not only within it",
       parts=("substitute",), profiles=("core",), shown_to_fail_on=("m206_cosine_f32",))
def check_substitute_identical_t1(impl: Any, ctx: Context) -> None:
    """At t = 1, on generic float32 rows with exact and near copies: near copies (sq from 1e-8 to 1e-6) are not merged,
    exact copies (sq = 0 = δ², in the tie band of SPEC §2.2) may go either way; π is otherwise the oracle's."""

    def body(case: tuple[np.ndarray, float]) -> None:
        e, t = case
        pi = call_substitute(impl, e, t)
        judge_case(e, t, as_kept(pi), precision="float64-exact", complete=impl.complete, soundness_only=not impl.complete)

    ctx.run(identical_rows_t1(), body, examples=80)


@check("substitute.ties_sound", claim="EQ1", spec="§2.1/§15.1 exact ties and signed zeros: every merge within δ, COMPLETE or not",
       parts=("substitute",), profiles=("core",), shown_to_fail_on=("m207_incomplete_two_minus_t",))
def check_substitute_ties_sound(impl: Any, ctx: Context) -> None:
    """On the exact-tie and signed-zero cases every implementation, COMPLETE or not, merges only within δ
    (the COMPLETE-only checks exact_ties and signed_zeros then demand the merges themselves)."""
    cases = [(name, np.array(rows, dtype=np.float32), t) for name, rows, t, _ in EXACT_TIES]
    cases += [(f"signed zeros at t = {t}", SIGNED_ZEROS, t) for t in (1.0, 0.999, 0.5)]
    for name, e, t in cases:
        ctx.note({"case": name, "embeddings": e, "t": t})
        pi = call_substitute(impl, e, t, f"substitute ({name})")
        judge_case(e, t, as_kept(pi), precision="float64-exact", complete=impl.complete, soundness_only=True, exact_ties=True)
