"""Checks derived from what a new outsider wrote (issue 38): L0 keys, session handles, ids, dimensions.

An implementation in Node.js, written from the docs alone, passed every check and vector; its
authors' realistic bugs then showed classes no check tried. Each check here closes one class from
the sentence it breaks, with inputs taken from the sentence's boundaries rather than from the bug:

* SPEC §7.1 compares a line by its exact UTF-8 bytes (a 64-bit key at least): lines that collide
  under the common 32-bit string hashes (Java ``String.hashCode``, FNV-1a 32, djb2; the colliding
  pairs are computed, :data:`HASH32_COLLISIONS`), lines holding NUL and lone CR, and lines equal to
  the names a dynamic language's plain map already holds (JavaScript ``Object.prototype``, Python
  dunders) must be decided as the SPEC §7 model decides them (fixed cases, then generated records
  of those lines in any order and multiplicity);
* SPEC §6.1 fixes a session's dimension with its first accepted turn: an **empty** turn of another
  ``D`` afterwards is a dimension mismatch like any other (SPEC §2.3) and is refused;
* docs/conformance.md §6: a session handle names one live session; after ``session_close`` a new
  session never takes the handle of a session still open (open, open, close, open, then random
  plans of opens, closes and admits judged against the oracle per session);
* docs/conformance.md §6: request ids are echoed exactly, past 2²⁴ (where a float32 rounds) and
  past 2³² (where a 32-bit integer wraps) up to 2⁵³ - 1.

Expected answers come from the SPEC §7 model (:func:`lam_ref.text.lines.reference_tokens`, via
``lines.semantics``), from the oracle (:func:`lam_ref.substitution.oracle`) or from how the data is
built; never from the implementation under test. The same L0 inputs are vectors of ``l0.json`` and
``l0-stubs.json`` (flags ``HashCollision32``, ``NulInLine``, ``LoneCR``, ``PrototypeName``), and the
dimension case is a vector of ``online.json`` (flag ``EmptyTurnOtherDim``).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from hypothesis import strategies as st

from ..substitution import oracle
from .checks import _as_pi, _assert_equal_pi, _expect_value_error
from .checks_edges import _accepts, _run_lines, _two_inputs
from .harness import Context, check

__all__ = [
    "HASH32_COLLISIONS",
    "PROTOTYPE_NAMES",
    "REQUEST_IDS",
    "djb2",
    "fnv1a32",
    "java_hash",
    "l0_key_cases",
]


# -------------------------------------------------------------------------------------------
# 32-bit string hashes, as ports write them, and lines that collide under each
# -------------------------------------------------------------------------------------------
def java_hash(line: str) -> int:
    """Java's ``String.hashCode`` (over UTF-16 code units, ``h = 31 h + c`` mod 2³²)."""
    raw = line.encode("utf-16-le", "surrogatepass")
    h = 0
    for k in range(0, len(raw), 2):
        h = (31 * h + int.from_bytes(raw[k : k + 2], "little")) & 0xFFFFFFFF
    return h


def fnv1a32(line: str) -> int:
    """FNV-1a, 32 bits, over the UTF-8 bytes."""
    h = 0x811C9DC5
    for b in line.encode("utf-8", "surrogatepass"):
        h = ((h ^ b) * 0x01000193) & 0xFFFFFFFF
    return h


def djb2(line: str) -> int:
    """Bernstein's djb2 (``h = 33 h + c`` from 5381, mod 2³²) over the UTF-8 bytes."""
    h = 5381
    for b in line.encode("utf-8", "surrogatepass"):
        h = (h * 33 + b) & 0xFFFFFFFF
    return h


#: Distinct lines with equal 32-bit hashes (found by a birthday search over random 12-character
#: lines for FNV-1a and djb2; ``tests/test_conformance_outsider.py`` recomputes every collision).
HASH32_COLLISIONS: dict[str, tuple[tuple[str, ...], ...]] = {
    "java": (("Aa", "BB"), ("AaAa", "BBBB", "AaBB", "BBAa")),
    "fnv1a32": (("m r03 89li1t", "h4c1zu0i yxx"),),
    "djb2": (("Ez", "FY"), ("rk0i0e57jcsu", "c3de7q0x0jr1")),
}
#: The hash functions by the names of :data:`HASH32_COLLISIONS`.
HASH32 = {"java": java_hash, "fnv1a32": fnv1a32, "djb2": djb2}

