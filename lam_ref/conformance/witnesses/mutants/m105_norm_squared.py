"""Mutant: the norm check is applied to ‖e‖² (no square root), which halves the tolerance on ‖e‖: valid
rows of norm 1 ± 6e-5 are rejected (SPEC §2.3: ‖e‖ within 1e-4 of 1)."""

from __future__ import annotations

import numpy as np

from ._base2 import Base2, export

BUG = 'tolerance applied to the squared norm'
VIOLATES = 'VALID'
CLASS = 'special-cased threshold'
IDIOM = 'C: if (fabs(dot(e, e) - 1.0) > 1e-4) reject;'
NEEDS = 'rows with norm inside the tolerance but |‖e‖² - 1| > 1e-4'
CAUGHT_BY: tuple[str, ...] = ('validation.substitute', 'validation.norm_tolerance', 'substitute.threshold_ends')


class NormSquared(Base2):
    def norm_bad(self, norms):
        return np.abs(norms * norms - 1.0) > self.NORM_TOL


export(NormSquared(), globals())
