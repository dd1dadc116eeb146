"""Encoder backends side by side (SPEC §4.5; issue 26 §2): windows/s of every registered backend
(:data:`lam_ref.text.backends.BACKENDS`: ``torch``, ``onnx``, ``openvino``, ``openvino-bf16``; those
installed) on real windows, in one process. Not a test: it reports.

The windows are those ``lam-ref compact`` encodes: every observation of the shared SWE-agent
trajectories (read in place), cut into 512-token cl100k windows ending at the encoder's horizon
(SPEC §3.4), encoded one trajectory at a time at batch size 64, as compact does; by default whole trajectories
until 150 windows (``--max-windows 0``: all of them), so that the run takes about 3 minutes on 2
shared cores. Each repeat times
every backend once over all trajectories, the order alternating between repeats (interleaved, so
drift from the other users of a shared machine falls on both); the figure per backend is the
median of the repeats with their range, and the ratio is onnx's median windows/s over torch's
(``ratio_per_repeat``: the two passes of each repeat, side by side); ``ratio_over_torch`` gives
the same for every backend.
The first pass of each backend (warm-up) is not counted. Both backends use torch's thread count
(ONNX Runtime's ``intra_op_num_threads`` follows it). The embeddings of the last repeat are
compared too (smallest cosine between the backends' rows).

**Roofline.** A forward pre-hook on the transformer module records the shape and attention mask of
every batch, so the matrix-product FLOPs the backends execute (padded batches) and the FLOPs any
exact backend must execute (each window at its own length) are counted with
:func:`lam_ref.costmodel.encoder_matmul_flops`. The float32 GEMM rate of this process (the best of
torch's and numpy's BLAS on the model's three product shapes at batch 64 × 256 tokens) is the
roof; ``fp32_ceiling_over_torch`` = torch's median time over (unpadded FLOPs / roof) bounds the
speed-up of any float32 backend that computes these embeddings, even one whose softmax, GELU,
layer norms, tokenisation and pooling took no time at all.

Run: ``.venv/bin/python benchmarks/bench_encoder.py [--repeat 3] [--max-windows 150] [--json benchmarks/results/encoder.json]``.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _timing import best_of  # noqa: E402

from lam_ref.costmodel import MINILM_L6, encoder_matmul_flops
from lam_ref.geometry import LamValueError
from lam_ref.text.backends import BACKENDS, DEFAULT_BACKEND, get_backend, require_backend
from lam_ref.text.chunking import chunk_records, get_tokenizer
from lam_ref.text.encoders import DEFAULT_BATCH_SIZE, get_encoder
from lam_ref.text.loaders import LoadFailure, iter_trajectories, shared_data_dir

#: The baseline pass: the torch encoder through sentence-transformers' own batching.
ST_ORDER = "torch_st_order"


def windows(data: Path, encoder_name: str, max_windows: int | None = None) -> list[list[str]]:
    """The window texts of each trajectory, as compact cuts them (SPEC §3), trajectories in the
    loader's order until ``max_windows`` windows are reached (``None``: all)."""
    enc, tok = get_encoder(encoder_name), get_tokenizer()
    out: list[list[str]] = []
    for item in iter_trajectories([data]):
        if max_windows is not None and sum(map(len, out)) >= max_windows:
            break
        if isinstance(item, LoadFailure):
            continue
        items = [(i, item.records[i].turn, item.records[i].text) for i in item.observation_indices]
        chunks = chunk_records(items, tok, 512, horizon=enc, fit=True)
        if chunks:
            out.append([c.text for c in chunks])
    return out


class BatchShapes:
    """Records ``(rows, padded length, real lengths)`` of each batch entering a sentence-transformers
    model's first (transformer) module, through a forward pre-hook; the batches are unchanged."""

    def __init__(self, st_model: Any) -> None:
        self.batches: list[tuple[int, int, list[int]]] = []
        self._handle = st_model[0].register_forward_pre_hook(self._record)

    def _record(self, _module: Any, args: tuple) -> None:
        mask = args[0]["attention_mask"]
        self.batches.append((int(mask.shape[0]), int(mask.shape[1]), [int(x) for x in mask.sum(dim=1)]))

    def flops(self) -> tuple[float, float]:
        """(padded, unpadded) matrix-product FLOPs of the recorded batches."""
        padded = sum(encoder_matmul_flops([n] * b) for b, n, _ in self.batches)
        return padded, sum(encoder_matmul_flops(lens) for _, _, lens in self.batches)

    def close(self) -> None:
        self._handle.remove()