#: Names a plain JavaScript object or a Python object already holds: a seen-set written as
#: ``const seen = {}; if (seen[line]) ...`` or ``hasattr`` drops such a line on its first occurrence.
PROTOTYPE_NAMES: tuple[str, ...] = (
    "constructor", "__proto__", "toString", "toLocaleString", "hasOwnProperty", "isPrototypeOf",
    "propertyIsEnumerable", "valueOf", "__defineGetter__", "__defineSetter__", "__lookupGetter__",
    "__lookupSetter__", "__init__", "__class__", "__dict__", "__hash__", "__eq__", "__len__", "__doc__",
    "__module__", "__getattribute__",
)


def l0_key_cases() -> list[tuple[str, list[str], list[str]]]:
    """(label, records, vector flags) for SPEC §7.1's key: every line distinct by its bytes is kept."""
    cases: list[tuple[str, list[str], list[str]]] = []
    for name, groups in HASH32_COLLISIONS.items():
        for group in groups:
            first = list(group)
            cases.append((f"lines with one {name} 32-bit hash are different lines: {', '.join(map(repr, group))}",
                          ["\n".join(first), "\n".join(first[::-1] + first)], ["HashCollision32"]))
    cases += [
        ("a NUL inside a line: 'a\\0b' and 'a\\0c' differ, and both differ from 'a'",
         ["a\x00b\na\x00c\na", "a\x00c\na\x00b\na\x00"], ["NulInLine"]),
        ("lines of one and two NULs, and a NUL at the start", ["\x00\n\x00\x00\n\x00x", "\x00x\n\x00\x00\n\x00\nx"], ["NulInLine"]),
        ("a lone CR: 'p\\rq', 'p\\r', '\\rq' and 'p' are four lines", ["p\rq\np\r\n\rq\np", "p\nq\np\rq\n\rq\np\r"], ["LoneCR"]),
        ("lines equal to JavaScript Object.prototype and Python dunder names are ordinary lines",
         ["\n".join(PROTOTYPE_NAMES), "\n".join(PROTOTYPE_NAMES[::-1])], ["PrototypeName"]),
        ("prototype names next to their near twins", ["constructor\nConstructor\n__proto__\n__proto", "__proto\nconstructor "],
         ["PrototypeName"]),
    ]
    return cases


@check("lines.key_collisions", claim="L0",
       spec="§7.1 a line's key is its exact UTF-8 bytes: 32-bit hash collisions, NUL, lone CR and prototype names are distinct lines",
       parts=("lines",), profiles=("l0", "l0-stubs"),
       shown_to_fail_on=("m152_l0_java_hash_key", "m153_l0_fnv1a32_key", "m154_l0_djb2_key", "m155_l0_key_cut_at_nul",
                         "m156_l0_prototype_names"))
def check_lines_key_collisions(impl: Any, ctx: Context) -> None:
    """Lines colliding under Java hashCode, FNV-1a 32 and djb2, lines with NUL and lone CR, and lines
    named like Object.prototype members or Python dunders, against the SPEC §7 model."""
    for label, records, _flags in l0_key_cases():
        _run_lines(impl, records, label, ctx)
    # differential: records drawn from the hazardous lines in any order and multiplicity (more under --thorough)
    hazards = sorted({line for _, records, _ in l0_key_cases() for r in records for line in r.split("\n")})
    records = st.lists(st.lists(st.sampled_from(hazards), max_size=10).map("\n".join), max_size=4)
    ctx.run(records, lambda recs: _run_lines(impl, recs, "generated records of hazardous lines", ctx), 25)


# -------------------------------------------------------------------------------------------
# sessions: dimension after empty turns, handles, request ids
# -------------------------------------------------------------------------------------------
@check("online.empty_turn_other_dim", claim="VALID",
       spec="§6.1/§2.3 once a turn fixed D, an empty turn of another D is a dimension mismatch: refused, and the session goes on",
       parts=("substitute", "online"), profiles=("online",), shown_to_fail_on=("m157_empty_turn_dim_unchecked",))
