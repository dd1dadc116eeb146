"""Data the conformance suite needs beyond :mod:`lam_ref.strategies` (which it uses for the rest).

* :func:`mixed_embeddings` — the suite's general ``(E, t)``: clustered rows at any size and
  threshold, or tighter clusters at the thresholds used in practice (``t`` in ``[0.8, 0.99]``);
* :func:`shared_block_rows` — rows that copy a long block of coordinates *exactly* from an earlier
  row but are far from it: every band-hashing scheme sees them as candidates, and only exact
  verification rejects them (SPEC §5 "verify each candidate", claim ``BAND``);
* :func:`residual_records` — L0 input (SPEC §7): residual records with lines repeated across and
  within records, whitespace-only lines and stub lines (``STUB_PREFIX …``), some repeated;
* :func:`codec_inputs` — float32 vectors and absolute error bounds for the L2 codec (SPEC §9).

Like :mod:`lam_ref.strategies`, randomness comes from a numpy generator seeded by a drawn integer.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from hypothesis import strategies as st

from ..strategies import avoid_tie_band, embeddings_and_threshold, text_trajectories, thresholds

__all__ = ["CodecInput", "codec_inputs", "mixed_embeddings", "residual_records", "shared_block_rows"]

_SEEDS = st.integers(min_value=0, max_value=2**32 - 1)


def mixed_embeddings() -> st.SearchStrategy[tuple[np.ndarray, float]]:
    """``(E, t)``: clustered unit rows whose distances straddle δ
    (:func:`lam_ref.strategies.embeddings_and_threshold`), at any size and threshold, or tighter
    clusters at ``t`` in ``[0.8, 0.99]``."""
    return st.one_of(
        embeddings_and_threshold(min_n=1, max_n=40, min_dim=1, max_dim=24),
        embeddings_and_threshold(min_n=2, max_n=40, min_dim=2, max_dim=12, min_t=0.8, max_t=0.99, spread=1.2),
    )


@st.composite
def shared_block_rows(
    draw, min_n: int = 4, max_n: int = 30, min_dim: int = 8, max_dim: int = 32
) -> tuple[np.ndarray, float]:
    """``(E, t)``: each row after the first few copies a contiguous block of at least ``D/2``
    coordinates bit-for-bit from an earlier row; the remaining coordinates are fresh and scaled so
    the row has unit norm. Such a pair agrees on every band inside the block (any ``r <= D/4``)
    while its distance is usually far beyond ``δ`` (``t`` in ``[0.8, 0.995]``); some rows are
    exact copies. No pair is in the tie band (SPEC §2)."""
    n = draw(st.integers(min_n, max_n))
    d = draw(st.integers(min_dim, max_dim))
    t = draw(thresholds(0.8, 0.995))
    rng = np.random.default_rng(draw(_SEEDS))
    rows = np.zeros((n, d), dtype=np.float32)
    fresh = min(n, 2)
    for i in range(n):
        if i < fresh or rng.random() < 0.1:
            x = rng.standard_normal(d)
            rows[i] = (x / np.linalg.norm(x)).astype(np.float32)
            continue
        src = int(rng.integers(0, i))
        if rng.random() < 0.1:
            rows[i] = rows[src]  # an exact copy: must merge
            continue
        length = int(rng.integers((d + 1) // 2, d))
        start = int(rng.integers(0, d - length + 1))
        block = rows[src, start : start + length].astype(np.float64)
        energy = float(block @ block)
        rest_idx = np.r_[0:start, start + length : d]
        if energy >= 0.95 or rest_idx.size == 0:
            x = rng.standard_normal(d)
            rows[i] = (x / np.linalg.norm(x)).astype(np.float32)
            continue
        r = rng.standard_normal(rest_idx.size)
        r *= math.sqrt(1.0 - energy) / np.linalg.norm(r)
        rows[i, start : start + length] = rows[src, start : start + length]
        rows[i, rest_idx] = r.astype(np.float32)
    return rows, avoid_tie_band(rows, t)


@st.composite
def residual_records(draw, stub_prefix: str, max_records: int = 8, max_lines: int = 12) -> list[str]:
    """Residual observation records for L0 (SPEC §7), built on :func:`lam_ref.strategies.text_trajectories`.

    Adds what L0 must handle: lines repeated inside one record, whitespace-only lines (spaces and
    tabs only, so "whitespace" is unambiguous across languages), stub lines starting with
    ``stub_prefix`` (from a small pool, so identical stubs recur) and trailing newlines.
    """
    traj = draw(text_trajectories(min_observations=1, max_observations=max_records, max_lines=max_lines))
    rng = np.random.default_rng(draw(_SEEDS))
    stub_pool = [f"{stub_prefix}chunk {k} dropped, see chunk {k // 2}" for k in range(3)]
    blanks = ["", " ", "\t", "  \t "]
    records: list[str] = []
    for rec in traj.records:
        if rec["role"] != "observation":
            continue
        text = rec["text"] or ""
        lines = text.split("\n")
        for _ in range(int(rng.integers(0, 4))):
            roll = rng.random()
            pos = int(rng.integers(0, len(lines) + 1))
            if roll < 0.35 and lines:
                lines.insert(pos, lines[int(rng.integers(0, len(lines)))])  # repeat inside the record
            elif roll < 0.6:
                lines.insert(pos, blanks[int(rng.integers(0, len(blanks)))])
            else:
                lines.insert(pos, stub_pool[int(rng.integers(0, len(stub_pool)))])
        out = "\n".join(lines)
        if rng.random() < 0.2:
            out += "\n"
        records.append(out)
    return records


@dataclass(frozen=True)
class CodecInput:
    """A float32 vector ``x`` and an absolute error bound ``eb > 0`` (SPEC §9)."""

    x: np.ndarray
    eb: float
    kind: str


_CODEC_KINDS = ("normal", "uniform", "constant", "zeros", "spiky", "unit_rows", "steps", "tiny")


@st.composite
def codec_inputs(draw, max_n: int = 300) -> CodecInput:
    """Vectors of many shapes (lengths around the 32-value block size, constant runs, zeros, spikes,
    concatenated unit embeddings, tiny values) with ``eb`` between ``1e-5`` and ``1e-1`` of the range."""
    n = draw(st.one_of(st.sampled_from([1, 2, 31, 32, 33, 64, 65]), st.integers(1, max_n)))
    kind = draw(st.sampled_from(_CODEC_KINDS))
    scale = draw(st.sampled_from([1e-3, 1.0, 1e3]))
    rel = 10.0 ** draw(st.floats(-5.0, -1.0))
    rng = np.random.default_rng(draw(_SEEDS))
    if kind == "normal":
        x = rng.standard_normal(n) * scale
    elif kind == "uniform":
        x = rng.uniform(-scale, scale, n)
    elif kind == "constant":
        x = np.full(n, rng.uniform(-scale, scale))
    elif kind == "zeros":
        x = np.zeros(n)
        if n > 1:
            x[-1] = -0.0
    elif kind == "spiky":
        x = rng.standard_normal(n) * 1e-3 * scale
        x[rng.integers(0, n, size=max(1, n // 20))] = scale * rng.choice([-1.0, 1.0])
    elif kind == "unit_rows":
        d = 16
        rows = rng.standard_normal((n // d + 1, d))
        x = (rows / np.linalg.norm(rows, axis=1, keepdims=True)).reshape(-1)[:n]
    elif kind == "steps":
        x = np.repeat(rng.standard_normal(n // 8 + 1) * scale, 8)[:n]
    else:  # tiny magnitudes, some subnormal in float32
        x = rng.standard_normal(n) * 1e-39
    x = x.astype(np.float32)
    top = float(np.max(np.abs(x.astype(np.float64)))) if n else 0.0
    eb = rel * top if top > 0 else rel
    if not eb > 0 or not math.isfinite(eb):
        eb = 1e-3
    return CodecInput(x, float(eb), kind)