def gemm_roof(rows: int = 64 * 256, repeat: int = 5) -> dict[str, Any]:
    """The best float32 GEMM rate (FLOP/s) of torch and of numpy in this process, on the shapes of
    MiniLM's products at ``rows`` tokens: ``(rows×384)(384×384)``, ``(rows×384)(384×1536)``,
    ``(rows×1536)(1536×384)``; the fastest of ``repeat`` timings of each."""
    import torch

    rng = np.random.default_rng(0)
    d, f = MINILM_L6.d_model, 1536
    rates: dict[str, dict[str, float]] = {"torch": {}, "numpy": {}}
    for k, n in ((d, d), (d, f), (f, d)):
        a = rng.standard_normal((rows, k), dtype=np.float32)
        b = rng.standard_normal((k, n), dtype=np.float32)
        ta, tb = torch.from_numpy(a), torch.from_numpy(b)
        flop = 2.0 * rows * k * n
        with torch.no_grad():
            rates["torch"][f"{k}x{n}"] = flop / best_of(lambda ta=ta, tb=tb: torch.matmul(ta, tb), repeat)
        rates["numpy"][f"{k}x{n}"] = flop / best_of(lambda a=a, b=b: a @ b, repeat)
    best = max(v for r in rates.values() for v in r.values())
    return {"rows": rows, "flops_per_s": rates, "roof_flops_per_s": best}


