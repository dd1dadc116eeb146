"""lam_ref.tables: the shared number formats of printed tables."""

from __future__ import annotations

from lam_ref.tables import pct


def test_pct_prints_a_rate_with_two_decimals():
    """A rate in ``[0, 1]`` prints as a percentage with two decimals; ``None`` as a dash."""
    assert pct(None) == "—", "a missing rate is a dash"
    assert pct(0.1234) == "12.34%", f"{pct(0.1234)!r}"
    assert (pct(0.0), pct(1.0)) == ("0.00%", "100.00%"), "the ends of the range"
