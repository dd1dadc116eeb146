"""Mutant: online sessions keep their retained set in class-level lists, so two sessions of one
process share state (SPEC §6: a session holds its own t, R, index and next id)."""

from __future__ import annotations

from ._base import Base, BaseSession, export

BUG = "online sessions share one retained set (class attributes)"
VIOLATES = "ONLINE"


class SharedSession(BaseSession):
    _rows: list = []
    _pi: list = []

    def __init__(self, owner: Base, t: float) -> None:
        super().__init__(owner, t)
        self.rows = SharedSession._rows
        self.pi = SharedSession._pi


class SharedState(Base):
    Session = SharedSession

    def substitute(self, embeddings, t):  # noqa: ANN001 - batch mode stays correct
        return Base().substitute(embeddings, t)


export(SharedState(), globals())
