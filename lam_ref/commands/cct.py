"""``lam-ref cct``: Context Compaction Theory, executable (docs/cct.md).

* ``lam-ref cct membership``: the membership case study of its Appendix A without an LLM — a
  table of error against budget for SELECT and GEN compactors, ``--json``, and a plot of error
  against bits per item with the analytic curves (PNG and SVG);
* ``lam-ref cct toy``: exact optima (GEN and SELECT) of the membership game at toy scale, next
  to the compactors' error on the same game;
* ``lam-ref cct thm3``: Theorem 3's least budgets (GEN, SELECT) for ``n = 2^k`` at given errors.
"""

from __future__ import annotations

import argparse
import io
import math
from pathlib import Path

import numpy as np

from .._io import atomic_write, write_json
from ..geometry import LamValueError
from ..plots import pyplot
from ..tables import table
from ._options import add_mkdir
from ._paths import png_and_svg, validate_output_file, writes

LARGE_QUERIES = 5_000

#: The example each ``--help`` shows (``lam_ref.cli`` collects them from every command module).
EXAMPLES = {
    "cct": "lam-ref cct thm3 --n 4 8 16 --eps 0 0.1",
    "cct membership": "lam-ref cct membership --members 200 --queries 100 --json membership.json --plot membership",
    "cct toy": "lam-ref cct toy --universe 4 --members 2 --max-bits 3",
    "cct thm3": "lam-ref cct thm3 --n 4 8 16 --eps 0 0.1 --json thm3.json",
}


def register(sub: argparse._SubParsersAction) -> argparse.ArgumentParser:
    p = sub.add_parser("cct", help="Context Compaction Theory: membership case study, toy optima, Theorem 3")
    inner = p.add_subparsers(dest="cct_command", metavar="SUBCOMMAND")

    m = inner.add_parser("membership", help="membership case study (App. A) without an LLM")
    m.add_argument("--members", type=int, default=15_000, help="recorded URLs N (default 15000)")
    m.add_argument("--queries", type=int, default=100, help="member and non-member queries each (default 100)")
    m.add_argument("--large", action="store_true", help=f"large-query mode: {LARGE_QUERIES} + {LARGE_QUERIES} queries")
    m.add_argument("--seeds", type=int, nargs="+", default=[42, 43, 44], help="seeds (default 42 43 44)")
    m.add_argument("--bits-per-item", type=float, nargs="+",
                   default=[0.5, 1, 2, 4, 8, 16, 32, 64, 128, 256], help="budgets as bits per member")
    from ..cct.membership import COMPACTORS, MODES

    m.add_argument("--compactors", nargs="+", default=list(COMPACTORS), choices=COMPACTORS, metavar="NAME",
                   help=f"compactors (default all: {', '.join(COMPACTORS)})")
    m.add_argument("--mode", choices=MODES, default="chars", help="bits as chars x 8 (default) or gzip bits")
    m.add_argument("--threshold", "-t", type=float, default=0.9, help="LAM's cosine threshold t (default 0.9)")
    writes(m.add_argument("--json", metavar="OUT", help="write results as JSON (- for stdout)"))
    writes(m.add_argument("--plot", metavar="STEM", help="write STEM.png and STEM.svg (error vs bits per item)"),
           also=png_and_svg)
    add_mkdir(m)
    m.set_defaults(func=run_membership)

    t = inner.add_parser("toy", help="exact optima of the membership game at toy scale")
    t.add_argument("--universe", type=int, default=4, help="universe size u (default 4)")
    t.add_argument("--members", type=int, default=2, help="members N (default 2)")
    t.add_argument("--max-bits", type=int, default=3, help="budgets 0..MAX_BITS bits (default 3)")
    writes(t.add_argument("--json", metavar="OUT", help="write results as JSON (- for stdout)"))
    add_mkdir(t)
    t.set_defaults(func=run_toy)

    h = inner.add_parser("thm3", help="Theorem 3: least GEN and SELECT budgets for n = 2^k")
    h.add_argument("--n", type=int, nargs="+", default=[4, 8, 16, 64, 1024], help="n (powers of two >= 4)")
    h.add_argument("--eps", type=float, nargs="+", default=[0.0, 0.01, 0.1, 0.5], help="target errors in [0, 1)")
    writes(h.add_argument("--json", metavar="OUT", help="write results as JSON (- for stdout)"))
    add_mkdir(h)
    h.set_defaults(func=run_thm3)
    p.set_defaults(func=lambda args: (p.print_help(), 2)[1])
    return p


def _validate_common(args: argparse.Namespace) -> None:
    if args.json and args.json != "-":
        validate_output_file(args.json, "--json", mkdir=args.mkdir)


