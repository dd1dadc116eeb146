"""Make the figures of the docs (PNG and SVG in ``docs/img/``) from measured outputs.

Inputs (all produced by commands documented on the pages that show the figures):

* ``--sweep SWEEP.json``: ``lam-ref sweep PATH --thresholds ... --json SWEEP.json`` → removal
  (gross and net), keep and recall against the threshold;
* ``--embeddings EMB.npy``: ``lam-ref sweep/compact ... --save-embeddings EMB.npy`` (with
  ``EMB.ids.json`` beside it) → the distribution of merge distances at ``--threshold`` (each
  trajectory's windows run through Algorithm 2 with the default bands, as ``compact`` runs L1);
* ``benchmarks/results/{compact,l0,substitution}.json`` → throughput of each stage;
* ``--compare COMPARE.json``: ``lam-ref compare PATH --gold gold.json --json COMPARE.json`` → the
  peers figure (``docs/assets/peers/compare.{png,svg}``), drawn by the same function as
  ``lam-ref compare --plot``, without running the comparison again.

Usage::

    python docs/make_plots.py --sweep sweep.json --embeddings emb.npy [--threshold 0.95] [--out docs/img]
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from lam_ref.geometry import delta_from_t  # noqa: E402
from lam_ref.substitution import substitute  # noqa: E402


def _save(fig, out: Path, name: str) -> list[Path]:
    out.mkdir(parents=True, exist_ok=True)
    paths = []
    for ext in ("png", "svg"):
        p = out / f"{name}.{ext}"
        fig.savefig(p, dpi=130, bbox_inches="tight", metadata={"Date": None} if ext == "svg" else None)
        paths.append(p)
    plt.close(fig)
    return paths


def removal_vs_threshold(sweep: dict, out: Path) -> list[Path]:
    rows = sorted(sweep["rows"], key=lambda r: r["t"])
    t = [r["t"] for r in rows]
    fig, ax = plt.subplots(figsize=(7, 4))
    ax.plot(t, [100 * r["removal_gross"] for r in rows], "o-", label="gross removal (stubs not counted)")
    ax.plot(t, [100 * r["removal_net"] for r in rows], "s-", label="net removal (stubs counted)")
    ax.plot(t, [100 * (1 - r["keep"]) for r in rows], "^--", label="windows dropped by L1")
    rec_key = next((k for k in rows[0] if k.startswith("recall_at_")), None)
    if rec_key and rows[0][rec_key] is not None:
        ax2 = ax.twinx()
        label = rec_key.replace("_at_", "@")
        ax2.plot(t, [r[rec_key] for r in rows], "d:", color="grey", label=f"{label} after substitution (right axis)")
        ax2.set_ylabel(label)
        ax2.set_ylim(0.9, 1.001)
        ax2.legend(loc="lower left", fontsize=8)
    ax.set_xlabel("merge threshold t (cosine)")
    ax.set_ylabel("% of observation tokens / windows")
    enc = sweep.get("encoder", {}).get("name", "?")
    ax.set_title(f"Removal against the threshold ({enc}, L1 then L0)")
    ax.grid(alpha=0.3)
    ax.legend(loc="upper left", bbox_to_anchor=(0.005, 0.76), fontsize=8, framealpha=0.9)
    return _save(fig, out, "removal_vs_threshold")


def merge_distance_histogram(emb_path: Path, t: float, out: Path) -> list[Path]:
    e = np.load(emb_path)
    ids = json.loads(emb_path.with_name(emb_path.name[:-4] + ".ids.json").read_text())["rows"]
    traj = np.array([r[0] for r in ids])
    dists = []
    for name in dict.fromkeys(traj.tolist()):
        rows = np.flatnonzero(traj == name)
        res = substitute(e[rows], t)
        merged = res.pi != np.arange(rows.size)
        dists.append(res.distances[merged])
    d = np.concatenate(dists) if dists else np.zeros(0)
    delta = delta_from_t(t)
    fig, ax = plt.subplots(figsize=(7, 3.6))
    ax.hist(d, bins=np.linspace(0, delta * 1.02, 33), color="tab:blue", edgecolor="white")
    ax.axvline(delta, color="tab:red", ls="--", label=f"δ = {delta:.4f} (t = {t})")
    if d.size:
        ax.axvline(float(d.max()), color="tab:green", ls=":", label=f"δ̂ = {d.max():.4f}")
    ax.set_xlabel("distance from a dropped window to its representative ‖e_i − e_π(i)‖")
    ax.set_ylabel("dropped windows")
    ax.set_title(f"Merge distances: {d.size} dropped of {e.shape[0]} windows, {len(dists)} trajectories")
    ax.legend(fontsize=8)
    ax.grid(alpha=0.3)
    return _save(fig, out, "merge_distance_histogram")


def throughput(results: Path, out: Path) -> list[Path]:
    comp = json.loads((results / "compact.json").read_text())["stages"]
    l0 = json.loads((results / "l0.json").read_text())["results"]["per_trajectory"]
    sub = json.loads((results / "substitution.json").read_text())["dims"]
    fig, axes = plt.subplots(1, 3, figsize=(13, 3.8))
    # 1: where compaction time goes
    stages = {"encode": comp["encode_s"], **comp["other_breakdown_s"]}
    names = sorted(stages, key=stages.get, reverse=True)
    axes[0].barh(names, [stages[n] for n in names], color=["tab:red"] + ["tab:blue"] * (len(names) - 1))
    axes[0].set_xscale("log")
    axes[0].invert_yaxis()
    axes[0].set_xlabel("seconds (log scale)")
    win_s = comp["chunks"] / (comp["encode_s"] + comp["other_s"])
    tok_s = comp["observation_tokens"] / (comp["encode_s"] + comp["other_s"])
    axes[0].set_title(f"lam-ref compact, {comp['trajectories']} trajectories:\n"
                      f"{win_s:.1f} windows/s, {tok_s:,.0f} tokens/s end to end", fontsize=9)
    # 2: L0 against raw hashing
    ns = l0["ns_per_line"]
    labels = ["raw xxh3_64", "L0 (C)", "L0 (numpy)"]
    vals = [1e3 / ns["raw_hash"], 1e3 / ns["l0_c"], 1e3 / ns["l0_python"]]
    axes[1].bar(labels, vals, color=["grey", "tab:blue", "tab:orange"])
    axes[1].set_ylabel("million lines / s")
    axes[1].set_title(f"L0 over {l0['lines']:,} lines", fontsize=9)
    # 3: Algorithm 2 verification
    labels = [f"D={s['dim']}" for s in sub]
    axes[2].bar(labels, [s["exhaustive_pairs_per_s"] / 1e6 for s in sub], color="tab:blue", label="exhaustive")
    axes[2].axhline(13.0, color="tab:red", ls="--", label="paper Table 22: 13.0 M/s")
    axes[2].set_ylabel("million pairs verified / s")
    axes[2].set_title(f"Algorithm 2, N = {sub[0]['n']:,}, t = {sub[0]['t']}", fontsize=9)
    axes[2].legend(fontsize=8)
    for ax in axes:
        ax.grid(alpha=0.3, axis="x" if ax is axes[0] else "y")
    fig.tight_layout()
    return _save(fig, out, "throughput")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sweep", type=Path, help="JSON of lam-ref sweep")
    ap.add_argument("--embeddings", type=Path, help=".npy of --save-embeddings (ids beside it)")
    ap.add_argument("--threshold", type=float, default=0.95, help="threshold of the merge-distance histogram")
    ap.add_argument("--results", type=Path, default=ROOT / "benchmarks" / "results", help="benchmark results folder")
    ap.add_argument("--compare", type=Path, help="JSON of lam-ref compare (the peers figure)")
    ap.add_argument("--out", type=Path, default=ROOT / "docs" / "img", help="output folder")
    args = ap.parse_args(argv)
    written = []
    if args.sweep:
        written += removal_vs_threshold(json.loads(args.sweep.read_text()), args.out)
    if args.embeddings:
        written += merge_distance_histogram(args.embeddings, args.threshold, args.out)
    if args.compare:
        from lam_ref.peers.compare import plot as compare_plot

        peers = ROOT / "docs" / "assets" / "peers"
        written += compare_plot(json.loads(args.compare.read_text())["rows"], str(peers / "compare.png"))
    if (args.results / "compact.json").is_file():
        written += throughput(args.results, args.out)
    for p in written:
        print(p)
    return 0


if __name__ == "__main__":
    sys.exit(main())
