"""Benchmark of the L2 codec (spec §9; paper §F.7, Table 20). Not a test: it reports.

Measured in one process:

* **storage on retained embeddings** at ``rel_eb = 0.001``: the real SWE-agent trajectories in
  ``../shared/data/swe-agent-trajectories`` (read in place) are chunked (cl100k, 512 tokens) and
  encoded with the real all-MiniLM-L6-v2 encoder, each trajectory is compacted by Algorithm 2 at
  ``t`` (within-trajectory matching), and the retained rows are encoded: codec ratio as one stream,
  as one stream per trajectory, and as one stream per vector; dedup ratio ``N/|R|`` and their product
  (Table 20's "composite"); the error bound is checked on every value;
* **throughput** (MB/s of float32 input) of encode and decode on ``--mb`` MB of Gaussian values
  with the retained rows' standard deviation, against baselines timed on the same buffer in the same process: ``memcpy``
  (``ndarray.copy``), ``float16`` cast (Table 20's fp16 codec) and ``zlib`` level 1; reported as
  ratios codec time / baseline time;
* ``--gpu``: the CuPy port's throughput and byte equality with the CPU stream (needs cupy and a GPU).

Run: ``HF_HUB_OFFLINE=1 .venv/bin/python benchmarks/bench_codec.py [--t 0.95] [--mb 16] [--json out.json]``
or ``--embeddings rows.npy`` to skip the encoder and use given retained rows.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import time
import zlib
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from _timing import best_of  # noqa: E402  (benchmarks/ is on sys.path when run as a script)

from lam_ref.codec import (  # noqa: E402
    DEFAULT_REL_EB,
    codec_decode,
    codec_encode,
    relative_eb,
    storage_report,
    within_error_bound,
)
from lam_ref.substitution import substitute  # noqa: E402

DATA = ROOT.parent / "shared" / "data" / "swe-agent-trajectories"


def real_embeddings(t: float, limit: int | None) -> tuple[list[np.ndarray], list[np.ndarray], dict]:
    """Per trajectory: all chunk embeddings and the retained ones (Algorithm 2 at ``t``)."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    from lam_ref.text.chunking import chunk_records, get_tokenizer
    from lam_ref.text.encoders import get_encoder
    from lam_ref.text.loaders import load_file

    files = sorted(DATA.rglob("*.traj"))[:limit]
    if not files:
        raise SystemExit(f"no trajectories under {DATA}: pass --embeddings rows.npy")
    tok, enc = get_tokenizer(), get_encoder()
    all_rows, kept_rows = [], []
    t0 = time.perf_counter()
    for f in files:
        for traj in load_file(f):
            items = [(i, r.turn, r.text) for i, r in enumerate(traj.records) if r.is_observation]
            chunks = chunk_records(items, tok)
            if not chunks:
                continue
            e = enc.encode([c.text for c in chunks])
            res = substitute(e, t, exhaustive=True)
            all_rows.append(e)
            kept_rows.append(e[res.kept])
    info = {
        "files": len(files),
        "trajectories": len(all_rows),
        "encoder": getattr(enc, "name", type(enc).__name__),
        "encode_and_compact_s": round(time.perf_counter() - t0, 2),
    }
    return all_rows, kept_rows, info


def storage(kept: list[np.ndarray], total_vectors: int, rel_eb: float) -> dict:
    rows = np.concatenate(kept)
    one = storage_report(rows, rel_eb)
    per_traj = sum(len(codec_encode(k, relative_eb(k, rel_eb))) for k in kept)
    per_vec = sum(len(codec_encode(v, relative_eb(v, rel_eb))) for v in rows)
    raw = rows.size * 4
    dedup = total_vectors / rows.shape[0]
    return {
        "vectors_total": total_vectors,
        "vectors_retained": int(rows.shape[0]),
        "dim": int(rows.shape[1]),
        "rel_eb": rel_eb,
        "eb_one_stream": one.eb,
        "max_abs_error": one.max_abs_error,
        "bound_holds": one.bound_holds,
        "dedup_ratio": dedup,
        "codec_ratio_one_stream": one.ratio,
        "codec_ratio_per_trajectory": raw / per_traj,
        "codec_ratio_per_vector": raw / per_vec,
        "composite_one_stream": dedup * one.ratio,
        "bits_per_value_one_stream": 8 * one.encoded_bytes / rows.size,
    }


