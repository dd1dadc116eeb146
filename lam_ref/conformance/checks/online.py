"""Checks of the area ``online``: Algorithm 1's sessions (SPEC §6; claim ONLINE).

Online ≡ batch for any split into turns; sessions are independent; results of earlier turns stay
as returned; empty turns (the first accepted turn, even empty, fixes the dimension); a rejected
turn leaves a fresh session without a dimension; a caller may reuse its input buffer.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from hypothesis import strategies as st

from ...strategies import embeddings_and_threshold, turn_splits
from ..asserts import (
    accepts,
    as_pi,
    assert_equal_pi,
    assert_valid_map,
    call_substitute,
    expect_value_error,
    expected_pi,
    oracle_pi,
    two_inputs,
)
from ..harness import Context, check
from ..strategies import mixed_embeddings


def _admit_all(impl: Any, e: np.ndarray, t: float, lengths: list[int], where: str) -> np.ndarray:
    session = impl.online_session(t)
    outs, start = [], 0
    for k, length in enumerate(lengths):
        turn = e[start : start + length]
        out = session.admit(turn)
        outs.append(as_pi(out, length, f"{where}: admit of turn {k} ({length} rows)"))
        start += length
    return np.concatenate(outs) if outs else np.zeros(0, dtype=np.int64)


@st.composite
def _online_case(draw: Any) -> tuple[np.ndarray, float, list[int]]:
    e, t = draw(mixed_embeddings().filter(lambda c: c[0].shape[0] >= 1))
    lengths = draw(turn_splits(e.shape[0], allow_empty=False))
    return e, t, lengths


@check("online.equals_batch", claim="ONLINE", spec="§6 online ≡ batch for any split into turns", parts=("substitute", "online"), profiles=("online",), shown_to_fail_on=("m05_keep_newest", "m08_no_intra_turn"))
def check_online_equals_batch(impl: Any, ctx: Context) -> None:
    """Concatenated admit() outputs equal substitute()'s π for a random split, one turn, and one row per turn."""

    def body(case: tuple[np.ndarray, float, list[int]]) -> None:
        e, t, lengths = case
        n = e.shape[0]
        batch = call_substitute(impl, e, t)
        assert_valid_map(e, t, batch, "substitute")
        reference = oracle_pi(e, t) if impl.complete else batch
        source = "the oracle (COMPLETE = True)" if impl.complete else "this implementation's substitute()"
        if impl.complete:
            assert_equal_pi(batch, reference, "substitute", "the oracle")
        for label, split in (("random split", lengths), ("one turn", [n]), ("one row per turn", [1] * n)):
            where = f"online, {label} {split if len(split) <= 12 else f'({len(split)} turns)'}"
            pi = _admit_all(impl, e, t, split, where)
            assert_valid_map(e, t, pi, where)
            assert_equal_pi(pi, reference, where, source)

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
                got_a.append(as_pi(sa.admit(ea[k : k + 1]), 1, f"session A admit {k}"))
            if k < eb.shape[0]:
                got_b.append(as_pi(sb.admit(eb[k : k + 1]), 1, f"session B admit {k}"))
        for label, e, t, got in (("A", ea, ta, got_a), ("B", eb, tb, got_b)):
            pi = np.concatenate(got)
            assert_valid_map(e, t, pi, f"session {label} (interleaved with another session)")
            if impl.complete:
                assert_equal_pi(pi, oracle_pi(e, t), f"session {label} (interleaved)", "the oracle")

    data = embeddings_and_threshold(min_n=2, max_n=20, min_dim=4, max_dim=4, min_t=0.8, max_t=0.99)
    ctx.run(st.tuples(data, data), body, examples=50)


@check("online.fresh_results", claim="ONLINE",
       spec="§2.4/§6.1 admit returns a fresh array (the next admit never changes it) and takes turns in any layout",
       parts=("substitute", "online"), profiles=("online",), shown_to_fail_on=("m32_admit_reuses_buffer", "m23_ignores_strides"))
def check_online_fresh_results(impl: Any, ctx: Context) -> None:
    """Results of earlier turns stay as returned while later turns (different rows, sizes, layouts:
    Fortran-ordered, strided, read-only) run; together they equal the batch π."""
    (a, t), (b, _) = two_inputs()
    session = impl.online_session(t)
    outs, kept = [], []
    strided = np.full((5, 5), 3.0, dtype=np.float32)
    strided[1::2, ::2] = a[:2]
    readonly = b[1:].copy()
    readonly.setflags(write=False)
    turns = (a, np.asfortranarray(b), strided[1::2, ::2], readonly)
    layouts = ("C-ordered", "Fortran-ordered", "strided", "read-only")
    for k, turn in enumerate(turns):
        out = accepts(lambda turn=turn: session.admit(turn), f"admit of turn {k} ({layouts[k]}, SPEC §2.4)")
        out = as_pi(out, turn.shape[0], f"admit of turn {k}")
        outs.append(out)
        kept.append(out.copy())
    for k, (out, copy) in enumerate(zip(outs, kept)):
        assert np.array_equal(out, copy), (
            f"the result of turn {k} changed from {copy.tolist()} to {out.tolist()} after later turns: admit must return "
            "a fresh array the caller owns, not a view of session state or a reused buffer (SPEC §2.4, §6.1)"
        )
    e = np.vstack([a, b, a[:2], b[1:]])
    assert_equal_pi(np.concatenate(kept), expected_pi(impl, e, t)[0], "online over four turns", "the batch π")


