"""Exact optima of the membership game at toy scale (Context Compaction Theory App. A, claim
``CCT-APPA``): the measurement the paper makes for an LLM endpoint — a compactor's error against
the optimal error at the same budget — done exactly where the optimum is computable.

The game is :func:`lam_ref.cct.games.membership_game` (``X`` any ``N``-subset of ``U``), with the
case study's query distribution: ``X`` uniform, the query a uniform member or a uniform
non-member with probability ½ each. Budgets are bits; a SELECT item costs ``log2 u`` bits.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..geometry import LamValueError
from .games import GenAlgorithm, SelectAlgorithm, error_table, membership_game
from .solvers import (
    EXHAUSTIVE_LIMIT,
    distributional_optimum,
    select_distributional_optimum,
    select_options,
    stirling2,
)

__all__ = ["half_member_mu", "toy_table"]


def half_member_mu(u: int, members: int) -> np.ndarray:
    """``μ(X, q)``: ``X`` uniform over ``N``-subsets; ``q`` a uniform member or non-member, ½ each."""
    g = membership_game(u, members)
    r = len(g.inputs)
    mu = np.zeros((r, u))
    for i, x in enumerate(g.inputs):
        for q in range(u):
            if q in x:
                mu[i, q] = (0.5 if members < u else 1.0) / members / r
            elif members > 0:
                mu[i, q] = 0.5 / (u - members) / r
            else:
                mu[i, q] = 1.0 / u / r
    return mu / mu.sum()


def toy_table(u: int = 4, members: int = 2, max_bits: int = 3) -> dict[str, Any]:
    """For budgets ``0..max_bits`` bits: GEN optimum, SELECT optimum (``⌊B/log2 u⌋`` items), and the
    errors of keep-first SELECT, a one-hash Bloom filter of ``B`` bits and always-no."""
    if isinstance(max_bits, bool) or not isinstance(max_bits, int) or not 0 <= max_bits <= 6:
        raise LamValueError(f"max_bits must be an integer in [0, 6] for the exact toy solvers, got {max_bits!r}")
    g = membership_game(u, members)
    if members < 1 or members >= u:
        raise LamValueError(f"members must be in [1, u - 1] for a non-trivial game, got {members}")
    mu = half_member_mu(u, members)
    item_bits = math.log2(u)
    r = len(g.inputs)
    rows = []
    for b in range(max_bits + 1):
        k = min((1 << (b + 1)) - 1, r)
        method = "exhaustive" if stirling2(r, k) <= EXHAUSTIVE_LIMIT else "milp"
        gen = distributional_optimum(g, mu, b, method=method).error
        j = math.floor(b / item_bits + 1e-9)
        options, _ = select_options(g, j)
        smethod = "exhaustive" if math.prod(len(o) for o in options) <= 20_000 else "milp"
        sel = select_distributional_optimum(g, mu, j, method=smethod).error
        keep = SelectAlgorithm(lambda x, j=j: list(range(min(j, len(x)))), lambda v, q: q in v)
        keep_first = float((error_table(g, keep, j) * mu).sum())
        bloom = GenAlgorithm(
            lambda x, b=b: "".join("1" if any(y % b == i for y in x) else "0" for i in range(b)),
            lambda m, q: bool(m) and m[q % len(m)] == "1",
        )
        bloom_err = float((error_table(g, bloom, b) * mu).sum())
        always_no = float((error_table(g, GenAlgorithm(lambda x: "", lambda m, q: False), b) * mu).sum())
        rows.append({"bits": b, "gen_optimum": gen, "gen_method": method, "select_optimum": sel,
                     "select_items": j, "select_method": smethod, "keep_first": keep_first, "bloom": bloom_err,
                     "always_no": always_no})
    return {"universe": u, "members": members, "inputs": r, "item_bits": item_bits, "rows": rows}
