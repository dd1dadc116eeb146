"""Mutant: connected components of the δ-graph (union-find), each chunk mapped to its component's
lowest id — the "C4" construction the paper rules out: on a chain a~b~c with a≁c, c is mapped to
a at a distance beyond δ."""

from __future__ import annotations

import numpy as np

from ._base import Base, BaseSession, export

BUG = "union-find components instead of greedy first-occurrence substitution"
VIOLATES = "C4"


class UnionFind(Base):
    def admit_turn(self, state: BaseSession, turn: np.ndarray) -> np.ndarray:
        first = len(state.rows)
        state.rows.extend(turn)
        e = np.asarray(state.rows, dtype=np.float32).reshape(len(state.rows), turn.shape[1])
        n, d2 = e.shape[0], self.threshold(state.t)
        parent = list(range(n))

        def find(a: int) -> int:
            while parent[a] != a:
                parent[a] = parent[parent[a]]
                a = parent[a]
            return a

        for i in range(1, n):
            sq = self.distances(e, i, list(range(i)))
            for j in np.flatnonzero(sq <= d2).tolist():
                ri, rj = find(i), find(j)
                parent[max(ri, rj)] = min(ri, rj)
        pi = [find(i) for i in range(n)]  # roots are the lowest ids of their components
        state.pi = pi
        return np.asarray(pi[first:], dtype=np.int64)


export(UnionFind(), globals())
