"""``lam-ref audit``: check what a compactor wrote, not the compactor (issue 21 §6; docs/audit.md).

Input: the embeddings (``.npy``, one unit row per chunk in arrival order), the compactor's output
as the kept set or as its map π (``.npy`` or ``.json``), optionally the ids the output uses for
the rows (``--ids``) and the rows where each trajectory starts (``--boundaries``), and the
threshold ``-t``. Matching is within a trajectory (SPEC §1.1). The report:

* **Theorem 1's premise** (``THM1``, SPEC §1.5): every deleted row has a retained witness within
  δ in its trajectory (rule of SPEC §2.1, ``sq <= 2 - 2t`` in float64). Violators are listed with
  their nearest retained row. With ``--pi``, each declared representative is also checked (it must
  be retained, in the same trajectory and within δ).
* **δ̂**: the largest distance from a deleted row to its nearest retained row (the best any map
  onto this kept set can do; above δ exactly when the premise fails; rows of a trajectory with
  nothing retained have no nearest row and are listed as violations) and, with ``--pi``, the given map's own δ̂ (SPEC §1.5).
* whether the output **equals Algorithm 2's** π (SPEC §5.1, exhaustive), and the first row where
  it differs;
* on small trajectories (at most ``--max-exact`` rows, default 60) the **exact optimum** ``N(S, δ)``
  (SPEC §11.1, ``scipy.optimize.milp``) and the kept set's gap to it.

Exit status: 0 when the premise holds (and, with ``--pi``, every declared representative is valid),
1 when it is violated, 2 on bad input (one line naming the file or option; nothing computed).
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

import numpy as np

from .._io import InputError, read_json_input, write_json
from ..audit import MAX_EXACT, audit_output
from ..geometry import LamValueError, validate_embeddings, validate_threshold
from ..tables import table
from ._embeddings import load_embeddings
from ._options import add_json, add_mkdir
from ._paths import reads, validate_input_paths, validate_json_dest

__all__ = ["register", "run"]

#: The example each ``--help`` shows (``lam_ref.cli`` collects them from every command module).
EXAMPLES = {
    "audit": "lam-ref audit emb.npy --kept kept.npy -t 0.95 --json audit.json",
}


def register(sub: argparse._SubParsersAction) -> argparse.ArgumentParser:
    p = sub.add_parser("audit", help="check a compactor's output: Theorem 1's premise, δ̂, Algorithm 2, the exact optimum")
    reads(p.add_argument("embeddings", help=".npy of unit float32 rows (N, D), one per chunk, in arrival order"))
    out = p.add_mutually_exclusive_group(required=True)
    reads(out.add_argument("--kept", metavar="PATH", help="the retained rows: .npy/.json of ids (or a boolean mask of length N)"))
    reads(out.add_argument("--pi", metavar="PATH", help="the representative map: .npy/.json of N ids (π[i] = i when kept)"))
    reads(p.add_argument("--ids", metavar="PATH",
                         help="the id of each row (.npy/.json, N distinct ints) when the output uses other ids than 0..N-1"))
    reads(p.add_argument("--boundaries", metavar="PATH",
                         help="the row where each trajectory starts (.npy/.json; 0 first, increasing); default: one trajectory"))
    p.add_argument("--threshold", "-t", type=float, required=True, help="the cosine threshold t in [-1, 1] the output claims")
    p.add_argument("--max-exact", type=int, default=MAX_EXACT,
                   help=f"exact optimum for trajectories of at most this many rows (default {MAX_EXACT}; 0: never)")
    p.add_argument("--show", type=int, default=20, help="violations listed in the table (default 20)")
    add_json(p, "the audit report")
    add_mkdir(p)
    p.set_defaults(func=run)
    return p


# ------------------------------------------------------------------------------------------------
# inputs
# ------------------------------------------------------------------------------------------------
def _load_ints(path: str, name: str, key: str | None = None) -> np.ndarray:
    """Integers (or a boolean mask) from ``.npy`` or ``.json`` (a list, or an object holding ``key``)."""
    p = Path(path)
    if p.suffix == ".json":
        try:
            data = read_json_input(p)
        except InputError as exc:
            raise LamValueError(f"{name} {path!r} is not readable JSON: {exc.problem}") from exc
        if isinstance(data, dict) and key is not None and key in data:
            data = data[key]
        if not isinstance(data, list) or not all(isinstance(v, (bool, int)) for v in data) or (
                data and len({type(v) for v in data}) > 1):
            raise LamValueError(f"{name} {path!r} must hold a list of integers (or booleans){f' or an object with {key!r}' if key else ''}")
        arr = np.asarray(data, dtype=bool if data and isinstance(data[0], bool) else np.int64)
    else:
        arr = np.asarray(load_embeddings(path, name))
    if arr.ndim != 1 or arr.dtype.kind not in "biu":
        raise LamValueError(f"{name} {path!r} must be a 1-D array of integers (or booleans), got {arr.dtype} of shape {arr.shape}")
    return arr


def _rows_of(values: np.ndarray, ids: np.ndarray | None, name: str, path: str) -> np.ndarray:
    """Output ids -> row positions (identity without ``--ids``); unknown ids are an error naming them."""
    n = ids.shape[0] if ids is not None else None
    if ids is None:
        return values.astype(np.int64)
    order = np.argsort(ids, kind="stable")
    pos = np.searchsorted(ids[order], values)
    pos = np.minimum(pos, n - 1) if n else pos
    bad = np.flatnonzero((ids[order][pos] != values) if n else np.ones(values.shape, bool))
    if bad.size:
        raise LamValueError(f"{name} {path!r} names id {int(values[bad[0]])}, which --ids does not list")
    return order[pos].astype(np.int64)


def _segments(boundaries: np.ndarray | None, n: int, path: str | None) -> list[tuple[int, int]]:
    if boundaries is None:
        return [(0, n)]
    b = boundaries.astype(np.int64)
    if b.size == 0 or b[0] != 0 or np.any(np.diff(b) <= 0) or b[-1] >= max(n, 1):
        raise LamValueError(f"--boundaries {path!r} must start at 0 and increase strictly below N = {n}, got {b[:8].tolist()}")
    ends = np.append(b[1:], n)
    return list(zip(b.tolist(), ends.tolist()))



# ------------------------------------------------------------------------------------------------
# the command
# ------------------------------------------------------------------------------------------------
def run(args: argparse.Namespace) -> int:
    paths = [args.embeddings, args.kept or args.pi] + [p for p in (args.ids, args.boundaries) if p]
    validate_input_paths(paths)
    validate_json_dest(args.json, mkdir=args.mkdir)
    if isinstance(args.max_exact, bool) or args.max_exact < 0:
        raise LamValueError(f"--max-exact must be an integer >= 0, got {args.max_exact}")
    validate_threshold(args.threshold, "--threshold")
    raw = load_embeddings(args.embeddings)
    try:
        e = validate_embeddings(raw, name=f"embeddings {args.embeddings!r}")
    except LamValueError as exc:
        raise LamValueError(str(exc)) from None
    n = e.shape[0]
    ids = None
    if args.ids:
        ids = _load_ints(args.ids, "--ids").astype(np.int64)
        if ids.shape != (n,) or np.unique(ids).size != n:
            raise LamValueError(f"--ids {args.ids!r} must hold {n} distinct ids, one per row")
    bounds = _segments(_load_ints(args.boundaries, "--boundaries") if args.boundaries else None, n, args.boundaries)
    if args.pi:
        values = _load_ints(args.pi, "--pi", "pi")
        if values.dtype == bool or values.shape != (n,):
            raise LamValueError(f"--pi {args.pi!r} must hold {n} ids, one per row, got shape {values.shape}")
        report = audit_output(e, args.threshold, pi=_rows_of(values, ids, "--pi", args.pi), boundaries=bounds,
                              max_exact=args.max_exact)
    else:
        values = _load_ints(args.kept, "--kept", "kept")
        if values.dtype == bool:
            if values.shape != (n,):
                raise LamValueError(f"--kept {args.kept!r}: a boolean mask needs {n} entries, got {values.shape[0]}")
            kept: Any = values
        else:
            kept = _rows_of(values, ids, "--kept", args.kept)
        report = audit_output(e, args.threshold, kept=kept, boundaries=bounds, max_exact=args.max_exact)
    report["files"] = {"embeddings": args.embeddings, "kept": args.kept, "pi": args.pi, "ids": args.ids,
                       "boundaries": args.boundaries}
    if ids is not None:  # report rows by the output's own ids
        for v in report["violations"]:
            v["id"] = int(ids[v["row"]])
            if v["nearest_retained"] is not None:
                v["nearest_retained_id"] = int(ids[v["nearest_retained"]])
    if args.json != "-":
        print(render(report, show=args.show))
    if args.json:
        write_json(report, args.json)
    return 0 if report["premise_holds"] else 1


def render(r: dict[str, Any], show: int = 20) -> str:
    """The readable table of an audit report."""
    lines = [f"audit of {r['input']} over N = {r['n']} rows (D = {r['dim']}, {r['trajectories']} trajectories), "
             f"t = {r['t']:g}, δ = {r['delta']:.6g}"]
    held = "holds" if not r["violations"] else f"VIOLATED: {len(r['violations'])} deleted row(s) without a retained witness within δ"
    rows = [["kept / deleted", f"{r['kept']} / {r['deleted']}"],
            ["Theorem 1 premise", held],
            ["δ̂ (nearest retained witness)", f"{r['delta_hat_nearest']:.17g}"]]
    if r["delta_hat_pi"] is not None:
        bad = f"; {len(r['map_violations'])} invalid representative(s)" if r["map_violations"] else ""
        rows.append(["δ̂ (the given π)", f"{r['delta_hat_pi']:.17g}{bad}"])
    fd = r["first_difference"]
    rows.append(["equals Algorithm 2", "yes" if fd is None else
                 f"no: first at row {fd['row']} (trajectory {fd['trajectory']}): output {fd['output']}, Algorithm 2 {fd['algorithm2']}"])
    rows.append(["Algorithm 2 kept", str(r["algorithm2_kept"])])
    ex = r["exact"]
    if ex:
        rows.append([f"exact optimum N(S, δ) (trajectories <= {ex['max_rows']} rows: {ex['trajectories']})",
                     f"{ex['optimum']}; kept {ex['kept']} (gap {ex['kept'] - ex['optimum']:+d}); Algorithm 2 {ex['algorithm2_kept']}"])
    lines.append(table(rows, ["quantity", "value"]))
    if r["violations"]:
        vs = [[v.get("id", v["row"]), v["trajectory"], v.get("nearest_retained_id", v["nearest_retained"]),
               "—" if v["distance"] is None else f"{v['distance']:.6f}"] for v in r["violations"][:show]]
        lines.append(f"violations (first {min(show, len(vs))} of {len(r['violations'])}; δ = {r['delta']:.6f}):")
        lines.append(table(vs, ["row", "trajectory", "nearest retained", "distance"]))
    if r["map_violations"]:
        ms = [[m["row"], m["representative"], f"{m['distance']:.6f}", m["why"]] for m in r["map_violations"][:show]]
        lines.append(f"invalid representatives (first {len(ms)} of {len(r['map_violations'])}):")
        lines.append(table(ms, ["row", "π[row]", "distance", "why"]))
    return "\n".join(lines)