@check("online.empty_turns", claim="ONLINE",
       spec="§6.1 an empty turn is valid, returns int64[0], takes no id, and (as the first turn) fixes D",
       parts=("substitute", "online"), profiles=("online",), shown_to_fail_on=("m31_dim_from_nonempty_only",))
def check_online_empty_turns(impl: Any, ctx: Context) -> None:
    """Empty (0, D) turns anywhere in a session; the first accepted turn, even empty, fixes the dimension."""
    (a, t), _ = two_inputs()
    d = a.shape[1]
    session = impl.online_session(t)
    outs = []
    for k, turn in enumerate((np.zeros((0, d), np.float32), a[:2], np.zeros((0, d), np.float32), a[2:])):
        out = accepts(lambda turn=turn: session.admit(turn), f"admit of turn {k} with {turn.shape[0]} rows (SPEC §6.1)")
        outs.append(as_pi(out, turn.shape[0], f"admit of turn {k} ({turn.shape[0]} rows)"))
    assert_equal_pi(np.concatenate(outs), expected_pi(impl, a, t)[0], "online with empty turns (they take no ids)", "the batch π")
    fresh = impl.online_session(t)
    as_pi(accepts(lambda: fresh.admit(np.zeros((0, d), np.float32)), "admit of an empty first turn"), 0, "admit of an empty first turn")
    other = np.eye(d + 1, dtype=np.float32)[:2]
    expect_value_error(
        lambda: fresh.admit(other),
        f"admit of D = {d + 1} rows after an empty first turn of D = {d} (SPEC §6.1: the first accepted turn fixes D)",
    )


@check("online.rejected_turn", claim="VALID",
       spec="§6.1 a rejected turn leaves the session exactly as it was, including its dimension and next id",
       parts=("substitute", "online"), profiles=("online",), shown_to_fail_on=("m34_dim_fixed_before_validation",))
def check_online_rejected_turn(impl: Any, ctx: Context) -> None:
    """A fresh session whose first turn is rejected has no dimension yet and starts at id 0; rejected
    turns later (bad row, wrong D, wrong rank) change nothing."""
    (a, t), _ = two_inputs()
    d = a.shape[1]
    bad_wide = np.eye(d + 2, dtype=np.float32)[:3]
    bad_wide[1, 0] = np.nan
    session = impl.online_session(t)
    expect_value_error(lambda: session.admit(bad_wide), f"admit of a first turn of D = {d + 2} with a NaN in row 1", "1")
    first = as_pi(accepts(lambda: session.admit(a[:3]), f"admit of D = {d} rows after a rejected first turn of D = {d + 2} "
                             "(a rejected turn fixes no dimension, SPEC §6.1)"), 3, "admit after a rejected first turn")
    for what, bad in (
        ("a NaN row", np.vstack([a[3:], np.full((1, d), np.nan, np.float32)])),
        (f"D = {d + 1}", np.eye(d + 1, dtype=np.float32)[:2]),
        ("a 1-D array", a[3].copy()),
        ("a zero row", np.vstack([a[3:4], np.zeros((1, d), np.float32)])),
    ):
        expect_value_error(lambda bad=bad: session.admit(bad), f"admit of a turn with {what}")
    rest = as_pi(session.admit(a[3:]), a.shape[0] - 3, "admit after rejected turns")
    assert_equal_pi(np.concatenate([first, rest]), expected_pi(impl, a, t)[0],
                     "online after rejected turns (ids must continue from the accepted rows only)", "the batch π")


@check("online.caller_buffer_reuse", claim="ONLINE", spec="§6.1 a session's state is its own: the caller may reuse its input buffer",
       parts=("substitute", "online"), profiles=("online",), shown_to_fail_on=("m72_keeps_caller_rows",))
def check_online_caller_buffer_reuse(impl: Any, ctx: Context) -> None:
    """Every turn is written into one buffer the caller reuses; π over the turns equals the batch π."""
    rng = np.random.default_rng(72)
    centres = rng.standard_normal((5, 8))
    rows = np.repeat(centres, 4, axis=0) + 0.02 * rng.standard_normal((20, 8))
    e = (rows / np.linalg.norm(rows, axis=1, keepdims=True)).astype(np.float32)[rng.permutation(20)]
    t = 0.95
    want, source = expected_pi(impl, e, t)
    session = impl.online_session(t)
    buf = np.zeros((4, 8), dtype=np.float32)
    outs = []
    for k in range(0, 20, 4):
        buf[:] = e[k : k + 4]
        ctx.note({"turn": k // 4, "embeddings": e, "t": t})
        outs.append(as_pi(accepts(lambda: session.admit(buf), f"admit of turn {k // 4}"), 4, f"admit of turn {k // 4}"))
    assert_equal_pi(np.concatenate(outs), want, "online, every turn written into one reused buffer (the session must keep its own rows)", source)
