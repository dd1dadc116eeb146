"""``lam-ref model``: the deployment cost model (paper §2.6, App. E, M): Tables 2, 7, 8, 27 and M.2,
and a plot of cumulative cost against turn per schedule (Figure 1 style, PNG and SVG)."""

from __future__ import annotations

import argparse
import math
import sys
from pathlib import Path
from typing import Any

from .. import costmodel as cm
from .._io import write_json
from ..geometry import LamValueError
from ..plots import pyplot
from ..tables import table
from ._options import add_mkdir
from ._paths import reads, svg_beside, validate_json_dest, validate_output_file, writes

_TITLES = {
    "2": "Table 2: mean modelled latency per turn (s), 1,453 growth turns, Llama-3.1-8B",
    "7": "Table 7: φ, the context-scaling share of a turn, and the Amdahl ceiling 1/(1-φ)",
    "8": "Table 8: same compressor and deletion set, only the schedule differs (growth run totals)",
    "27": "Table 27: snapshot vs per-arrival accounting, KV capacity and exhaustion",
    "M": "App. M.2: compaction latency of the three cost classes at T = 1e6 tokens",
}

#: The example each ``--help`` shows (``lam_ref.cli`` collects them from every command module).
EXAMPLES = {
    "model": "lam-ref model --table 8 --device profile.json --json model.json --plot schedules.png",
}


def register(sub: argparse._SubParsersAction) -> argparse.ArgumentParser:
    p = sub.add_parser("model", help="the cost model: print the paper's Tables 2, 7, 8, 27, M beside the model's values")
    p.add_argument("--table", choices=sorted(cm.TABLES), action="append",
                   help="table to print (repeatable; default: all)")
    reads(p.add_argument("--device", default="GB10",
                         help="device profile: GB10, A100, or a JSON file from `lam-ref bench constants` (default GB10)"),
          "name-or-path")
    # ``--json`` alone (the former flag) still means stdout
    writes(p.add_argument("--json", metavar="OUT", nargs="?", const="-",
                          help="write the tables as JSON to OUT (- or no value: stdout; the tables then go to stderr)"))
    writes(p.add_argument("--plot", metavar="OUT.png",
                          help="write cumulative cost vs turn per schedule as OUT.png and OUT.svg"), also=svg_beside)
    add_mkdir(p)
    p.set_defaults(func=run)
    return p


def _fmt(v: Any) -> str:
    """One style for every number of every table: 4 significant digits, thousands grouped, no
    exponent (``1,186,740`` next to ``16,626``, ``0.0007761``); integers as they are."""
    if v is None:
        return "—"
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        return str(v)
    if isinstance(v, int):
        return f"{v:,}"
    if v == 0 or not math.isfinite(v):
        return f"{v:g}"
    mag = math.floor(math.log10(abs(float(f"{v:.3e}"))))  # of the value rounded to 4 digits (0.99999 -> 1.000)
    if mag >= 3:
        return f"{v:,.0f}"
    if mag < -6:
        return f"{v:.3e}"
    return f"{v:,.{3 - mag}f}"


def run(args: argparse.Namespace) -> int:
    device = cm.profile(args.device)
    validate_json_dest(args.json, mkdir=args.mkdir)
    show = sys.stderr if args.json == "-" else sys.stdout
    if args.plot:
        if Path(args.plot).suffix.lower() != ".png":
            raise LamValueError(f"--plot {args.plot!r} must end in .png (an .svg is written beside it)")
        validate_output_file(args.plot, "--plot", mkdir=args.mkdir)
    names = args.table or list(cm.TABLES)
    out: dict[str, Any] = {"device": device.to_json(), "tables": {}}
    for name in names:
        rows = cm.TABLES[name](device)
        out["tables"][name] = rows
        print(_TITLES[name] + f" — device {device.name}", file=show)
        header = list(rows[0])
        print(table([[_fmt(r.get(h)) for h in header] for r in rows], header), file=show)
        print(file=show)
    if args.plot:
        paths = plot_schedules(args.plot, device)
        out["plot"] = [str(p) for p in paths]
        print("wrote " + ", ".join(str(p) for p in paths), file=show)
    if args.json:
        write_json(out, args.json)
    return 0


def plot_schedules(png: str, device: cm.DeviceProfile) -> list[Path]:
    """Cumulative modelled time vs turn for LAM's removal under each schedule, batch 1 and 32.

    Writes ``png`` and the same figure as SVG beside it (atomically); returns both paths.
    """
    plt = pyplot("--plot")

    from .._io import atomic_write

    r = cm.PAPER["r_lam"]
    fig, axes = plt.subplots(1, 2, figsize=(10, 4), sharey=True)
    for ax, b in zip(axes, (1, 32)):
        runs = [
            ("test first (admit), LAM", cm.simulate("admit", r, batch=b, device=device)),
            ("delete in place, LAM", cm.simulate("delete_in_place", r, batch=b, device=device)),
            ("delete in place, invalidated share 0.94",
             cm.simulate("delete_in_place", r, batch=b, device=device, invalidated_share=cm.PAPER["invalidated_share"])),
            ("defer to budget wall, LLMLingua-2 (r = 0.24)",
             cm.simulate("wall", cm.PAPER["r_llmlingua2"], batch=b, device=device,
                         compressor=lambda c: cm.class2_time(c, device=device))),
            ("no compaction (serving only)", cm.simulate("admit", 0.0, batch=b, device=device)),
        ]
        for label, run in runs:
            ax.plot(range(1, len(run.context) + 1), run.cumulative, label=label)
        cap = cm.exhaustion_turn(0.0, device=device)
        if cap < len(runs[0][1].context):
            ax.axvline(cap, color="grey", linestyle=":", label=f"KV exhausted, uncompacted (turn {cap})")
        ax.set_yscale("log")
        ax.set_xlabel("turn")
        ax.set_title(f"batch {b}, {device.name}")
        ax.grid(True, which="both", alpha=0.3)
    axes[0].set_ylabel("cumulative modelled time (s)")
    axes[1].legend(fontsize=7, loc="lower right")
    fig.suptitle("Llama-3.1-8B growth regime: only the schedule differs (App. E.2)")
    fig.tight_layout()
    paths = []
    for suffix, fmt in ((".png", "png"), (".svg", "svg")):
        path = Path(png).with_suffix(suffix)
        atomic_write(path, lambda fh, fmt=fmt: fig.savefig(fh, format=fmt, dpi=120))
        paths.append(path)
    plt.close(fig)
    return paths