def _precision(described: dict[str, Any], backend: str) -> str:
    """The precision a backend ran at: what its runtime reported (``inference_precision``), else
    its record's (:attr:`lam_ref.text.backends.Backend.precision`)."""
    spec = get_backend(backend)
    info = described.get(spec.report_key or "") or {}
    return str(info.get("inference_precision") or spec.precision or "float32")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", help="trajectory folder (default ../shared/data/swe-agent-trajectories)")
    ap.add_argument("--encoder", default="all-MiniLM-L6-v2")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--max-windows", type=int, default=150,
                    help="whole trajectories until this many windows (default 150; 0: all 493, ~4x longer)")
    ap.add_argument("--batch-size", type=int, default=DEFAULT_BATCH_SIZE)
    ap.add_argument("--json")
    args = ap.parse_args()
    data = Path(args.data) if args.data else shared_data_dir()
    if data is None or not data.exists():
        print("no trajectories found (set --data or LAM_SHARED_DATA)", file=sys.stderr)
        return 2
    texts = windows(data, args.encoder, args.max_windows or None)
    n = sum(len(t) for t in texts)
    t0 = time.perf_counter()
    backends = []
    for b in BACKENDS:
        try:
            require_backend(b)
            backends.append(b)
        except LamValueError as exc:
            if b in (DEFAULT_BACKEND, "onnx"):  # the reference, and the pair the JSON's onnx figures compare
                raise
            print(f"skipped: {exc}", file=sys.stderr)
    encs = {b: get_encoder(args.encoder, None, b) for b in backends}
    load_s = time.perf_counter() - t0
    st = encs["torch"].model

    def st_order(t: list[str]) -> np.ndarray:  # the baseline: sentence-transformers' own batches (by characters)
        return np.asarray(st.encode(t, batch_size=args.batch_size, normalize_embeddings=True, convert_to_numpy=True,
                                    show_progress_bar=False), dtype=np.float32)

    passes = {b: (lambda t, b=b: encs[b].encode(t, batch_size=args.batch_size)) for b in backends}
    passes[ST_ORDER] = st_order
    secs: dict[str, list[float]] = {b: [] for b in passes}
    last: dict[str, np.ndarray] = {}
    flops: dict[str, tuple[float, float]] = {}
    names = list(passes)
    for r in range(args.repeat + 1):
        for b in (names if r % 2 == 0 else names[::-1]):
            shapes = BatchShapes(encs[b if b in encs else "torch"].model) if r == 0 else None
            t1 = time.perf_counter()
            rows = [passes[b](t) for t in texts]
            dt = time.perf_counter() - t1
            if shapes is not None:
                shapes.close()
                flops[b] = shapes.flops()
            if r:
                secs[b].append(dt)
            last[b] = np.concatenate(rows)
            print(f"repeat {r}{' (warm-up)' if r == 0 else ''} {b}: {n / dt:.1f} windows/s", file=sys.stderr, flush=True)
    cos = np.einsum("ij,ij->i", last["torch"].astype(np.float64), last["onnx"].astype(np.float64))
    res = {}
    for b in names:
        wps = [n / s for s in secs[b]]
        res[b] = {"windows_per_s_median": statistics.median(wps), "windows_per_s_min": min(wps),
                  "windows_per_s_max": max(wps), "seconds": secs[b]}
    roof = gemm_roof()
    padded, unpadded = flops["torch"]
    for b in names:
        med = statistics.median(secs[b])
        res[b].update({"matmul_flops_per_s": flops[b][0] / med, "fraction_of_gemm_roof": flops[b][0] / med / roof["roof_flops_per_s"],
                       "matmul_flops_padded": flops[b][0], "padding_overhead": flops[b][0] / unpadded - 1.0})
    t_min = unpadded / roof["roof_flops_per_s"]
    roofline = {**roof, "matmul_flops_padded": padded, "matmul_flops_unpadded": unpadded,
                "padding_overhead": padded / unpadded - 1.0, "same_batches": flops["torch"] == flops["onnx"],
                "seconds_at_roof_unpadded": t_min,
                "fp32_ceiling_over_torch": statistics.median(secs["torch"]) / t_min}
    ratio = res["onnx"]["windows_per_s_median"] / res["torch"]["windows_per_s_median"]
    paired = [t / o for t, o in zip(secs["torch"], secs["onnx"])]  # the two passes of one repeat, side by side
    over_torch = {b: {"median": res[b]["windows_per_s_median"] / res["torch"]["windows_per_s_median"],
                      "per_repeat": [t / o for t, o in zip(secs["torch"], secs[b])],
                      "min_cosine_vs_torch": float(np.einsum("ij,ij->i", last["torch"].astype(np.float64),
                                                             last[b].astype(np.float64)).min()),
                      "inference_precision": _precision(encs[b].describe(), b)}
                  for b in backends if b != "torch"}
    batching = {"ratio_token_length_over_st_order": res["torch"]["windows_per_s_median"] / res[ST_ORDER]["windows_per_s_median"],
                "ratio_per_repeat": [s0 / t for s0, t in zip(secs[ST_ORDER], secs["torch"])],
                "onnx_over_st_order": res["onnx"]["windows_per_s_median"] / res[ST_ORDER]["windows_per_s_median"],
                "min_cosine_vs_st_order": float(np.einsum("ij,ij->i", last["torch"].astype(np.float64),
                                                          last[ST_ORDER].astype(np.float64)).min())}
    import torch

    out = {"benchmark": "encoder backends (windows/s, end to end)", "machine": {"platform": platform.platform(),
           "cpus": os.cpu_count(), "torch_threads": torch.get_num_threads()},
           "command": "benchmarks/bench_encoder.py " + " ".join(sys.argv[1:]),
           "source": data.name, "trajectories": len(texts), "windows": n, "batch_size": args.batch_size,
           "repeats": args.repeat, "encoders": {b: encs[b].describe() for b in backends}, "load_s": load_s,
           "results": res, "roofline": roofline, "batching": batching, "ratio_onnx_over_torch": ratio, "ratio_per_repeat": paired,
           "ratio_over_torch": over_torch, "min_cosine_onnx_vs_torch": float(cos.min()),
           "max_abs_coordinate_difference": float(np.abs(last["torch"] - last["onnx"]).max())}
    for b in names:
        x = res[b]
        print(f"{b:14s} {x['windows_per_s_median']:8.1f} windows/s (range {x['windows_per_s_min']:.1f}–"
              f"{x['windows_per_s_max']:.1f}, {args.repeat} repeats)")
    print(f"onnx/torch: {ratio:.2f}x (per repeat {min(paired):.2f}–{max(paired):.2f}x) on {n} windows of {len(texts)} trajectories; smallest cosine between the "
          f"backends' embeddings {cos.min():.9f}")
    for b, x in over_torch.items():
        print(f"{b}/torch: {x['median']:.2f}x (per repeat {min(x['per_repeat']):.2f}–{max(x['per_repeat']):.2f}x; "
              f"{x['inference_precision']}); smallest cosine to torch {x['min_cosine_vs_torch']:.9f}")
    print(f"roofline: float32 GEMM roof {roof['roof_flops_per_s'] / 1e9:.0f} GFLOP/s; the backends run at "
          + ", ".join(f"{b} {res[b]['fraction_of_gemm_roof']:.2f}" for b in backends)
          + f" of it (padding adds {roofline['padding_overhead']:.1%} FLOPs); no float32 backend can beat torch by more "
          f"than {roofline['fp32_ceiling_over_torch']:.2f}x here")
    print(f"token-length batches (SPEC §4.1) / sentence-transformers' order, torch: {batching['ratio_token_length_over_st_order']:.2f}x "
          f"(per repeat {min(batching['ratio_per_repeat']):.2f}–{max(batching['ratio_per_repeat']):.2f}x; padding "
          f"{res['torch']['padding_overhead']:.1%} against {res[ST_ORDER]['padding_overhead']:.1%}); onnx over that baseline "
          f"{batching['onnx_over_st_order']:.2f}x")
    if args.json:
        Path(args.json).parent.mkdir(parents=True, exist_ok=True)
        Path(args.json).write_text(json.dumps(out, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
