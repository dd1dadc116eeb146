"""GPU throughput of verification (the exhaustive greedy rule) and of the L2 codec, against the
CPU in the same process, with the equality checks that matter: π equal, codec bytes equal.

Not a second implementation: it times ``lam_ref.substitution.substitute(..., device=...)`` and
``lam_ref.codec.codec_encode(..., xp=cupy)``. Run by ``gpu/run_checks.sh``; without CuPy and a
CUDA device it writes ``{"skipped": reason}`` and exits 0.

    python gpu/throughput.py --out throughput.json [--n 20000] [--dim 384] [--mb 64]
"""

from __future__ import annotations

import argparse
import inspect
import json
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from lam_ref._io import atomic_write_text  # noqa: E402
from lam_ref.codec import codec_decode, codec_encode, relative_eb  # noqa: E402
from lam_ref.devices import array_module  # noqa: E402
from lam_ref.geometry import LamValueError  # noqa: E402
from lam_ref.substitution import substitute  # noqa: E402


def clustered(n: int, dim: int, seed: int = 0) -> np.ndarray:
    """Unit rows around n/8 centres (near-duplicates at several distances)."""
    rng = np.random.default_rng(seed)
    centres = rng.normal(size=(max(1, n // 8), dim))
    x = centres[rng.integers(0, centres.shape[0], n)] + rng.normal(scale=0.15, size=(n, dim))
    return (x / np.linalg.norm(x, axis=1, keepdims=True)).astype(np.float32)


def best(fn, sync, repeat: int = 3) -> float:
    out = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        sync()
        out.append(time.perf_counter() - t0)
    return min(out)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", required=True)
    ap.add_argument("--n", type=int, default=20000)
    ap.add_argument("--dim", type=int, default=384)
    ap.add_argument("--mb", type=float, default=64.0)
    ap.add_argument("--t", type=float, default=0.95)
    args = ap.parse_args()
    try:
        cupy = array_module("cuda")
    except LamValueError as exc:
        atomic_write_text(args.out, json.dumps({"skipped": str(exc)}, indent=2) + "\n")
        print(f"throughput: skipped: {exc}")
        return 0
    sync = cupy.cuda.Device().synchronize
    res: dict = {"gpu": cupy.cuda.runtime.getDeviceProperties(0)["name"].decode(), "n": args.n, "dim": args.dim}
    e = clustered(args.n, args.dim)
    t0 = time.perf_counter()
    cpu = substitute(e, args.t, exhaustive=True)
    res["verify_cpu_s"] = time.perf_counter() - t0
    if "device" in inspect.signature(substitute).parameters:
        gpu = substitute(e, args.t, exhaustive=True, device="cuda")  # warm-up
        res["verify_gpu_s"] = best(lambda: substitute(e, args.t, exhaustive=True, device="cuda"), sync)
        res["verify_pi_equal"] = bool(np.array_equal(gpu.pi, cpu.pi))
        res["verify_speedup"] = res["verify_cpu_s"] / res["verify_gpu_s"]
    else:
        res["verify_gpu_s"] = None
        res["verify_note"] = "this lam_ref's substitute() has no device argument"
    x = np.random.default_rng(1).normal(scale=0.05, size=int(args.mb * 1e6 / 4)).astype(np.float32)
    eb = relative_eb(x, 1e-3)
    xd = cupy.asarray(x)
    ref = codec_encode(x, eb)
    res["codec_bytes_equal"] = codec_encode(xd, eb, xp=cupy) == ref
    res["codec_decode_equal"] = bool(np.array_equal(cupy.asnumpy(codec_decode(ref, xp=cupy)), codec_decode(ref)))
    t_enc = best(lambda: codec_encode(xd, eb, xp=cupy), sync)
    t_dec = best(lambda: codec_decode(ref, xp=cupy), sync)
    t_cpu = best(lambda: codec_encode(x, eb), lambda: None, repeat=1)
    res.update({"codec_mb": args.mb, "codec_encode_mb_s": x.nbytes / 1e6 / t_enc, "codec_decode_mb_s": x.nbytes / 1e6 / t_dec,
                "codec_cpu_encode_mb_s": x.nbytes / 1e6 / t_cpu})
    atomic_write_text(args.out, json.dumps(res, indent=2) + "\n")
    print(json.dumps(res, indent=2))
    ok = res["codec_bytes_equal"] and res["codec_decode_equal"] and res.get("verify_pi_equal", True)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
