r"""LAM seen through Context Compaction Theory (claims ``CCT-LAM`` and ``CCT-COVER``).

* **LAM is an online SELECT strategy** (:func:`lam_select`): Algorithm 1 keeps a subset of the
  arriving chunks, unchanged, and decides each arrival from the arrivals so far
  (:class:`lam_ref.online.OnlineSession`); what the reader sees of the kept chunks is their
  values. With its **stubs** (SPEC §8, :mod:`lam_ref.text.stubs`) LAM leaves SELECT: a stub
  ``[LAM:L1 i=j d=…]`` is a new token sequence naming a dropped chunk, a side channel of a few
  tokens per drop. :func:`lam_with_stubs` is that GEN algorithm; it answers the count query
  (how many chunks arrived), which no SELECT algorithm that drops a near-duplicate can
  (Theorem ``CCT-COUNT``: zero-error SELECT must keep every item).
* **Record reconstruction** (:func:`reconstruct_game`): Alice holds one record ``x ∈ S``; Bob
  must output a record of ``S`` within δ of it (the merge rule). A zero-error protocol's
  answers form an internal δ-covering, so the least number of messages is ``N(S, δ)``
  (:func:`lam_ref.covering.covering_number`): ``⌈log2 N(S, δ)⌉`` bits fixed-length,
  ``⌈log2(N(S, δ) + 1)⌉ - 1`` variable-length. Records pairwise more than ``2δ`` apart share no
  valid answer, so a ``2δ``-packing is a fooling set: ``M(S, 2δ) <= N(S, δ)``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..geometry import delta_sq, sq_dist_rows, validate_embeddings, validate_threshold
from ..online import OnlineSession
from ..text.stubs import L1Stub, is_stub_line, parse_stub
from .games import Game, GenAlgorithm, SelectAlgorithm

__all__ = ["lam_select", "lam_with_stubs", "multiset_count_game", "reconstruct_game"]


def reconstruct_game(embeddings: Any, t: float) -> Game:
    """One record ``(i,)`` per input, one query, outputs = record ids; value 1 iff
    ``sq(e_i, e_a) <= δ²`` (SPEC §2). The least zero-error GEN budget is ``log2 N(S, δ)``."""
    e = validate_embeddings(embeddings)
    d2 = delta_sq(validate_threshold(t))
    n = e.shape[0]
    rows = np.repeat(np.arange(n), n)
    ok = (sq_dist_rows(e, rows, e[np.tile(np.arange(n), n)]) <= d2).reshape(n, n)
    return Game(
        inputs=tuple((i,) for i in range(n)),
        queries=("reconstruct",),
        outputs=tuple(range(n)),
        value=lambda x, q, a: 1.0 if ok[x[0], a] else 0.0,
        name=f"reconstruct within delta (t={t})",
    )


def _session_kept(embeddings: np.ndarray, x: tuple, t: float) -> tuple[np.ndarray, np.ndarray]:
    """Algorithm 1 over the chunks ``x`` (row ids), one arrival per turn: ``(kept mask, π)``."""
    s = OnlineSession(t, exhaustive=True)
    for i in x:
        s.admit(embeddings[[i]])
    return s.kept.copy(), s.pi.copy()


def lam_select(embeddings: Any, t: float) -> SelectAlgorithm:
    """LAM as a SELECT algorithm over items that are row ids of ``embeddings``: the selector is
    Algorithm 1 run online over ``X`` (each arrival decided against the retained set so far);
    the decoder answers the count query from the unordered retained values alone (their number —
    the best it can do without a side channel)."""
    e = validate_embeddings(embeddings)
    t = validate_threshold(t)

    def selector(x: tuple) -> list[int]:
        if not x:
            return []
        kept, _ = _session_kept(e, x, t)
        return [int(p) for p in np.flatnonzero(kept)]

    return SelectAlgorithm(selector, lambda values, q: len(values), name=f"lam-online t={t}")


def _to_bits(text: str) -> str:
    return "".join(format(b, "08b") for b in text.encode("utf-8"))


def _from_bits(bits: str) -> str:
    return bytes(int(bits[i : i + 8], 2) for i in range(0, len(bits), 8)).decode("utf-8")


def lam_with_stubs(embeddings: Any, t: float) -> GenAlgorithm:
    """LAM plus its stub side channel as a GEN algorithm: the message is the UTF-8 text of the
    retained chunks (one ``chunk <id>`` line each) followed by one L1 stub line per dropped chunk
    (:class:`lam_ref.text.stubs.L1Stub`), 8 bits per byte. The interpreter answers the count
    query by counting retained lines plus parsed stubs."""
    e = validate_embeddings(embeddings)
    t = validate_threshold(t)

    def condenser(x: tuple) -> str:
        if not x:
            return ""
        kept, pi = _session_kept(e, x, t)
        lines = [f"chunk {x[p]}" for p in np.flatnonzero(kept)]
        for p in np.flatnonzero(~kept):
            rep = int(pi[p])
            d = float(np.sqrt(sq_dist_rows(e, np.array([x[p]]), e[[x[rep]]])[0]))
            lines.append(L1Stub(int(p), rep, min(d, 2.0)).render())
        return _to_bits("\n".join(lines))

    def interpreter(message: str, q: Any) -> int:
        lines = [ln for ln in _from_bits(message).split("\n") if ln]
        stubs = [parse_stub(ln) for ln in lines if is_stub_line(ln)]
        return sum(1 for ln in lines if not is_stub_line(ln)) + len(stubs)

    return GenAlgorithm(condenser, interpreter, name=f"lam+stubs t={t}")


def multiset_count_game(n_rows: int, max_len: int) -> Game:
    """The count query over sequences of row ids (repeats allowed, order ignored by the value):
    inputs are every non-decreasing tuple over ``range(n_rows)`` of length ``0..max_len``;
    the answer ``len(X)`` has value 1."""
    import itertools

    inputs = tuple(
        x for k in range(max_len + 1) for x in itertools.combinations_with_replacement(range(n_rows), k)
    )
    return Game(
        inputs=inputs,
        queries=("count",),
        outputs=tuple(range(max_len + 1)),
        value=lambda x, q, a: 1.0 if a == len(x) else 0.0,
        name=f"multiset count rows={n_rows} len<={max_len}",
    )
