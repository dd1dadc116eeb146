"""The L2 codec beside its peers on real embeddings (SPEC §9.5, §9.6; issue 26 §3, §4). Not a test: it reports.

Data: all-MiniLM-L6-v2 embeddings (lam_ref's real encoder, offline) of every record of the shared
SWE-agent trajectories in ``../shared/data/swe-agent-trajectories`` (read in place), cut into
``--window``-token windows; encoded once and cached as ``.npy`` under ``/tmp/lam_ref_codec_peers``
(never committed). The matrix is coded as one buffer of shape ``(N, 384)``; a second table repeats
everything on the distinct rows only (first occurrences, in order), so that the gain version 2
draws from exact repeated rows is visible separately from its entropy coding.

Codecs, each at ``eb`` = 1e-2, 1e-3, 1e-4 (absolute): SZ3 (``pysz``, ABS mode, NOPRED), ZFP
(``numcodecs.ZFPY`` fixed-accuracy mode, tolerance ``eb``), numcodecs ``FixedScaleOffset`` (scale
``1/(2 eb)``, the narrowest integer type that holds the codes) + ``Blosc`` (zstd level 5,
bitshuffle), and ours: version 1 numpy, version 1 C, version 2 (C), version 2 strict (C).
Columns: ratio (raw float32 bytes / stream bytes), encode and decode MB/s of float32 data (median
of ``--repeat`` rounds, every codec timed once per round, interleaved, in this one process, one
thread), max ``|x - x'|`` (float64), max error / eb, and max Δcos (the largest ``|1 - cos(x_i, x'_i)|``
over rows).

Run: ``OMP_NUM_THREADS=1 HF_HUB_OFFLINE=1 .venv/bin/python benchmarks/bench_codec_peers.py
--json benchmarks/results/codec_peers.json`` (``--embeddings rows.npy`` to skip the encoder).
"""

from __future__ import annotations

import os

os.environ.setdefault("OMP_NUM_THREADS", "1")  # single-threaded peers (SZ3's OpenMP, Blosc, BLAS)

import argparse  # noqa: E402
import hashlib  # noqa: E402
import json  # noqa: E402
import platform  # noqa: E402
import statistics  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from collections.abc import Callable  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from lam_ref import codec as lam_codec  # noqa: E402
from lam_ref.codec import codec_decode, codec_encode  # noqa: E402

DATA = ROOT.parent / "shared" / "data" / "swe-agent-trajectories"
CACHE = Path("/tmp/lam_ref_codec_peers")
EBS = (1e-2, 1e-3, 1e-4)
Coder = tuple[Callable[[], object], Callable[[object], np.ndarray], Callable[[object], int]]


def real_embeddings(window: int) -> tuple[np.ndarray, dict]:
    """MiniLM embeddings of every record's ``window``-token windows, cached under /tmp."""
    files = sorted(DATA.rglob("*.traj"))
    if not files:
        raise SystemExit(f"no trajectories under {DATA}: pass --embeddings rows.npy")
    key = hashlib.sha256("".join(f"{f}:{f.stat().st_size}" for f in files).encode() + str(window).encode())
    path = CACHE / f"minilm_w{window}_{key.hexdigest()[:12]}.npy"
    info = {"files": len(files), "window": window, "cache": str(path)}
    if path.is_file():
        return np.load(path), info
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    from lam_ref.text.chunking import chunk_records, get_tokenizer
    from lam_ref.text.encoders import get_encoder
    from lam_ref.text.loaders import load_file

    tok, enc = get_tokenizer(), get_encoder()
    texts = []
    for f in files:
        for traj in load_file(f):
            texts += [c.text for c in chunk_records([(i, r.turn, r.text) for i, r in enumerate(traj.records)], tok,
                                                    window=window)]
    rows = np.ascontiguousarray(enc.encode(texts), dtype=np.float32)
    CACHE.mkdir(parents=True, exist_ok=True)
    np.save(path, rows)
    return rows, info


def _sz3(x: np.ndarray, eb: float) -> Coder:
    from pysz import sz, szAlgorithm, szConfig, szErrorBoundMode

    cfg = szConfig(x.shape)
    cfg.errorBoundMode, cfg.absErrorBound, cfg.cmprAlgo = szErrorBoundMode.ABS, eb, szAlgorithm.NOPRED
    cfg.openmp = False
    return (lambda: sz.compress(x, cfg)[0], lambda c: sz.decompress(c, np.float32, x.shape)[0], lambda c: c.nbytes)


def _zfp(x: np.ndarray, eb: float) -> Coder:
    from numcodecs import ZFPY

    z = ZFPY(mode=4, tolerance=eb)
    return (lambda: z.encode(x), lambda c: np.asarray(z.decode(c)).reshape(x.shape), len)


def _fso_blosc(x: np.ndarray, eb: float) -> Coder:
    from numcodecs import Blosc, FixedScaleOffset

    Blosc.set_nthreads(1) if hasattr(Blosc, "set_nthreads") else None
    top = float(np.abs(x).max()) / (2 * eb) + 1
    kind = next(t for t in ("<i1", "<i2", "<i4") if top < np.iinfo(t).max)
    fso = FixedScaleOffset(offset=0, scale=1 / (2 * eb), dtype="<f4", astype=kind)
    blosc = Blosc(cname="zstd", clevel=5, shuffle=Blosc.BITSHUFFLE)
    return (lambda: blosc.encode(fso.encode(x)),
            lambda c: np.asarray(fso.decode(blosc.decode(c))).reshape(x.shape), len)