def run_membership(args: argparse.Namespace) -> int:
    from ..cct.bloom import bloom_error_curve, membership_lower_bound
    from ..cct.membership import run_case_study

    _validate_common(args)
    if args.plot:
        validate_output_file(args.plot + ".png", "--plot", mkdir=args.mkdir)
    queries = LARGE_QUERIES if args.large else args.queries
    if args.members < 1:
        raise LamValueError(f"--members must be >= 1, got {args.members}")
    if queries < 1 or queries > args.members:
        raise LamValueError(f"--queries must be in [1, --members = {args.members}], got {queries}")
    for b in args.bits_per_item:
        if not math.isfinite(b) or b < 0:
            raise LamValueError(f"--bits-per-item must be finite and >= 0, got {b}")
    outcomes = run_case_study(n_members=args.members, n_queries=queries, seeds=args.seeds,
                              bits_per_item=args.bits_per_item, compactors=args.compactors, mode=args.mode,
                              t=args.threshold)
    n = args.members
    rows = []
    for o in outcomes:
        b = o.bits_used
        rows.append([o.compactor, o.kind, o.budget, f"{o.bits_per_item:.3g}", o.false_positives, o.false_negatives,
                     f"{o.error:.3f}", f"[{o.ci_low:.3f}, {o.ci_high:.3f}]",
                     f"{float(bloom_error_curve(b, n)):.3f}", f"{float(membership_lower_bound(b, n)):.3f}"])
    if args.json != "-":
        print(f"membership: N = {n}, {queries} + {queries} queries x {len(args.seeds)} seeds, bits = {args.mode}")
        print(table(rows, ["compactor", "class", "budget", "bits/item", "FP", "FN", "error", "95% CI",
                           "Bloom curve", "lower bound"]))
    if args.json:
        write_json({"members": n, "queries_each": queries, "seeds": list(args.seeds), "mode": args.mode,
                    "threshold": args.threshold, "results": [o.to_json() for o in outcomes]}, args.json)
    if args.plot:
        for path in plot_membership(outcomes, n, args.plot):
            if args.json != "-":
                print(f"wrote {path}")
    return 0


def plot_membership(outcomes, n: int, stem: str) -> list[Path]:
    """Error against bits per item (bits used / N) per compactor, with 95 % intervals and the
    analytic curves of App. A: Bloom ``½e^{-(ln 2)^2 b}``, floor ``½·2^{-b}``, random guess ½."""
    plt = pyplot("--plot")

    from ..cct.bloom import bloom_error_curve, membership_lower_bound

    fig, ax = plt.subplots(figsize=(7.5, 4.8))
    names = list(dict.fromkeys(o.compactor for o in outcomes))
    for name in names:
        pts = sorted((o for o in outcomes if o.compactor == name), key=lambda o: o.bits_per_item)
        x = np.array([max(o.bits_per_item, 1e-2) for o in pts])
        y = np.array([o.error for o in pts])
        err = np.clip(np.array([[o.error - o.ci_low for o in pts], [o.ci_high - o.error for o in pts]]), 0, None)
        style = "-o" if pts[0].kind == "GEN" else "--s"
        ax.errorbar(x, y, yerr=err, fmt=style, ms=4, capsize=2, label=f"{name} ({pts[0].kind})")
    xs = np.geomspace(1e-2, max(512.0, max(o.bits_per_item for o in outcomes) * 1.2), 400)
    ax.plot(xs, bloom_error_curve(xs * n, n), "k-", lw=1.2, label=r"Bloom $\frac{1}{2} e^{-(\ln 2)^2 b}$")
    ax.plot(xs, membership_lower_bound(xs * n, n), "g--", lw=1.2, label=r"lower bound $\frac{1}{2} 2^{-b}$")
    ax.axhline(0.5, color="r", ls=":", lw=1.2, label="random guess")
    ax.set_xscale("log")
    ax.set_xlabel(f"bits per item b = B / N (N = {n})")
    ax.set_ylabel("error rate (FP + FN over all queries)")
    ax.set_ylim(-0.02, 0.75)
    ax.legend(fontsize=7, ncol=2, loc="upper right")
    ax.grid(alpha=0.3)
    fig.tight_layout()
    out = []
    for ext in ("png", "svg"):
        buf = io.BytesIO()
        fig.savefig(buf, format=ext, dpi=120)
        data = buf.getvalue()
        out.append(atomic_write(f"{stem}.{ext}", lambda fh, data=data: fh.write(data)))
    plt.close(fig)
    return out


def run_toy(args: argparse.Namespace) -> int:
    from ..cct.toy import toy_table

    _validate_common(args)
    result = toy_table(args.universe, args.members, args.max_bits)
    rows = [[r["bits"], f"{r['gen_optimum']:.4f}", f"{r['select_optimum']:.4f}", r["select_items"],
             f"{r['keep_first']:.4f}", f"{r['bloom']:.4f}", f"{r['always_no']:.4f}"] for r in result["rows"]]
    if args.json != "-":
        print(f"membership game u = {args.universe}, N = {args.members}: {result['inputs']} inputs, half-member "
              f"queries; SELECT items cost log2 u = {result['item_bits']:.3f} bits")
        print(table(rows, ["bits", "GEN optimum", "SELECT optimum", "items kept", "keep-first", "Bloom (1 hash)",
                           "always-no"]))
    if args.json:
        write_json(result, args.json)
    return 0


def run_thm3(args: argparse.Namespace) -> int:
    from ..cct.theorems import thm3_gen_budget, thm3_item_bits, thm3_select_budget, validate_epsilon
    from ._progress import RunProgress

    _validate_common(args)
    for n in args.n:  # every argument checked before the bar starts: a bad one prints its one line only
        thm3_item_bits(n)
    for e in args.eps:
        validate_epsilon(e)
    rows, out = [], []
    progress = RunProgress(len(args.n) * len(args.eps), desc="cct thm3", unit="budget")  # issue 35 §5
    for n in args.n:
        for e in args.eps:
            g, s = thm3_gen_budget(n, e), thm3_select_budget(n, e)
            rows.append([n, e, g, s, f"{s / g:.3g}" if g else "-"])
            out.append({"n": n, "eps": e, "gen_bits": g, "select_bits": s})
            progress.advance(1)
    progress.close()
    if args.json != "-":
        print(table(rows, ["n", "eps", "GEN bits", "SELECT bits", "ratio"]))
    if args.json:
        write_json(out, args.json)
    return 0
