"""Mutant: the online session compares a turn's arrivals only with chunks retained in *earlier*
turns (the index is updated at the end of the turn), so duplicates inside one turn survive.
SPEC §6: R and the index update inside the turn. Its batch ``substitute`` is correct."""

from __future__ import annotations

import numpy as np

from ._base import Base, BaseSession, export

BUG = "no matching within a turn"
VIOLATES = "ONLINE"


class NoIntraTurn(Base):
    def admit_turn(self, state: BaseSession, turn: np.ndarray) -> np.ndarray:
        state.turn_start = len(state.rows)  # type: ignore[attr-defined]
        return super().admit_turn(state, turn)

    def candidates(self, state: BaseSession, e: np.ndarray, i: int) -> list[int]:
        start = getattr(state, "turn_start", 0)
        return [y for y in range(start) if state.pi[y] == y]

    def substitute(self, embeddings, t):  # noqa: ANN001 - batch mode is the correct skeleton
        return Base().substitute(embeddings, t)


export(NoIntraTurn(), globals())
