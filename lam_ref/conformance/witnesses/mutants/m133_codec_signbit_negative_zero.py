"""Mutant: codes rounded like JavaScript's Math.round (the rule's half up, but y in [-0.5, -0.0] gives -0.0),
deltas taken in float64 and the sign bit read from the IEEE sign (signbit): a delta of -0.0 gets a sign bit,
which docs/codec.md sets only for d < 0 (the decoder refuses a sign bit on a zero delta)."""

from __future__ import annotations

import numpy as np

from ._base2 import Base2, export

BUG = 'sign bit taken from the IEEE sign of a float delta: -0.0 gets one'
VIOLATES = 'L2'
CLASS = 'special-cased threshold'
IDIOM = 'JS: q = Math.round(x / s); d = q - prev; sign = Object.is(d, -0) || d < 0'
NEEDS = 'codec-v1 golden bytes of -0.0 (or small negative) values beside codes 1 and 0'
CAUGHT_BY: tuple[str, ...] = ('codec.error_bound', 'codec.deterministic', 'vectors.codec-bound')


class SignbitZero(Base2):
    def quantize(self, x, eb):
        q = super().quantize(x, eb)
        self._neg_zero = (q == 0) & np.signbit(x / (2.0 * eb))  # Math.round(-0.3) is -0
        return q

    def deltas(self, q, n, bs):
        d = super().deltas(q, n, bs)
        nb = self.n_blocks(n, bs)
        qf = np.zeros(nb * bs, dtype=np.float64)
        qf[:n] = q[:n]
        qf[:n][self._neg_zero[:n]] = -0.0
        df = np.diff(qf.reshape(nb, bs), axis=1, prepend=0.0)
        neg0 = (np.signbit(df) & (df == 0)).reshape(-1)
        neg0[n:] = False
        neg0 = neg0.reshape(nb, bs)
        self._masks = iter([neg0[k] for k in range(nb) if np.abs(d[k]).max() > 0])
        return d

    def block_payload(self, d, mag, r):
        parts = [self.pack((d < 0) | next(self._masks))]
        for p in self.plane_order(r):
            parts.append(self.pack((mag >> p) & 1))
        return b"".join(parts)


export(SignbitZero(), globals())
