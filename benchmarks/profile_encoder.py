"""Where the encoder's time goes (issue 37 §2): one pass of the torch backend over the windows
``lam-ref compact`` encodes, split into phases, and torch.profiler's operator times grouped by
kind. Not a test: it reports.

Phases (wall time, one timed pass after a warm-up, one trajectory per ``encode`` call as compact
does): the token-length pass that orders the batches (SPEC §4.1, ``Encoder.token_lengths``),
sentence-transformers' tokenisation of each batch (``st_model.tokenize``), the transformer
(``st_model[0]``'s forward), and the rest (pooling, normalisation, copies, Python). Padding: the
tokens of the padded batches against the windows' own lengths. Operators (a second pass under
``torch.profiler``, self CPU time): matrix products (``addmm``, ``mm``, ``bmm``, ``matmul``,
``linear``), attention (``scaled_dot_product_attention`` and its kernels, ``softmax``), GELU, layer
norm, element-wise and copies, and everything else.

Run: ``.venv/bin/python benchmarks/profile_encoder.py [--max-windows 64] [--json OUT]``.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
sys.path.insert(0, str(Path(__file__).resolve().parent))

#: torch operator name fragments by kind, first match wins.
KINDS = [
    ("attention", ("scaled_dot_product", "_flash_attention", "_efficient_attention", "softmax", "baddbmm", "bmm")),
    ("matrix products", ("addmm", "aten::mm", "matmul", "linear")),
    ("GELU", ("gelu",)),
    ("layer norm", ("layer_norm",)),
    ("element-wise and copies", ("add", "mul", "div", "copy_", "contiguous", "view", "reshape", "permute",
                                 "transpose", "expand", "to", "clone", "cat", "where", "masked_fill", "sum",
                                 "mean", "sqrt", "clamp", "embedding", "index", "slice", "select", "unsqueeze",
                                 "empty", "zeros", "ones", "fill_", "sub", "rsub", "norm", "max", "pow")),
]


def kind_of(name: str) -> str:
    low = name.lower()
    for kind, frags in KINDS:
        if any(f in low for f in frags):
            return kind
    return "other"


class Phases:
    """Wall time of tokenisation and of the transformer, by wrapping ``st_model.tokenize`` and
    hooking ``st_model[0]``; the batches are unchanged."""

    def __init__(self, encoder: Any) -> None:
        st_model = encoder.model
        self.t: dict[str, float] = defaultdict(float)
        self.padded = 0
        self._st, self._enc = st_model, encoder
        lengths = encoder.token_lengths

        def token_lengths(texts: Any) -> Any:
            t0 = time.perf_counter()
            out = lengths(texts)
            self.t["token-length pass (batch order)"] += time.perf_counter() - t0
            return out

        encoder.token_lengths = token_lengths
        # sentence-transformers 6 tokenises in ``preprocess`` (earlier versions: ``tokenize``)
        self._name = "preprocess" if hasattr(st_model, "preprocess") else "tokenize"
        self._tokenize = getattr(st_model, self._name)

        def tokenize(*a: Any, **k: Any) -> Any:
            t0 = time.perf_counter()
            out = self._tokenize(*a, **k)
            self.t["tokenisation (batches)"] += time.perf_counter() - t0
            return out

        setattr(st_model, self._name, tokenize)
        self._start = 0.0
        self._h1 = st_model[0].register_forward_pre_hook(lambda _m, a: self._begin(a))
        self._h2 = st_model[0].register_forward_hook(lambda _m, _a, _o: self._end())

    def _begin(self, args: tuple) -> None:
        self.padded += int(args[0]["input_ids"].numel())
        self._start = time.perf_counter()

    def _end(self) -> None:
        self.t["transformer"] += time.perf_counter() - self._start

    def close(self) -> None:
        self._h1.remove()
        self._h2.remove()
        delattr(self._st, self._name)
        del self._enc.token_lengths


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--max-windows", type=int, default=64)
    ap.add_argument("--encoder", default="all-MiniLM-L6-v2")
    ap.add_argument("--json", metavar="OUT")
    args = ap.parse_args(argv)
    import torch
    from bench_encoder import windows
    from torch.profiler import ProfilerActivity, profile

    from lam_ref.text.encoders import get_encoder
    from lam_ref.text.loaders import shared_data_dir

    data = shared_data_dir()
    if data is None:
        print("profile_encoder: ../shared/data is absent; nothing to measure", file=sys.stderr)
        return 0
    trajs = windows(data, args.encoder, args.max_windows)
    enc = get_encoder(args.encoder, None, "torch")
    enc.encode(trajs[0][:8])  # warm-up
    n = sum(map(len, trajs))
    real = sum(min(x, enc.max_tokens) for t in trajs for x in enc.token_lengths(t))
    phases = Phases(enc)
    t0 = time.perf_counter()
    for t in trajs:
        enc.encode(t)
    total = time.perf_counter() - t0
    phases.close()
    split = dict(phases.t)
    split["rest (pooling, normalisation, copies, Python)"] = total - sum(split.values())
    with profile(activities=[ProfilerActivity.CPU]) as prof:
        for t in trajs:
            enc.encode(t)
    ops: dict[str, float] = defaultdict(float)
    for ev in prof.key_averages():
        ops[kind_of(ev.key)] += ev.self_cpu_time_total / 1e6
    op_total = sum(ops.values())
    report = {
        "windows": n, "trajectories": len(trajs), "torch_threads": torch.get_num_threads(),
        "wall_s": total, "windows_per_s": n / total,
        "phases_s": split, "phases_share": {k: v / total for k, v in split.items()},
        "tokens": {"real": real, "padded": phases.padded, "padding_share": 1 - real / max(phases.padded, 1)},
        "operators_s": dict(ops), "operators_share": {k: v / op_total for k, v in ops.items()},
        "top_operators": [(ev.key, ev.self_cpu_time_total / 1e6) for ev in
                          sorted(prof.key_averages(), key=lambda e: -e.self_cpu_time_total)[:12]],
        "command": "python benchmarks/profile_encoder.py " + " ".join(argv if argv is not None else sys.argv[1:]),
    }
    print(f"{n} windows in {len(trajs)} trajectories, torch {torch.__version__}, {report['torch_threads']} threads: "
          f"{total:.1f} s, {n / total:.2f} windows/s")
    for k, v in split.items():
        print(f"  {k:<48} {v:7.2f} s  {v / total:6.1%}")
    print(f"  padding: {phases.padded} tokens in the padded batches for {real} real ({report['tokens']['padding_share']:.1%})")
    print("  operators (profiled pass, self CPU time):")
    for k, v in sorted(ops.items(), key=lambda kv: -kv[1]):
        print(f"    {k:<28} {v:7.2f} s  {v / op_total:6.1%}")
    print("  top operators: " + "; ".join(f"{k} {v:.2f} s" for k, v in report["top_operators"]))
    if args.json:
        Path(args.json).parent.mkdir(parents=True, exist_ok=True)
        Path(args.json).write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