def _ours(x: np.ndarray, eb: float, **kw: object) -> Coder:
    backend = kw.pop("backend", "c")
    return (lambda: codec_encode(x, eb, backend=backend, **kw),
            lambda b: codec_decode(b, backend=backend).reshape(x.shape), len)


def coders(x: np.ndarray, eb: float) -> dict[str, Coder]:
    out: dict[str, Coder] = {}
    for name, make in (("SZ3 NOPRED (pysz)", _sz3), ("ZFP (zfpy)", _zfp), ("FixedScaleOffset+Blosc", _fso_blosc)):
        try:
            out[name] = make(x, eb)
            out[name][0]()
        except Exception as exc:  # a peer that is not installed is reported, not fatal
            print(f"note: {name} unavailable: {type(exc).__name__}: {exc}", file=sys.stderr)
            out.pop(name, None)
    out["ours v1 numpy"] = _ours(x, eb, backend="numpy")
    if lam_codec.C_BUILT:
        out["ours v1 C"] = _ours(x, eb, backend="c")
    out["ours v2"] = _ours(x, eb, version=2, cols=x.shape[1])
    out["ours v2 strict"] = _ours(x, eb, version=2, cols=x.shape[1], strict=True)
    return out


def quality(x: np.ndarray, y: np.ndarray, eb: float) -> dict:
    x64, y64 = x.astype(np.float64), y.astype(np.float64)
    err = float(np.abs(x64 - y64).max())
    nx, ny = np.linalg.norm(x64, axis=1), np.linalg.norm(y64, axis=1)
    ok = (nx > 0) & (ny > 0)
    cos = (x64 * y64).sum(axis=1)[ok] / (nx[ok] * ny[ok])
    return {"max_error": err, "max_error_over_eb": err / eb, "within_eb": bool(err <= eb),
            "max_dcos": float(np.abs(1.0 - cos).max()) if cos.size else 0.0}


def run(x: np.ndarray, repeat: int) -> list[dict]:
    rows = []
    mb = x.nbytes / 1e6
    for eb in EBS:
        cs = coders(x, eb)
        blobs = {k: c[0]() for k, c in cs.items()}
        t_enc: dict[str, list[float]] = {k: [] for k in cs}
        t_dec: dict[str, list[float]] = {k: [] for k in cs}
        for _ in range(repeat):  # interleaved: every codec once per round
            for k, (enc, dec, _) in cs.items():
                t0 = time.perf_counter()
                enc()
                t1 = time.perf_counter()
                dec(blobs[k])
                t_enc[k].append(t1 - t0)
                t_dec[k].append(time.perf_counter() - t1)
        for k, (_, dec, size) in cs.items():
            rows.append({"codec": k, "eb": eb, "ratio": x.nbytes / size(blobs[k]),
                         "encode_mb_s": mb / statistics.median(t_enc[k]), "decode_mb_s": mb / statistics.median(t_dec[k]),
                         "encode_mb_s_best": mb / min(t_enc[k]), "decode_mb_s_best": mb / min(t_dec[k]),
                         **quality(x, np.asarray(dec(blobs[k]), dtype=np.float32).reshape(x.shape), eb)})
    return rows


def table(rows: list[dict]) -> str:
    head = ("| codec | eb | ratio | encode MB/s | decode MB/s | max error / eb | max Δcos |\n"
            "|---|---|---:|---:|---:|---:|---:|")
    body = [f"| {r['codec']} | {r['eb']:g} | {r['ratio']:.2f} | {r['encode_mb_s']:.0f} | {r['decode_mb_s']:.0f} | "
            f"{r['max_error_over_eb']:.9f} | {r['max_dcos']:.2e} |" for r in rows]
    return "\n".join([head, *body])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--window", type=int, default=64, help="tokens per window of the embedded records")
    ap.add_argument("--embeddings", help=".npy of float32 rows (skips the encoder)")
    ap.add_argument("--repeat", type=int, default=7, help="interleaved timing rounds (median reported)")
    ap.add_argument("--json", help="write the results as JSON here")
    args = ap.parse_args()
    if args.embeddings:
        x, info = np.ascontiguousarray(np.load(args.embeddings), dtype=np.float32), {"source": args.embeddings}
    else:
        x, info = real_embeddings(args.window)
    _, first = np.unique(x, axis=0, return_index=True)
    distinct = np.ascontiguousarray(x[np.sort(first)])
    out = {"python": platform.python_version(), "numpy": np.__version__, "machine": platform.machine(),
           "cpu_count": os.cpu_count(), "threads": os.environ.get("OMP_NUM_THREADS"), "data": info,
           "rows": int(x.shape[0]), "dim": int(x.shape[1]), "distinct_rows": int(distinct.shape[0]),
           "repeat": args.repeat, "all_rows": run(x, args.repeat), "distinct_rows_only": run(distinct, args.repeat)}
    print(f"## all {x.shape[0]} rows (D = {x.shape[1]})\n\n{table(out['all_rows'])}\n")
    print(f"## the {distinct.shape[0]} distinct rows only\n\n{table(out['distinct_rows_only'])}")
    if args.json:
        Path(args.json).write_text(json.dumps(out, indent=2, sort_keys=True) + "\n")


if __name__ == "__main__":
    main()