def check_online_empty_turn_other_dim(impl: Any, ctx: Context) -> None:
    """After rows of D, empty turns of D - 1, D + 1 and 1 are refused; empty turns of D and the rest of
    the rows are accepted and the session's π equals the batch π."""
    (a, t), _ = _two_inputs()
    d = a.shape[1]
    session = impl.online_session(t)
    first = _as_pi(_accepts(lambda: session.admit(a[:3]), "admit of the first rows"), 3, "admit of the first rows")
    for other in sorted({d - 1, d + 1, 1, 2 * d} - {d, 0}):
        empty = np.zeros((0, other), np.float32)
        ctx.note({"fixed_dim": d, "empty_turn_dim": other})
        _expect_value_error(lambda empty=empty: session.admit(empty),
                            f"admit of an empty (0, {other}) turn after turns of D = {d} (SPEC §6.1, §2.3: a dimension mismatch)")
    same = _as_pi(_accepts(lambda: session.admit(np.zeros((0, d), np.float32)), f"admit of an empty (0, {d}) turn"), 0,
                  f"admit of an empty (0, {d}) turn")
    rest = _as_pi(_accepts(lambda: session.admit(a[3:]), "admit after the refused empty turns"), a.shape[0] - 3,
                  "admit after the refused empty turns")
    _assert_equal_pi(np.concatenate([first, same, rest]), oracle(a, t).pi if impl.complete else np.concatenate([first, rest]),
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
    (a, t), (b, t2) = _two_inputs()  # B is fed a (5 rows, over two turns); A and C are fed b
    want_b, want_c = (oracle(a, t).pi, oracle(b, t2).pi) if impl.complete else (None, None)
    sa, sb = impl.online_session(t2), impl.online_session(t)
    _as_pi(sa.admit(b[:2]), 2, "admit to session A")
    got_b = [_as_pi(sb.admit(a[:3]), 3, "admit to session B")]
    _close(sa)
    sc = impl.online_session(t2)
    ha, hb, hc = (getattr(s, "handle", None) for s in (sa, sb, sc))
    ctx.note({"handles": [ha, hb, hc]})
    if hb is not None:
        assert hc != hb, (f"session_open returned handle {hc!r} for a new session while session {hb!r} is still open "
                          "(a handle names one live session, docs/conformance.md §6)")
    got_c = _as_pi(sc.admit(b), b.shape[0], "admit to session C (opened after A was closed)")
    got_b.append(_as_pi(sb.admit(a[3:]), a.shape[0] - 3, "admit to session B after A was closed and C opened"))
    pb = np.concatenate(got_b)
    if want_b is not None:
        _assert_equal_pi(got_c, want_c, "session C, opened after a close (it must start fresh at id 0)", "the batch π")
        _assert_equal_pi(pb, want_b, "session B, alive across the close of A and the open of C", "the batch π")
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
            got = _as_pi(live[k].admit(turn), len(picks), f"admit to session {k} in plan {plan}")
            if impl.complete:
                want = oracle(_PALETTE[rows[k]], t).pi[before:] if rows[k] else np.zeros(0, np.int64)
                _assert_equal_pi(got, want, f"session {k} after the steps {plan}", "the oracle on that session's own rows")
            else:
                assert np.all((got >= 0) & (got <= np.arange(before, before + len(picks)))), (
                    f"session {k}: π {got.tolist()} is not a map of its own ids after the steps {plan}")
    for s in live.values():
        _close(s)


#: Request ids the exec checks send (docs/conformance.md §6: integers in [0, 2⁵³ - 1], echoed exactly):
#: 2^k ± 1 for the widths ports use (8, 16, 24: float32's mantissa, 31, 32), and 2⁵³ - 1, the largest
#: integer every JSON reader holds exactly.
REQUEST_IDS = tuple(n for k in (8, 16, 24, 31, 32) for n in (2**k - 1, 2**k + 1)) + (2**53 - 1,)


@check("substitute.request_ids", claim="DEF1",
       spec="conformance §6 every reply carries its request's id exactly, ids past 2²⁴ and 2³² up to 2⁵³ - 1 (exec); answers are the oracle's",
       parts=("substitute",), profiles=("core",), shown_to_fail_on=("m150_exec_float32_request_ids",))
def check_substitute_request_ids(impl: Any, ctx: Context) -> None:
    """Over exec, ``substitute`` requests numbered from each of :data:`REQUEST_IDS` (a reply with another
    id is a protocol error); in-process the same calls run directly. Each answer is the oracle's π."""
    (a, t), (b, t2) = _two_inputs()
    for rid in REQUEST_IDS:
        numbered = getattr(impl, "next_request_id", None)
        if callable(numbered):
            numbered(rid)
        ctx.note({"request_id": rid})
        for e, tt in ((a, t), (b, t2)):
            got = _as_pi(impl.substitute(e, tt), e.shape[0], f"substitute (request id {rid})")
            if impl.complete:
                _assert_equal_pi(got, oracle(e, tt).pi, f"substitute sent with request id {rid}", "the oracle")
