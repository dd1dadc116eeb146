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
from ...substitution import oracle
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


@check("online.empty_turn_other_dim", claim="VALID",
       spec="§6.1/§2.3 once a turn fixed D, an empty turn of another D is a dimension mismatch: refused, and the session goes on",
       parts=("substitute", "online"), profiles=("online",), shown_to_fail_on=("m157_empty_turn_dim_unchecked",))
def check_online_empty_turn_other_dim(impl: Any, ctx: Context) -> None:
    """After rows of D, empty turns of D - 1, D + 1 and 1 are refused; empty turns of D and the rest of
    the rows are accepted and the session's π equals the batch π."""
    (a, t), _ = two_inputs()
    d = a.shape[1]
    session = impl.online_session(t)
    first = as_pi(accepts(lambda: session.admit(a[:3]), "admit of the first rows"), 3, "admit of the first rows")
    for other in sorted({d - 1, d + 1, 1, 2 * d} - {d, 0}):
        empty = np.zeros((0, other), np.float32)
        ctx.note({"fixed_dim": d, "empty_turn_dim": other})
        expect_value_error(lambda empty=empty: session.admit(empty),
                            f"admit of an empty (0, {other}) turn after turns of D = {d} (SPEC §6.1, §2.3: a dimension mismatch)")
    same = as_pi(accepts(lambda: session.admit(np.zeros((0, d), np.float32)), f"admit of an empty (0, {d}) turn"), 0,
                  f"admit of an empty (0, {d}) turn")
    rest = as_pi(accepts(lambda: session.admit(a[3:]), "admit after the refused empty turns"), a.shape[0] - 3,
                  "admit after the refused empty turns")
    assert_equal_pi(np.concatenate([first, same, rest]), oracle(a, t).pi if impl.complete else np.concatenate([first, rest]),
                     "online after refused empty turns of another D", "the batch π")


def _close(session: Any) -> None:
    """End a session: ``session_close`` over exec; in-process, its ``close()`` if it has one."""
    close = getattr(session, "close", None)
    if callable(close):
        close()


@check("online.session_handles", claim="ONLINE",
       spec="conformance §6 a handle names one live session: open A, B; close A; open C: B goes on, C starts fresh",
       parts=("substitute", "online"), profiles=("online",), shown_to_fail_on=("m151_exec_handle_reuse",))
def check_online_session_handles(impl: Any, ctx: Context) -> None:
    """Sessions A and B are opened and fed; A is closed; C is opened. B must continue its own ids and
    retained set, C must start at id 0 with nothing retained, and their handles (over exec) differ."""
    (a, t), (b, t2) = two_inputs()  # B is fed a (5 rows, over two turns); A and C are fed b
    want_b, want_c = (oracle(a, t).pi, oracle(b, t2).pi) if impl.complete else (None, None)
    sa, sb = impl.online_session(t2), impl.online_session(t)
    as_pi(sa.admit(b[:2]), 2, "admit to session A")
    got_b = [as_pi(sb.admit(a[:3]), 3, "admit to session B")]
    _close(sa)
    sc = impl.online_session(t2)
    ha, hb, hc = (getattr(s, "handle", None) for s in (sa, sb, sc))
    ctx.note({"handles": [ha, hb, hc]})
    if hb is not None:
        assert hc != hb, (f"session_open returned handle {hc!r} for a new session while session {hb!r} is still open "
                          "(a handle names one live session, docs/conformance.md §6)")
    got_c = as_pi(sc.admit(b), b.shape[0], "admit to session C (opened after A was closed)")
    got_b.append(as_pi(sb.admit(a[3:]), a.shape[0] - 3, "admit to session B after A was closed and C opened"))
    pb = np.concatenate(got_b)
    if want_b is not None:
        assert_equal_pi(got_c, want_c, "session C, opened after a close (it must start fresh at id 0)", "the batch π")
        assert_equal_pi(pb, want_b, "session B, alive across the close of A and the open of C", "the batch π")
    else:
        assert got_c[0] == 0 and np.all(got_c <= np.arange(b.shape[0])), f"session C does not start fresh at id 0: π = {got_c[:8]}"
        assert np.all(pb <= np.arange(a.shape[0])) and pb[3] >= 2, f"session B lost its ids across a close and an open: π = {pb[:8]}"
    _close(sb)
    _close(sc)
    ctx.run(_session_plans(), lambda plan: _run_plan(impl, plan, ctx), 8)


#: Unit rows of D = 4 at a few angles (pairs 1-2 degrees apart merge at t = cos 30 degrees; the rest do not).
_PALETTE = np.array([[np.cos(np.radians(a)), np.sin(np.radians(a)), 0.0, 0.0] for a in (0, 1, 90, 92, 180, 200, 270)],
                    dtype=np.float32)


def _session_plans() -> st.SearchStrategy[list[tuple[str, int, tuple[int, ...]]]]:
    """Steps ("open" | "close" | "admit", session 0-2, palette rows) in any order."""
    step = st.tuples(st.sampled_from(("open", "close", "admit", "admit")), st.integers(0, 2),
                     st.lists(st.integers(0, len(_PALETTE) - 1), max_size=3).map(tuple))
    return st.lists(step, min_size=1, max_size=12)


def _run_plan(impl: Any, plan: list[tuple[str, int, tuple[int, ...]]], ctx: Context) -> None:
    """Run ``plan`` (admits to a closed or unopened session are skipped); every admit's π must be the
    oracle's on that session's own rows (a soundness-only implementation: a valid map of them)."""
    t = float(np.cos(np.radians(30.0)))
    live: dict[int, Any] = {}
    rows: dict[int, list[int]] = {}
    ctx.note({"plan": plan})
    for op, k, picks in plan:
        if op == "open" and k not in live:
            live[k], rows[k] = impl.online_session(t), []
        elif op == "close" and k in live:
            _close(live.pop(k))
        elif op == "admit" and k in live:
            before = len(rows[k])
            rows[k].extend(picks)
            turn = _PALETTE[list(picks)] if picks else np.zeros((0, 4), np.float32)
            got = as_pi(live[k].admit(turn), len(picks), f"admit to session {k} in plan {plan}")
            if impl.complete:
                want = oracle(_PALETTE[rows[k]], t).pi[before:] if rows[k] else np.zeros(0, np.int64)
                assert_equal_pi(got, want, f"session {k} after the steps {plan}", "the oracle on that session's own rows")
            else:
                assert np.all((got >= 0) & (got <= np.arange(before, before + len(picks)))), (
                    f"session {k}: π {got.tolist()} is not a map of its own ids after the steps {plan}")
    for s in live.values():
        _close(s)
