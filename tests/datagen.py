"""Seeded numpy generators for the foundation's unit tests (Hypothesis draws the seed and sizes)."""

from __future__ import annotations

import numpy as np


def unit_rows(rng: np.random.Generator, n: int, d: int) -> np.ndarray:
    x = rng.standard_normal((n, d))
    return (x / np.linalg.norm(x, axis=1, keepdims=True)).astype(np.float32)


def clustered(rng: np.random.Generator, n: int, d: int, dup: float = 0.3, spread: tuple[float, float] = (0.02, 0.45)) -> np.ndarray:
    """``n`` unit rows in which about ``dup·n`` are noisy copies of others (distance spread by ``spread``)."""
    base = rng.standard_normal((n, d))
    base /= np.linalg.norm(base, axis=1, keepdims=True)
    k = int(n * dup)
    if k and n - k > 0:
        src = rng.integers(0, n - k, size=k)
        noise = rng.standard_normal((k, d))
        noise /= np.linalg.norm(noise, axis=1, keepdims=True)
        amt = rng.uniform(*spread, size=k)[:, None]
        x = base[src] + amt * noise
        base[n - k :] = x / np.linalg.norm(x, axis=1, keepdims=True)
    return base[rng.permutation(n)].astype(np.float32)
