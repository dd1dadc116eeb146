"""This machine's constants of the cost model (paper App. G, Table 22 analogues), measured: the
device profile ``lam-ref bench constants`` writes and ``lam-ref model --device PROFILE.json`` reads
(:mod:`lam_ref.costmodel`).

Each constant is a kernel microbenchmark (best of a few repeats) except β, which comes from real
trajectories. The serving anchors (streaming bandwidth, matmul rate, memory) are measured on this
machine's CPU with numpy, so a model run on this profile describes serving on this CPU.
:func:`measure_constants` measures them all; each ``measure_*`` returns ``{"value", "unit",
"benchmark"}`` (``value`` ``None`` when it cannot be measured here).
"""

from __future__ import annotations

import os
import platform
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

__all__ = ["default_data", "measure_beta", "measure_codec", "measure_constants", "measure_encoder", "measure_gemm",
           "measure_quantize", "measure_triad", "measure_verify", "measure_xxh3"]


def _best(fn: Callable[[], object], repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best


def _unit_rows(n: int, d: int, seed: int = 0) -> np.ndarray:
    e = np.random.default_rng(seed).standard_normal((n, d)).astype(np.float32)
    return e / np.linalg.norm(e, axis=1, keepdims=True)


def measure_triad(nbytes: int, repeat: int) -> dict[str, Any]:
    """``c = a + b`` on float32 arrays of ``nbytes`` each; 3·nbytes moved (Table 22's triad)."""
    n = nbytes // 4
    a = np.ones(n, np.float32)
    b = np.ones(n, np.float32)
    c = np.empty(n, np.float32)
    t = _best(lambda: np.add(a, b, out=c), repeat)
    return {"value": 3 * n * 4 / t, "unit": "B/s", "benchmark": f"triad c=a+b, 3 x {nbytes >> 20} MiB fp32, numpy"}


def measure_gemm(n: int, repeat: int) -> dict[str, Any]:
    """float32 ``n³`` GEMM (this CPU has no fp16 tensor units; Table 22 uses fp16 8192³)."""
    a = np.random.default_rng(1).standard_normal((n, n)).astype(np.float32)
    t = _best(lambda: a @ a, repeat)
    return {"value": 2 * n**3 / t, "unit": "FLOP/s", "benchmark": f"fp32 {n}^3 GEMM, numpy BLAS"}


def measure_xxh3(nbytes: int, repeat: int) -> dict[str, Any]:
    import xxhash

    buf = np.random.default_rng(2).integers(0, 256, nbytes, dtype=np.uint8).tobytes()
    t = _best(lambda: xxhash.xxh3_64_intdigest(buf), repeat)
    return {"value": nbytes / t, "unit": "B/s", "benchmark": f"xxh3_64 of a {nbytes >> 20} MiB buffer, single thread"}


def measure_verify(pairs: int, dim: int, repeat: int) -> dict[str, Any]:
    """The exact float64 rule (SPEC §2, ``geometry.sq_dist_rows``) on ``pairs`` candidate pairs."""
    from .geometry import sq_dist_rows

    e = _unit_rows(4096, dim, 3)
    rng = np.random.default_rng(4)
    rows = rng.integers(0, 4096, pairs)
    others = e[rng.integers(0, 4096, pairs)]
    t = _best(lambda: sq_dist_rows(e, rows, others), repeat)
    return {"value": pairs / t, "unit": "pairs/s", "benchmark": f"{pairs} candidate pairs at D={dim}, float64 exact rule"}


def measure_quantize(n: int, dim: int, repeat: int) -> dict[str, Any]:
    """The band quantizer ``q = rint(e/2ε)`` fp32 → int16, 6 B per element moved (Table 22)."""
    from .bands import band_quantize

    e = _unit_rows(n, dim, 5)
    t = _best(lambda: band_quantize(e, 0.2, validated_unit=True), repeat)
    return {"value": 6 * n * dim / t, "unit": "B/s", "benchmark": f"bands.band_quantize of {n}x{dim} fp32 -> int16"}


def measure_codec(n: int, repeat: int) -> dict[str, Any]:
    """The L2 error-bounded codec (cuSZp-style, CPU) at 1% of max|x|; input bytes per second and ratio."""
    from .codec import codec_encode, relative_eb

    x = _unit_rows(n // 768, 768, 6).ravel()
    eb = relative_eb(x, 1e-2)
    out: dict[str, Any] = {}

    def go() -> None:
        out["b"] = codec_encode(x, eb)

    t = _best(go, repeat)
    return {"value": x.nbytes / t, "unit": "B/s", "ratio": x.nbytes / len(out["b"]),
            "benchmark": f"codec_encode of {x.size} fp32 (unit rows, D=768), error bound 1% of max|x|"}


def measure_encoder(name: str, docs: int, tokens: int, backend: str = "torch") -> dict[str, Any]:
    """Encoder throughput on ``docs`` synthetic documents of about ``tokens`` encoder tokens each
    (``backend``: SPEC §4.5)."""
    from .text.encoders import get_encoder

    enc = get_encoder(name, None, backend)
    words = ["def", "return", "self", "value", "import", "numpy", "error", "line", "file", "test"]
    rng = np.random.default_rng(7)
    texts = [" ".join(rng.choice(words, tokens)) for _ in range(docs)]
    lengths = enc.token_lengths(texts)
    limit = enc.max_tokens
    n_tok = sum(min(n, limit) if limit else n for n in lengths) if lengths else docs * tokens
    enc.encode(texts[: min(8, docs)])  # warm-up (model load, first-call allocations)
    t = _best(lambda: enc.encode(texts, batch_size=64), 1)
    return {"value": n_tok / t, "unit": "tokens/s", "encoder": enc.describe(),
            "benchmark": f"{docs} synthetic docs x ~{tokens} tokens, batch 64"}


def measure_beta(data: Path | None) -> dict[str, Any]:
    """Bytes per cl100k token of observation records (Table 22: 3.68 B/tok on SWE-smith)."""
    if data is None or not data.exists():
        return {"value": None, "unit": "B/token", "benchmark": "no trajectories found; β left at the paper's 3.68"}
    from .text.chunking import get_tokenizer
    from .text.loaders import LoadFailure, iter_trajectories

    tok = get_tokenizer()
    nbytes = ntok = nrec = ntraj = 0
    for item in iter_trajectories([data]):
        if isinstance(item, LoadFailure):
            continue
        ntraj += 1
        for rec in item.records:
            if rec.role == "observation" and rec.text:
                nbytes += len(rec.text.encode("utf-8", errors="surrogatepass"))
                ntok += tok.count(rec.text)
                nrec += 1
    if ntok == 0:
        return {"value": None, "unit": "B/token", "benchmark": f"no observation tokens under {data}"}
    return {"value": nbytes / ntok, "unit": "B/token",
            "benchmark": f"{nrec} observation records of {ntraj} trajectories under {data.name}, cl100k"}


def default_data() -> Path | None:
    """The trajectories β is measured on by default: the shared data folder when present."""
    from .text.loaders import shared_data_dir

    return shared_data_dir()


def measure_constants(*, encoder: str = "all-MiniLM-L6-v2", data: Path | None = None, quick: bool = False,
                      name: str | None = None, backend: str = "torch") -> dict[str, Any]:
    """Measure every constant and return ``{"profile": ..., "measurements": ..., "machine": ...}``.

    The profile's serving anchors are this CPU's; μ_c and μ_m keep the paper's fairness values.
    """
    from .costmodel import GB10

    rep = 2 if quick else 3
    m: dict[str, Any] = {
        "mem_bw": measure_triad((16 if quick else 128) << 20, rep),
        "flops": measure_gemm(1024 if quick else 2048, rep),
        "hash_bytes_s": measure_xxh3((16 if quick else 64) << 20, rep),
        "verify_pairs_s": measure_verify(16384 if quick else 65536, 768, rep),
        "quantize_bytes_s": measure_quantize(2048 if quick else 16384, 768, rep),
        "codec_bytes_s": measure_codec((1 << 20) if quick else (1 << 22), rep),
        "encoder_tok_s": measure_encoder(encoder, 16 if quick else 64, 256 if quick else 512, backend),
        "beta": measure_beta(data),
    }
    try:
        mem = float(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES"))
    except (ValueError, OSError, AttributeError):
        mem = GB10.memory_bytes
    prof: dict[str, Any] = {"name": name or platform.node() or "this-machine", "memory_bytes": mem,
                            "mu_c": GB10.mu_c, "mu_m": GB10.mu_m}
    sources: dict[str, str] = {"memory_bytes": "physical memory of this machine",
                               "mu_c": "App. M.1 fairness rule", "mu_m": "App. M.1 fairness rule"}
    for k, v in m.items():
        if v["value"] is None:
            prof[k] = getattr(GB10, k)
            sources[k] = "not measured here (" + v["benchmark"] + "); " + GB10.sources[k]
        else:
            prof[k] = float(v["value"])
            sources[k] = "measured: " + v["benchmark"]
    prof["codec_ratio"] = float(m["codec_bytes_s"]["ratio"])
    sources["codec_ratio"] = "measured: " + m["codec_bytes_s"]["benchmark"]
    prof["sources"] = sources
    machine = {"platform": platform.platform(), "processor": platform.processor() or platform.machine(),
               "cpus": os.cpu_count(), "python": sys.version.split()[0], "numpy": np.__version__,
               "loadavg": list(os.getloadavg()) if hasattr(os, "getloadavg") else None}
    return {"profile": prof, "measurements": m, "machine": machine, "quick": quick}
