"""The pieces of ``lam-ref compact``'s report shared by the serial command and its Dask driver
(:mod:`lam_ref.distributed.cli`): the table's columns and legend, readable ids, the residual
writer, and the checks of ``--check`` (paper §2.2–2.3, Table 10; SPEC §3–8)."""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path
from typing import Any

from ..geometry import LamValueError
from ..text.pipeline import CompactionResult, MappedResidual
from ._common import table, write_json, write_jsonl
from .restore import AUDIT_SUFFIX, RESIDUAL_SUFFIX, native_file, restore_one

TABLE_HEADER = ["trajectory", "obs", "chunks", "kept", "tokens", "gross", "net", "L1", "L0", "δ̂", "trunc", "L2",
                "deletion"]

#: What each column of the compact table means (``lam-ref compact --help`` and the docs show it).
TABLE_LEGEND = """table columns (one row per trajectory, then TOTAL over all of them):
  trajectory  id: path relative to the folder given, suffix removed (long ids keep both ends)
  obs         observation records (the only compacted role)
  chunks      cl100k windows of the observations (L1's units): at most --window tokens, each ending
              where the encoder stops reading (--window-fit encoder, default; none: fixed windows)
  kept        windows L1 retained (the others became L1 stubs naming their representative)
  tokens      cl100k tokens of the original observations
  gross       removal with stub lines not counted: 1 - residual/original
  net         removal with stub lines counted (what a model reads)
  L1, L0      net removal of each layer run alone on the originals
  δ̂           largest merge distance (0 if nothing merged); always <= δ = sqrt(2 - 2t)
  trunc       windows longer than the encoder's input limit / all windows (tokens it did not see)
  L2          storage ratio of the retained embeddings under the L2 codec (--l2-rel-eb)
  deletion    digest of the deleted window ids (first 16 hex of SHA-256; docs: spec §10)
exit status: 0 ok, 1 some inputs failed or --check failed, 2 usage error or unusable input"""

L0_STUB_RULES = ("net-positive", "paper")


def parse_layers(text: str) -> tuple[str, ...]:
    """``"l1,l0"`` → ``("l1", "l0")`` (validated by :class:`CompactionConfig`)."""
    parts = tuple(p.strip().lower() for p in str(text).split(",") if p.strip())
    if not parts:
        raise LamValueError(f"--layers must list l1 and/or l0 separated by commas, got {text!r}")
    return parts


def _pct(x: float | None) -> str:
    return "—" if x is None else f"{100.0 * x:.2f}%"


def short_id(tid: str, width: int) -> str:
    """``tid`` in at most ``width`` characters, both ends kept (ids often differ in the middle)."""
    if len(tid) <= width:
        return tid
    head = (width - 1) // 2
    return tid[:head] + "…" + tid[-(width - 1 - head) :]


def display_ids(ids: list[str], width: int = 44) -> list[str]:
    """Table labels for ``ids`` (one per row): each id in at most ``width`` characters (both ends
    kept); ids whose labels would coincide drop their common prefix (``…`` + the rest), widening
    only if needed; a repeated id (the same task in two folders) gets `` (2)``, `` (3)``, ..."""
    labels = {t: short_id(t, width) for t in ids}
    groups: dict[str, list[str]] = {}
    for t in dict.fromkeys(ids):
        groups.setdefault(labels[t], []).append(t)
    for group in (g for g in groups.values() if len(g) > 1):
        cut = len(os.path.commonprefix(group))
        w = width
        while True:
            forms = {t: "…" + short_id(t[cut:], w - 1) for t in group}
            if len(set(forms.values())) == len(group) or w >= max(map(len, group)):
                break
            w += 4
        labels.update(forms)
    seen: dict[str, int] = {}
    out = []
    for t in ids:
        seen[t] = seen.get(t, 0) + 1
        out.append(labels[t] if seen[t] == 1 else f"{labels[t]} ({seen[t]})")
    return out


def table_row(s: dict[str, Any], label: str | None = None, width: int = 44) -> list[Any]:
    """One row of the compact table from a per-trajectory (or total) report dict."""
    tid = label if label is not None else short_id(str(s["id"]), width)
    l2 = s.get("l2")
    return [
        tid,
        s["observation_records"],
        s["chunks"],
        s["kept_chunks"],
        s["tokens_original"],
        _pct(s["removal_gross"]),
        _pct(s["removal_net"]),
        _pct(s.get("l1_removal")),
        _pct(s.get("l0_removal")),
        f"{s['delta_hat']:.4f}",
        f"{s['truncated_windows']}/{s['chunks']} ({s.get('unseen_tokens', 0)} tok)",
        "—" if not l2 or l2.get("ratio") is None else f"{l2['ratio']:.2f}×",
        s["deletion_digest"],
    ]


def _windows(config: Any, total: dict[str, Any]) -> str:
    """The window setting and what the encoder did not see (SPEC §3.4), for the settings line."""
    fit = "ending at the encoder's horizon" if getattr(config, "fit_window", False) else "fixed (paper)"
    return (f"windows <= {config.window} cl100k tokens {fit}: {total.get('truncated_windows', 0)} windows / "
            f"{total.get('unseen_tokens', 0)} tokens not seen by the encoder")


