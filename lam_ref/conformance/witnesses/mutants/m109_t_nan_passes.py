"""Mutant: t is validated as `if t < -1 or t > 1: reject`, which lets NaN through (every comparison
with NaN is false); δ² is then NaN and nothing merges (SPEC §2.3: t outside [-1, 1], NaN included,
is refused)."""

from __future__ import annotations

from ._base2 import Base2, export

BUG = 'NaN threshold accepted'
VIOLATES = 'VALID'
CLASS = 'special-cased threshold'
IDIOM = 'C: if (t < -1.0 || t > 1.0) return EINVAL;'
NEEDS = 't = NaN refused by substitute and OnlineSession'
CAUGHT_BY: tuple[str, ...] = ('validation.substitute', 'validation.online', 'vectors.core')


class NanPasses(Base2):
    def t_in_range(self, t):
        return not (t < -1.0 or t > 1.0)


export(NanPasses(), globals())
