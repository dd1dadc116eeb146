"""What every claim measure sees on one set: :class:`SetContext` (SPEC §11).

The context holds the rows, the threshold, the map of the compactor under test and the greedy
oracle's map, the options of ``lam-ref verify``, and the quantities several claims share,
computed once on first use (the deficit queries of ``THM1``/``HULL``, the exact covering and
packing numbers of ``PROP2``/``THM2``/``COR3``).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import Any

import numpy as np

from ..covering import covering_number, greedy_kept, packing_number, t_half
from ..geometry import delta_from_t, delta_sq, t_prime
from ..theory import (
    HullDeficit,
    SubstitutionCheck,
    adversarial_queries,
    hull_deficit,
    measure_substitution,
    random_queries,
    score_deficits,
)

__all__ = ["SetContext"]


@dataclass
class SetContext:
    """One set under verification.

    ``e`` are the validated unit rows, ``t`` the threshold, ``result`` the compactor under
    test's :class:`~lam_ref.substitution.SubstitutionResult` (banded ``r``/``rel`` or
    ``exhaustive``), ``greedy`` the exhaustive oracle's. The remaining fields are the options
    of :func:`lam_ref.verify.verify_set`.
    """

    e: np.ndarray
    t: float
    result: Any
    greedy: Any
    r: int = 4
    rel: float = 0.2
    exhaustive: bool = False
    n_queries: int = 256
    top_k: int = 10
    exact_limit: int = 200
    time_limit: float = 20.0
    hull_limit: int = 500
    weights: Any | None = None
    seed: int = 0

    @property
    def n(self) -> int:
        return int(self.e.shape[0])

    @property
    def dim(self) -> int:
        return int(self.e.shape[1])

    @cached_property
    def delta(self) -> float:
        return delta_from_t(self.t)

    @cached_property
    def d2(self) -> float:
        return delta_sq(self.t)

    @property
    def pi(self) -> np.ndarray:
        return self.result.pi

    @cached_property
    def kept(self) -> np.ndarray:
        return self.result.kept

    @cached_property
    def check(self) -> SubstitutionCheck:
        """Definition 1 on the map under test (``DEF1``), with its measured ``δ̂``."""
        return measure_substitution(self.e, self.pi, self.t)

    @cached_property
    def random_queries(self) -> np.ndarray:
        return random_queries(self.dim, self.n_queries, self.seed)

    @cached_property
    def hull(self) -> HullDeficit:
        return hull_deficit(self.e, self.kept, limit=self.hull_limit)

    @cached_property
    def deficits(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Score deficits ``(all, sampled, adversarial)`` over the random queries, the
        adversarial ones of every deleted row and the HULL maximiser (``THM1``, ``HULL``)."""
        q_rand = self.random_queries
        queries = [q_rand, adversarial_queries(self.e, self.pi)]
        if self.hull.query is not None:
            queries.append(self.hull.query[None, :])
        defs = score_deficits(self.e, self.kept, np.concatenate(queries))
        return defs, defs[: q_rand.shape[0]], defs[q_rand.shape[0] :]

    @cached_property
    def kept_2delta(self) -> int:
        """Greedy's retained count at radius ``2δ`` (``t' = 4t - 3``; Theorem 2)."""
        return int(greedy_kept(self.e, t_prime(self.t)).size)

    @property
    def exact(self) -> bool:
        """Whether the exact covering/packing numbers are computed (``n <= exact_limit``)."""
        return self.n <= self.exact_limit

    @cached_property
    def covering(self):
        return covering_number(self.e, self.t, time_limit=self.time_limit) if self.exact else None

    @cached_property
    def packing(self):
        return packing_number(self.e, self.t, time_limit=self.time_limit) if self.exact else None

    @cached_property
    def covering_half(self):
        return covering_number(self.e, t_half(self.t), time_limit=self.time_limit) if self.exact else None

    @property
    def n_opt(self) -> int | None:
        """The exact covering number ``N(δ)`` when solved to optimality, else ``None``."""
        cov = self.covering
        return int(cov.value) if cov is not None and cov.optimal else None
