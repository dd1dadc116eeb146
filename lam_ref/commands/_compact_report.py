"""The pieces of ``lam-ref compact``'s report shared by the serial command, its Dask driver
(:mod:`lam_ref.commands._dask`) and the demo: the table's columns and legend, its rows, the
summary line and the run's end (paper §2.2–2.3, Table 10; SPEC §3–8). The residual folder and the
checks of ``--check`` are library code, :mod:`lam_ref.text.residuals`; the table printer and the
readable ids are :mod:`lam_ref.tables`."""

from __future__ import annotations

import sys
from typing import Any

from .._io import write_json
from ..geometry import LamValueError
from ..tables import display_ids, pct, printable, short_id, table
from ._lines import backend_note, config_line, reuse_line

TABLE_HEADER = ["trajectory", "obs", "chunks", "kept", "tokens", "gross", "net", "file", "L1", "L0", "δ̂", "trunc",
                "L2", "deletion"]

#: What each column of the compact table means (``lam-ref compact --help`` and the docs show it).
TABLE_LEGEND = """table columns (one row per trajectory, then TOTAL over all of them):
  trajectory  id: path relative to the folder given, suffix removed (long ids keep both ends)
  obs         observation records (the only compacted role)
  chunks      cl100k windows of the observations (L1's units): at most --window tokens, each ending
              where the encoder stops reading (--window-fit encoder, default; none: fixed windows)
  kept        windows L1 retained (the others became L1 stubs naming their representative)
  tokens      cl100k tokens of the original observations
  gross       removal with stub lines not counted: 1 - residual/original
  net         removal with stub lines counted (what a model reads); "(grew)": the residual is
              longer than the input (spec §7.4)
  file        removal measured on the native residual as written (--residual-format native): cl100k
              tokens of the whole residual file against the input file, every copy of every
              observation and the JSON around them counted (spec §8.3); — without a native residual
  L1, L0      net removal of each layer run alone on the originals
  δ̂           largest merge distance (0 if nothing merged); always <= δ = sqrt(2 - 2t)
  trunc       windows longer than the encoder's input limit / all windows (tokens it did not see)
  L2          storage ratio of the retained embeddings under the L2 codec (--l2-rel-eb)
  evidence    only with --gold: the gold patch's witnessed evidence lines (App. F.3) the residual
              holds verbatim, kept/witnessed (TOTAL: pooled micro retention, sweep's evidence at
              the same threshold); "—" for a trajectory without a gold patch
  QA evidence only when a trajectory carries LoCoMo QA evidence: the dialogue turns its questions
              name that the residual still holds verbatim, kept/witnessed (TOTAL: pooled, sweep's
              qa_evidence at the same threshold); "—" for a trajectory without QA items
  deletion    digest of the deleted window ids (first 16 hex of SHA-256; docs: spec §10)
exit status: 0 ok, 1 some inputs failed or --check failed, 2 usage error or unusable input"""


def hashing_note() -> None:
    """The note a compact run with the hashing encoder prints on stderr (serial or on Dask)."""
    print("lam-ref compact: note: the hashing encoder is for tests; thresholds and removal are not "
          "comparable to a real encoder's", file=sys.stderr)


def parse_layers(text: str) -> tuple[str, ...]:
    """``"l1,l0"`` → ``("l1", "l0")`` (validated by :class:`CompactionConfig`)."""
    parts = tuple(p.strip().lower() for p in str(text).split(",") if p.strip())
    if not parts:
        raise LamValueError(f"--layers must list l1 and/or l0 separated by commas, got {text!r}")
    return parts


#: The evidence columns, ``(header, report key)``, each shown only when TOTAL carries that key.
EVIDENCE_COLUMNS = (("evidence", "evidence"), ("QA evidence", "qa_evidence"))


def evidence_keys(total: dict[str, Any]) -> list[str]:
    """The report keys of the evidence columns a run shows: those its TOTAL carries."""
    return [key for _, key in EVIDENCE_COLUMNS if total.get(key) is not None]


def table_header(evidence: list[str] | tuple[str, ...] = ()) -> list[str]:
    """The compact table's columns, with the ``evidence`` keys' columns before ``deletion``."""
    cols = [head for head, key in EVIDENCE_COLUMNS if key in evidence]
    return TABLE_HEADER[:-1] + cols + [TABLE_HEADER[-1]]


