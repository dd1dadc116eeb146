"""Index footprint per trajectory (paper App. E.2 "Index footprint": 8.5 KB per 1K observation
tokens at cos >= 0.95, embeddings 94 % of it, log-log growth exponent 0.71). Not a test: it reports.

For each shared SWE-agent trajectory: compact it (L1 then L0, real encoder, 512-token cl100k
windows) and count what the online index holds at the end: one float32 embedding per retained
chunk (``kept × D × 4`` bytes) and one 64-bit hash per distinct observation line (L0's seen set,
counted over the observation text: an upper bound on what L0 keeps after L1). The figure is
bytes per 1K observation tokens (pooled and per trajectory) and the exponent of a least-squares
fit of log(bytes) on log(tokens) across trajectories. The encoder is the offline default
(all-MiniLM-L6-v2, D = 384) at its equivalent threshold 0.935 (paper §B.4) and at 0.95; the
paper's bge-base (D = 768) doubles the embedding bytes of the same retained set.

Run: ``.venv/bin/python benchmarks/bench_footprint.py [--json benchmarks/results/footprint.json]``.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import time
from pathlib import Path

import numpy as np
import xxhash

from lam_ref.text.encoders import get_encoder
from lam_ref.text.loaders import LoadFailure, iter_trajectories, shared_data_dir
from lam_ref.text.pipeline import CompactionConfig, compact_trajectory


def distinct_lines(texts: list[str]) -> int:
    seen = set()
    for t in texts:
        for line in t.split("\n"):
            if line.strip():
                seen.add(xxhash.xxh3_64_intdigest(line.encode("utf-8", errors="surrogatepass")))
    return len(seen)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", help="trajectory folder (default ../shared/data/swe-agent-trajectories)")
    ap.add_argument("--encoder", default="all-MiniLM-L6-v2")
    ap.add_argument("--thresholds", type=float, nargs="+", default=[0.935, 0.95])
    ap.add_argument("--json")
    args = ap.parse_args()
    data = Path(args.data) if args.data else shared_data_dir()
    if data is None or not data.exists():
        print("no trajectories found (set --data or LAM_SHARED_DATA)", file=sys.stderr)
        return 2
    enc = get_encoder(args.encoder)
    t0 = time.perf_counter()
    per: dict[float, list[dict]] = {t: [] for t in args.thresholds}
    for item in iter_trajectories([data]):
        if isinstance(item, LoadFailure):
            continue
        cache: dict = {}
        obs = [item.records[i].text for i in item.observation_indices]
        lines = distinct_lines(obs)
        for t in args.thresholds:
            res = compact_trajectory(item, enc, CompactionConfig(threshold=t, per_layer=False), cache=cache)
            emb = res.kept_chunks * enc.dim * 4
            per[t].append({"trajectory": item.id, "tokens": res.tokens_original, "chunks": res.chunks,
                           "kept": res.kept_chunks, "embedding_bytes": emb, "line_hash_bytes": 8 * lines,
                           "bytes": emb + 8 * lines})
    out = {"machine": {"platform": platform.platform(), "cpus": os.cpu_count()}, "encoder": enc.describe(),
           "source": str(data.name), "results": {}}
    for t, rows in per.items():
        rows = [r for r in rows if r["tokens"] > 0]
        tok = np.array([r["tokens"] for r in rows], float)
        by = np.array([r["bytes"] for r in rows], float)
        emb = sum(r["embedding_bytes"] for r in rows)
        slope = float(np.polyfit(np.log(tok), np.log(by), 1)[0]) if len(rows) > 2 else None
        out["results"][str(t)] = {
            "trajectories": len(rows), "observation_tokens": int(tok.sum()),
            "bytes_per_1k_tokens_pooled": float(by.sum() / tok.sum() * 1000),
            "bytes_per_1k_tokens_median": float(np.median(by / tok * 1000)),
            "embedding_share": float(emb / by.sum()),
            "bytes_per_1k_tokens_pooled_at_d768": float((2 * emb + (by.sum() - emb)) / tok.sum() * 1000),
            "mean_bytes": float(by.mean()), "max_bytes": float(by.max()),
            "loglog_exponent": slope, "paper_bytes_per_1k_tokens": 8500.0, "paper_exponent": 0.71,
            "rows": rows,
        }
        r = out["results"][str(t)]
        print(f"t={t}: {r['bytes_per_1k_tokens_pooled']:.0f} B per 1K tokens (pooled), "
              f"{r['bytes_per_1k_tokens_pooled_at_d768']:.0f} at D=768, embeddings {100 * r['embedding_share']:.0f} %, "
              f"exponent {slope:.2f} over {len(rows)} trajectories")
    out["wall_s"] = time.perf_counter() - t0
    if args.json:
        tmp = args.json + ".tmp"
        Path(args.json).parent.mkdir(parents=True, exist_ok=True)
        with open(tmp, "w") as fh:
            json.dump(out, fh, indent=2)
        os.replace(tmp, args.json)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