def print_summary(out: Any, summaries: list[dict[str, Any]], total: dict[str, Any], config: Any, *,
                  encoder: dict[str, Any], l0_stubs: str) -> None:
    """The people's view of a compact run (serial or on Dask): one table row per trajectory, the
    TOTAL row, and one line with the settings, the removal and the map digest. ``encoder`` is
    the encoder's ``describe()`` record."""
    labels = display_ids([str(s["id"]) for s in summaries])
    rows = [table_row(s, label) for s, label in zip(summaries, labels)] + [table_row(total)]
    print(table(rows, TABLE_HEADER), file=out)
    print(
        f"encoder {encoder.get('name')} (D={encoder.get('dim')}), threshold t={config.threshold} (δ={config.delta:.4f}), "
        f"layers {total['layers']}, L0 stubs {l0_stubs}, {_windows(config, total)}; "
        f"removal net {_pct(total['removal_net'])}, "
        f"gross {_pct(total['removal_gross'])}, stub cost {_pct(total.get('stub_cost'))}; "
        f"map digest {total['map_digest']}",
        file=out,
    )
    print("columns: see `lam-ref compact --help` (legend)", file=out)


def finish_run(report: dict[str, Any], json_dest: str | None, *, done: int, failed: int, problems: list[str]) -> int:
    """End a compact run (serial or on Dask): name the failures and failed checks on stderr,
    write the JSON report if asked, and return the exit status (0 ok; 1 an input or a check
    failed, or no trajectory was found)."""
    if failed:
        print(f"lam-ref compact: {failed} of {failed + done} inputs failed", file=sys.stderr)
    for prob in problems:
        print(f"lam-ref compact: check failed: {prob}", file=sys.stderr)
    if json_dest:
        write_json(report, json_dest)
    if not done and not failed:
        print("lam-ref compact: no trajectories found", file=sys.stderr)
        return 1
    return 1 if (failed or problems) else 0


def safe_name(traj_id: str) -> str:
    """A file name for a trajectory id (path separators and odd characters replaced)."""
    return re.sub(r"[^A-Za-z0-9._-]+", "__", traj_id).strip("_") or "trajectory"


class ResidualWriter:
    """Writes ``<name>.residual.jsonl`` and ``<name>.audit.json`` per trajectory into one folder
    (the folder exists: the command checked or created it), and with ``native`` also
    ``<name>.native.<suffix>``, the residual in the input's own format (:mod:`lam_ref.text.native`).

    Names come from :func:`safe_name`; a name already used in this run gets ``~2``, ``~3``, ... so
    two inputs with the same id (the same task in two folders) never overwrite each other's audit
    store. :attr:`written` maps each name to its trajectory's id and source path (the JSON report
    lists it)."""

    def __init__(self, directory: str | Path, *, native: bool = False) -> None:
        self.directory = Path(directory)
        self.native = native
        self.written: dict[str, dict[str, str]] = {}

    def name_for(self, traj_id: str) -> str:
        base = safe_name(traj_id)
        name, k = base, 1
        while name in self.written:
            k += 1
            name = f"{base}~{k}"
        return name

    def write(self, res: CompactionResult) -> tuple[Path, Path]:
        name = self.name_for(res.trajectory.id)
        rpath = write_jsonl(self.directory / f"{name}{RESIDUAL_SUFFIX}", (r.to_json() for r in res.residual_records()))
        apath = res.audit.save(self.directory / f"{name}{AUDIT_SUFFIX}")
        self.written[name] = {"id": res.trajectory.id, "path": res.trajectory.path,
                              "residual": rpath.name, "audit": apath.name}
        if self.native:
            from ..text.native import write_native

            npath = write_native(self.directory / name, res.trajectory, res.residual_texts)
            self.written[name]["native"] = npath.name
        return rpath, apath


def result_problems(res: CompactionResult) -> list[str]:
    """Problems found by ``--check``: ``δ̂ > δ`` (THM1), an audit round trip that fails (SPEC §8), or
    an L2 reconstruction outside its error bound (SPEC §9)."""
    problems = []
    if not res.delta_hat <= res.config.delta:
        problems.append(f"{res.trajectory.id}: δ̂ = {res.delta_hat!r} exceeds δ = {res.config.delta!r}")
    if res.l2 is not None and not res.l2.bound_holds:
        problems.append(f"{res.trajectory.id}: L2 max error {res.l2.max_abs_error!r} exceeds eb = {res.l2.eb!r}")
    try:
        restored = res.restore()
    except LamValueError as exc:
        problems.append(f"{res.trajectory.id}: audit round trip failed: {exc}")
    else:
        originals = [r.text for r in res.trajectory.records]
        if restored != originals:
            bad = next(i for i, (a, b) in enumerate(zip(restored, originals)) if a != b)
            problems.append(f"{res.trajectory.id}: audit restores record {bad} wrongly")
    return problems


def written_problems(audit_path: Path, res: CompactionResult | MappedResidual) -> list[str]:
    """``--check`` with ``--residual-dir``: the files as written (read back, as ``lam-ref restore``
    reads them) give every original record, all fields, not just the in-memory round trip; from
    the JSONL residual and, when written, from the native one (per-trajectory results and the
    corpus scope's residuals alike)."""
    originals = [r.to_json() for r in res.trajectory.records]
    problems = []
    nat = native_file(audit_path)
    for native in (None, nat) if nat is not None else (None,):
        what = "the written audit files" if native is None else f"the native residual {native.name}"
        try:
            records, _ = restore_one(audit_path, native)
        except LamValueError as exc:
            problems.append(f"{res.trajectory.id}: {what} do not restore: {exc}")
            continue
        if records != originals:
            bad = next((i for i, (a, b) in enumerate(zip(records, originals)) if a != b),
                       min(len(records), len(originals)))
            problems.append(f"{res.trajectory.id}: record {bad} restored from {what} differs from the original")
    return problems
