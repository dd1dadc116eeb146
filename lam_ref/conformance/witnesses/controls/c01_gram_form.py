"""Control (must pass): distances in the Gram form |a|² + |b|² - 2a·b in float64, without exact
confirmation: it differs from the difference form by ~1e-15, inside the 1e-9 tie band (SPEC §2.2)."""

from __future__ import annotations

from ..mutants._base2 import Base2, export

CONTROL = True
ALLOWED = 'Gram-form float64 distances (inside the tie band)'


class GramForm(Base2):
    def sq_to(self, x, rows):
        return (rows * rows).sum(axis=1) + x @ x - 2.0 * (rows @ x)


export(GramForm(), globals())
