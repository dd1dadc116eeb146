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
import json
import math
from pathlib import Path
from typing import Any

import numpy as np

from ..covering import covering_number
from ..geometry import (
    LamValueError,
    delta_from_t,
    delta_sq,
    sq_dist_rows,
    validate_embeddings,
    validate_threshold,
)
from ..substitution import substitute
from ._common import add_json, load_embeddings, table, validate_input_paths, validate_json_dest, write_json

__all__ = ["audit_output", "register", "run"]

#: Trajectories up to this many rows get the exact optimum by default (milp; tens of points).
MAX_EXACT = 60
#: float64 Gram distances of unit rows are within about 1e-15 of the exact ones; anything within
#: this margin of δ² is decided by the exact rule (SPEC §2.1).
_GRAM_MARGIN = 1e-9


def register(sub: argparse._SubParsersAction) -> argparse.ArgumentParser:
    p = sub.add_parser("audit", help="check a compactor's output: Theorem 1's premise, δ̂, Algorithm 2, the exact optimum")
    p.add_argument("embeddings", help=".npy of unit float32 rows (N, D), one per chunk, in arrival order")
    out = p.add_mutually_exclusive_group(required=True)
    out.add_argument("--kept", metavar="PATH", help="the retained rows: .npy/.json of ids (or a boolean mask of length N)")
    out.add_argument("--pi", metavar="PATH", help="the representative map: .npy/.json of N ids (π[i] = i when kept)")
    p.add_argument("--ids", metavar="PATH", help="the id of each row (.npy/.json, N distinct ints) when the output uses other ids than 0..N-1")
    p.add_argument("--boundaries", metavar="PATH", help="the row where each trajectory starts (.npy/.json; 0 first, increasing); default: one trajectory")
    p.add_argument("--threshold", "-t", type=float, required=True, help="the cosine threshold t in [-1, 1] the output claims")
    p.add_argument("--max-exact", type=int, default=MAX_EXACT,
                   help=f"exact optimum for trajectories of at most this many rows (default {MAX_EXACT}; 0: never)")
    p.add_argument("--show", type=int, default=20, help="violations listed in the table (default 20)")
    add_json(p, "the audit report")
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
            data = json.loads(p.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise LamValueError(f"{name} {path!r} is not readable JSON: {exc}") from exc
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
# the audit
# ------------------------------------------------------------------------------------------------
def _nearest_retained(e64: np.ndarray, rows: np.ndarray, kept: np.ndarray, d2: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per row of ``rows``: nearest row of ``kept`` (float64 Gram), its exact ``sq``, and whether
    some retained row is within δ by the exact rule (rows within the margin are confirmed exactly)."""
    near = np.full(rows.size, -1, np.int64)
    near_sq = np.full(rows.size, np.inf)
    ok = np.zeros(rows.size, bool)
    if rows.size == 0 or kept.size == 0:
        return near, near_sq, ok
    b = e64[kept]
    nb = (b * b).sum(axis=1)
    for s in range(0, rows.size, 512):
        a = e64[rows[s : s + 512]]
        approx = (a * a).sum(axis=1)[:, None] + nb[None, :] - 2.0 * (a @ b.T)
        arg = np.argmin(approx, axis=1)
        near[s : s + 512] = kept[arg]
        near_sq[s : s + 512] = sq_dist_rows(e64, rows[s : s + 512], e64[kept[arg]])
        for k, cand in enumerate(approx <= d2 + _GRAM_MARGIN):
            idx = kept[np.flatnonzero(cand)]
            if idx.size:
                i = rows[s + k]
                ok[s + k] = bool(np.any(sq_dist_rows(e64, np.full(idx.size, i), e64[idx]) <= d2))
    return near, near_sq, ok


def audit_output(embeddings: Any, t: float, *, kept: Any = None, pi: Any = None,
                 boundaries: list[tuple[int, int]] | None = None, max_exact: int = MAX_EXACT) -> dict[str, Any]:
    """The audit report of one compactor output (module docstring) as a JSON-ready dict.

    ``kept`` (row positions, or a boolean mask) or ``pi`` (``int[N]`` of row positions) must be
    given, not both; ``boundaries`` are ``(start, stop)`` row ranges, one per trajectory.
    """
    t = validate_threshold(t)
    e = validate_embeddings(embeddings)
    n = e.shape[0]
    d2 = delta_sq(t)
    segs = boundaries or [(0, n)]
    traj_of = np.zeros(n, np.int64)
    for k, (a, b) in enumerate(segs):
        traj_of[a:b] = k
    if (kept is None) == (pi is None):
        raise LamValueError("give the kept set or the map π, not both and not neither")
    map_violations: list[dict[str, Any]] = []
    given_pi = None
    if pi is not None:
        given_pi = np.asarray(pi, dtype=np.int64)
        if given_pi.shape != (n,):
            raise LamValueError(f"π must have one entry per row: {given_pi.shape[0]} entries for N = {n}")
        if n and (given_pi.min() < 0 or given_pi.max() >= n):
            bad = int(np.flatnonzero((given_pi < 0) | (given_pi >= n))[0])
            raise LamValueError(f"π[{bad}] = {int(given_pi[bad])} is not a row of the {n} embeddings")
        mask = given_pi == np.arange(n)
    else:
        k = np.asarray(kept)
        if k.dtype == bool:
            if k.shape != (n,):
                raise LamValueError(f"a boolean kept mask needs one entry per row: {k.shape} for N = {n}")
            mask = k.copy()
        else:
            k = k.astype(np.int64).reshape(-1)
            if k.size and (k.min() < 0 or k.max() >= n):
                bad = int(k[(k < 0) | (k >= n)][0])
                raise LamValueError(f"the kept set names row {bad}, not a row of the {n} embeddings")
            mask = np.zeros(n, bool)
            mask[k] = True
    e64 = e.astype(np.float64)
    deleted = np.flatnonzero(~mask)
    near = np.full(n, -1, np.int64)
    near_sq = np.full(n, np.nan)
    covered = np.ones(n, bool)
    for a, b in segs:
        rows = deleted[(deleted >= a) & (deleted < b)]
        kept_rows = np.flatnonzero(mask[a:b]) + a
        nr, ns, ok = _nearest_retained(e64, rows, kept_rows, d2)
        near[rows], near_sq[rows], covered[rows] = nr, ns, ok
    violators = deleted[~covered[deleted]]
    violations = [{"row": int(i), "trajectory": int(traj_of[i]),
                   "nearest_retained": int(near[i]) if near[i] >= 0 else None,
                   "distance": math.sqrt(near_sq[i]) if near[i] >= 0 else None} for i in violators.tolist()]
    has_near = deleted[near[deleted] >= 0]
    delta_hat_cover = float(np.sqrt(near_sq[has_near].max())) if has_near.size else 0.0
    delta_hat_pi = None
    if given_pi is not None:
        reps = given_pi[deleted]
        sq = sq_dist_rows(e64, deleted, e64[reps]) if deleted.size else np.zeros(0)
        for i, r, s in zip(deleted.tolist(), reps.tolist(), sq.tolist()):
            why = ("representative is not retained" if not mask[r] else
                   "representative is in another trajectory" if traj_of[r] != traj_of[i] else
                   "representative is farther than δ" if s > d2 else None)
            if why:
                map_violations.append({"row": i, "representative": r, "distance": math.sqrt(s), "why": why})
        delta_hat_pi = float(np.sqrt(sq.max())) if sq.size else 0.0
    # Algorithm 2 (exhaustive: equals the oracle, SPEC §5), per trajectory
    alg2 = np.arange(n, dtype=np.int64)
    per_traj = []
    for k, (a, b) in enumerate(segs):
        if b > a:
            alg2[a:b] = substitute(e[a:b], t, exhaustive=True).pi + a
        entry: dict[str, Any] = {"trajectory": k, "rows": b - a, "kept": int(mask[a:b].sum()),
                                 "algorithm2_kept": int((alg2[a:b] == np.arange(a, b)).sum()), "optimum": None}
        if 0 < b - a <= max_exact:
            res = covering_number(e[a:b], t)
            entry["optimum"] = int(round(res.value)) if res.optimal else None
        per_traj.append(entry)
    alg2_mask = alg2 == np.arange(n)
    first = None
    if given_pi is not None and not np.array_equal(given_pi, alg2):
        i = int(np.flatnonzero(given_pi != alg2)[0])
        first = {"row": i, "trajectory": int(traj_of[i]), "output": int(given_pi[i]), "algorithm2": int(alg2[i])}
    elif given_pi is None and not np.array_equal(mask, alg2_mask):
        i = int(np.flatnonzero(mask != alg2_mask)[0])
        first = {"row": i, "trajectory": int(traj_of[i]), "output": "kept" if mask[i] else "deleted",
                 "algorithm2": "kept" if alg2_mask[i] else f"deleted (represented by {int(alg2[i])})"}
    exact = [p for p in per_traj if p["optimum"] is not None]
    return {
        "schema": "lam_ref.audit.report", "schema_version": 1,
        "n": n, "dim": int(e.shape[1]), "trajectories": len(segs), "t": t, "delta": delta_from_t(t),
        "input": "pi" if given_pi is not None else "kept",
        "kept": int(mask.sum()), "deleted": int(deleted.size),
        "premise_holds": not violations and not map_violations,
        "violations": violations,
        "map_violations": map_violations,
        "delta_hat_nearest": delta_hat_cover,
        "delta_hat_pi": delta_hat_pi,
        "equals_algorithm2": first is None,
        "first_difference": first,
        "algorithm2_kept": int(alg2_mask.sum()),
        "exact": {"trajectories": len(exact), "optimum": sum(p["optimum"] for p in exact),
                  "kept": sum(p["kept"] for p in exact), "algorithm2_kept": sum(p["algorithm2_kept"] for p in exact),
                  "max_rows": max_exact} if exact else None,
        "per_trajectory": per_traj,
    }


# ------------------------------------------------------------------------------------------------
# the command
# ------------------------------------------------------------------------------------------------
def run(args: argparse.Namespace) -> int:
    paths = [args.embeddings, args.kept or args.pi] + [p for p in (args.ids, args.boundaries) if p]
    validate_input_paths(paths)
    validate_json_dest(args.json)
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