def evidence_cell(q: dict[str, Any] | None) -> str:
    """An evidence cell: ``kept/witnessed (pct)`` of a report's ``evidence`` or ``qa_evidence``
    (per trajectory its ``retention``, for TOTAL the pooled ``micro``); "—" without."""
    if q is None:
        return "—"
    share = q["retention"] if "retention" in q else q["micro"]
    return f"{q['kept']}/{q['witnessed']} ({pct(share)})"


def table_row(s: dict[str, Any], label: str | None = None, width: int = 44,
              evidence: list[str] | tuple[str, ...] = ()) -> list[Any]:
    """One row of the compact table from a per-trajectory (or total) report dict (``evidence``:
    the report keys of its evidence cells, :func:`table_header`)."""
    tid = label if label is not None else short_id(str(s["id"]), width)
    l2 = s.get("l2")
    ev = [evidence_cell(s.get(key)) for _, key in EVIDENCE_COLUMNS if key in evidence]
    return [
        tid,
        s["observation_records"],
        s["chunks"],
        s["kept_chunks"],
        s["tokens_original"],
        pct(s["removal_gross"]),
        pct(s["removal_net"]) + (" (grew)" if s["removal_net"] is not None and s["removal_net"] < 0 else ""),
        pct((s.get("as_written") or {}).get("removal_tokens")),
        pct(s.get("l1_removal")),
        pct(s.get("l0_removal")),
        f"{s['delta_hat']:.4f}",
        f"{s['truncated_windows']}/{s['chunks']} ({s.get('unseen_tokens', 0)} tok)",
        "—" if not l2 or l2.get("ratio") is None else f"{l2['ratio']:.2f}×",
        *ev,
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
    labels = display_ids([printable(s["id"]) for s in summaries])  # D17: no control bytes or surrogates
    ev = evidence_keys(total)  # an evidence column only where some trajectory carries that evidence
    rows = [table_row(s, label, evidence=ev) for s, label in zip(summaries, labels)] + [table_row(total, evidence=ev)]
    print(table(rows, table_header(ev)), file=out)
    grew = [s["id"] for s in summaries if s["removal_net"] is not None and s["removal_net"] < 0]
    if grew:  # SPEC §8.1: never longer than the input, or said loudly
        print(f"note: {len(grew)} trajectory residual(s) longer than the input (net < 0, marked (grew)): "
              f"{', '.join(printable(str(g)) for g in grew[:5])}{' ...' if len(grew) > 5 else ''}", file=out)
    print(
        f"encoder {encoder.get('name')} (D={encoder.get('dim')}{backend_note(encoder)}), threshold t={config.threshold} (δ={config.delta:.4f}), "
        f"layers {total['layers']}, stubs {l0_stubs} (L1 and L0), {_windows(config, total)}; "
        f"removal net {pct(total['removal_net'])}, "
        f"gross {pct(total['removal_gross'])}, stub cost {pct(total.get('stub_cost'))}; "
        f"map digest {total['map_digest']}",
        file=out,
    )
    print(config_line(config), file=out)
    print(reuse_line(total, getattr(config, "reuse", True)), file=out)
    print("columns: see `lam-ref compact --help` (legend)", file=out)


def finish_run(report: dict[str, Any], json_dest: str | None, *, done: int, failed: int, problems: list[str]) -> int:
    """End a compact run (serial or on Dask): name the failures and failed checks on stderr,
    write the JSON report if asked, and return the exit status (0 ok; 1 an input or a check
    failed, or no trajectory was found)."""
    if failed:
        print(f"lam-ref compact: {failed} of {failed + done} inputs failed", file=sys.stderr)
    for prob in problems:
        print(f"lam-ref compact: check failed: {prob}", file=sys.stderr)
    if report.get("checks", {}).get("run") and not problems and done:
        print(f"lam-ref compact: check passed on {done} trajectories: δ̂ <= δ, audit round trip, L2 error bound",
              file=sys.stderr)
    if json_dest:
        write_json(report, json_dest)
    if not done and not failed:
        print("lam-ref compact: no trajectories found", file=sys.stderr)
        return 1
    return 1 if (failed or problems) else 0
