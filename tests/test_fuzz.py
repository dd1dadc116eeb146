"""Issue 24's fuzz corpus on every change (docs/reliability.md): malformed inputs from a fixed
seed (:mod:`tests.fuzz`: truncated JSON, huge integers, deep nesting, lone surrogates, line
separators, binary junk, empty files, wrong top-level types, FIFOs and devices, bad residual and
audit stores) through ``compact`` and ``restore`` with the hash encoder. Claim checked (SPEC §8,
docs/cli.md conventions): exit 0/1/2 only, one clean error line per bad file, no traceback, no
hang, the good files beside a bad one processed and restored byte for byte, no input changed."""

from __future__ import annotations

import os

import pytest

from . import fuzz

BAD = ("traceback", "hang", "silent garbage", "data lost")
THOROUGH = os.environ.get("HYPOTHESIS_PROFILE") == "thorough" or "LAM_REF_FUZZ_COUNT" in os.environ


def _check(count: int) -> None:
    counts, results = fuzz.campaign(count)
    bad = [f"{c.kind} ({c.stage}, {c.name[-30:]!r}): {o}: {n}" for c, o, n in results if o in BAD]
    assert not bad, f"{len(bad)} of {count} fuzz cases misbehaved (counts {counts}):\n" + "\n".join(bad[:20])
    assert counts["clean error"] > 0 and counts["ok"] > 0, f"both outcomes occur in the corpus: {counts}"


def test_fuzz_corpus_quick_has_no_traceback_hang_garbage_or_loss():
    """The first :data:`tests.fuzz.QUICK` cases (every kind several times) behave (under 60 s)."""
    _check(fuzz.QUICK)


@pytest.mark.slow
@pytest.mark.skipif(not THOROUGH, reason="the whole fuzz set (about 50 s): make thorough, or set LAM_REF_FUZZ_COUNT")
def test_fuzz_corpus_whole_set_has_no_traceback_hang_garbage_or_loss():
    """The whole set (:data:`tests.fuzz.ALL` cases; ``make thorough``)."""
    _check(int(os.environ.get("LAM_REF_FUZZ_COUNT", fuzz.ALL)))