def synthetic_like(rows: np.ndarray, mb: float) -> np.ndarray:
    """Gaussian float32 values with the real rows' standard deviation (tiling the few real rows
    would flatter zlib, which finds the repeats); the codec's ratio is per block and unaffected."""
    rng = np.random.default_rng(0)
    return rng.normal(scale=float(rows.std()), size=int(mb * 2**20 / 4)).astype(np.float32)


def throughput(rows: np.ndarray, mb: float, rel_eb: float) -> dict:
    x = synthetic_like(rows, mb)
    n = x.size
    eb = relative_eb(x, rel_eb)
    enc = codec_encode(x, eb)
    dec = codec_decode(enc)
    ok = bool(within_error_bound(x, dec, eb).all())
    t_enc = best_of(lambda: codec_encode(x, eb))
    t_dec = best_of(lambda: codec_decode(enc))
    t_copy = best_of(lambda: x.copy())
    t_f16 = best_of(lambda: x.astype(np.float16))
    t_zlib = best_of(lambda: zlib.compress(x.tobytes(), 1))
    mbytes = x.nbytes / 1e6
    return {
        "values": n,
        "input_mb": mbytes,
        "bound_holds": ok,
        "ratio": x.nbytes / len(enc),
        "zlib1_ratio": x.nbytes / len(zlib.compress(x.tobytes(), 1)),
        "zlib1_ratio_real_rows": rows.nbytes / len(zlib.compress(np.ascontiguousarray(rows).tobytes(), 1)),
        "encode_mb_s": mbytes / t_enc,
        "decode_mb_s": mbytes / t_dec,
        "encode_vs_memcpy": t_enc / t_copy,
        "encode_vs_fp16_cast": t_enc / t_f16,
        "encode_vs_zlib1": t_enc / t_zlib,
        "decode_vs_zlib1_compress": t_dec / t_zlib,
    }


def gpu_throughput(rows: np.ndarray, mb: float, rel_eb: float) -> dict:
    from lam_ref.devices import array_module

    cupy = array_module("cuda")
    x = synthetic_like(rows, mb)
    eb = relative_eb(x, rel_eb)
    xd = cupy.asarray(x)
    same = codec_encode(xd, eb, xp=cupy) == codec_encode(x, eb)

    def run_enc():
        codec_encode(xd, eb, xp=cupy)
        cupy.cuda.Device().synchronize()

    enc = codec_encode(x, eb)

    def run_dec():
        codec_decode(enc, xp=cupy)
        cupy.cuda.Device().synchronize()

    t_enc, t_dec = best_of(run_enc), best_of(run_dec)
    t_cpu = best_of(lambda: codec_encode(x, eb))
    return {
        "bytes_identical": same,
        "encode_mb_s": x.nbytes / 1e6 / t_enc,
        "decode_mb_s": x.nbytes / 1e6 / t_dec,
        "cpu_over_gpu_encode": t_cpu / t_enc,
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--t", type=float, default=0.95, help="merge threshold for the retained set")
    ap.add_argument("--rel-eb", type=float, default=DEFAULT_REL_EB)
    ap.add_argument("--mb", type=float, default=16.0, help="MB of float32 for the throughput runs")
    ap.add_argument("--limit", type=int, default=None, help="use only the first N trajectory files")
    ap.add_argument("--embeddings", help=".npy of retained rows (skips the encoder and compaction)")
    ap.add_argument("--gpu", action="store_true", help="also time the CuPy port")
    ap.add_argument("--json", help="write the results as JSON here")
    args = ap.parse_args()

    out: dict = {"python": platform.python_version(), "numpy": np.__version__, "machine": platform.machine(),
                 "cpus": os.cpu_count(), "t": args.t}
    if args.embeddings:
        rows = np.load(args.embeddings).astype(np.float32)
        kept, total = [rows], rows.shape[0]
        out["source"] = args.embeddings
    else:
        all_rows, kept, info = real_embeddings(args.t, args.limit)
        total = sum(a.shape[0] for a in all_rows)
        out["source"] = info
    out["storage"] = storage(kept, total, args.rel_eb)
    out["throughput"] = throughput(np.concatenate(kept), args.mb, args.rel_eb)
    if args.gpu:
        out["gpu"] = gpu_throughput(np.concatenate(kept), args.mb, args.rel_eb)
    text = json.dumps(out, indent=2, sort_keys=True)
    print(text)
    if args.json:
        Path(args.json).write_text(text + "\n")


if __name__ == "__main__":
    main()
