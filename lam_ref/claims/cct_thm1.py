r"""CCT-THM1: Generation equals one-way communication."""

from __future__ import annotations

from ._base import Claim

CLAIM = Claim(
    "CCT-THM1",
    "Generation equals one-way communication",
    r"\min\{B:\ \mathrm{GEN}_B\ \text{errs}\le\varepsilon\}=R^{\to}_{\mu,\varepsilon}(\Pi_G)\ \text{and}\ R^{\to}_{\varepsilon}(\Pi_G);\qquad \mathrm{err}^{\mathrm{wc}}_B\ge\mathrm{err}^{\mu}_B\ \forall\mu",
    "Context Compaction Theory §4.1, Theorem 1",
    ("lam_ref.cct.games.best_by_play", "lam_ref.cct.solvers.distributional_optimum", "lam_ref.cct.solvers.worst_case_optimum", "lam_ref.cct.solvers.zero_error_budget"),
    origin="peer: Context Compaction Theory",
    note="Checked on random tiny functions: exhaustive play of every condenser/interpreter pair equals the partition/MILP optimum of the value table; the worst-case LP dominates every drawn distribution and meets it at its dual.",
)
