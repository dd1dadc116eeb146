"""Tests written for the mutants of :mod:`lam_ref.codec` that survived ``make mutation``
(docs/mutation.md, section ``codec``): the L2 error-bounded codec, cuSZp's plain 1-D mode
(SPEC §9, paper §2.2, §F.7), checked against values worked out by hand from the byte format in
the module docstring."""

from __future__ import annotations

import numpy as np
import pytest

from lam_ref.codec import codec_quantize


def test_quantize_rounds_half_up_by_hand():
    """``q = floor(y) + (y - floor(y) >= 0.5)`` with ``y = x / (2·eb)``: with ``eb = 0.25``
    (``s = 0.5``) the quotients are 2x, so 1.25 -> 2.5 -> 3, -1.25 -> -2.5 -> -2, 0.2 -> 0.4 -> 0."""
    q = codec_quantize(np.array([1.25, -1.25, 0.2, -0.3], dtype=np.float32), 0.25)
    assert q.tolist() == [3, -2, 0, -1], f"round half up on 2x gave {q.tolist()}"
    assert q.dtype == np.int64, f"codes must be int64, got {q.dtype}"
