"""CCT-THM1 / CCT-THM3 message counting: {0,1}^{<=B} has 2^{B+1} - 1 messages, so r distinct rows
need ⌈log2(r+1)⌉ - 1 variable-length bits and ⌈log2 r⌉ fixed-length bits. The integer forms used
by lam_ref.cct.solvers.bits_for_messages are checked against sympy's exact ceiling/log for
r = 1..200 and around every power of two up to 2^24 (beyond that sympy's numeric ceiling of a log is
unreliable), and the message enumeration against the count."""

from __future__ import annotations

import pytest
import sympy as sp

from lam_ref.cct.games import message_count, message_from_index, message_index, messages
from lam_ref.cct.solvers import bits_for_messages

pytestmark = pytest.mark.claim("CCT-THM1")


def test_bit_formulas_exact():
    rs = sorted(set(range(1, 201)) | {2**e + d for e in range(1, 25) for d in (-1, 0, 1)})
    for r in rs:
        var, fixed = bits_for_messages(r)
        assert var == sp.ceiling(sp.log(r + 1, 2)) - 1, f"variable-length bits wrong at r={r}"
        assert fixed == sp.ceiling(sp.log(r, 2)), f"fixed-length bits wrong at r={r}"
        assert message_count(var) >= r and (var == 0 or message_count(var - 1) < r), f"not least at r={r}"


def test_message_enumeration():
    for b in range(0, 8):
        ms = messages(b)
        assert len(ms) == len(set(ms)) == message_count(b) == 2 ** (b + 1) - 1, f"count at B={b}"
        assert [message_index(m) for m in ms] == list(range(len(ms))), f"index order at B={b}"
        assert all(message_from_index(i) == m for i, m in enumerate(ms)), f"inverse at B={b}"
