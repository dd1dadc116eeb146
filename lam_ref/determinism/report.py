"""Determinism reports: the schema, reading (with migration of old versions) and :func:`compare` (claim ``STAB``).

A report is the JSON document :func:`lam_ref.determinism.probing.probe` writes. It carries
``"schema": "lam_ref.determinism.report"`` and ``"schema_version": 3`` (:data:`SCHEMA`,
:data:`SCHEMA_VERSION`) and is described by ``lam_ref/schemas/lam_ref.determinism.report.schema.json``
(:mod:`lam_ref.schemas`; the keys are tabled in docs/determinism.md). Version 1 reports
(``"schema": "lam_ref.determinism/1"``, before the kernel configuration was recorded) still load:
:func:`load_report` migrates them to the current id with ``schema_version`` 1. Versions 1 and 2
were written when the probe cut only the paper's fixed windows, before ``input.window_fit``
(version 3) recorded how they were cut: they are read with ``window_fit`` ``"none"``
(:data:`LEGACY_WINDOW_FIT`). The windows are part of a report's :func:`identity`, so
:func:`compare` never reads a digest difference between other windows as non-determinism.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from .. import digest as _digest
from .. import schemas as _schemas
from .._io import InputError, parse_json, read_input_text
from ..geometry import LamValueError
from .encoder import run_precision, shown_folder
from .margins import first_divergence

__all__ = ["LEGACY_SCHEMA_IDS", "LEGACY_WINDOW_FIT", "SCHEMA", "SCHEMA_VERSION", "Comparison", "compare", "identity",
           "kernels_label", "load_report", "migrate", "repeated_reports", "window_label", "window_options"]

#: The report's schema name (``schema`` key; :mod:`lam_ref.schemas`).
SCHEMA = "lam_ref.determinism.report"
#: The version :func:`lam_ref.determinism.probing.probe` writes (2: ``target.kernels`` recorded;
#: 3: ``input.window_fit`` recorded).
SCHEMA_VERSION = 3
#: Old ids and the version they are read as.
LEGACY_SCHEMA_IDS = {"lam_ref.determinism/1": 1}
#: The ``input.window_fit`` of a report written before version 3: the probe then cut only the
#: paper's fixed ``input.window``-token windows.
LEGACY_WINDOW_FIT = "none"


def migrate(doc: dict[str, Any]) -> dict[str, Any]:
    """A report in the current id convention (``schema`` + ``schema_version``): old ids are rewritten
    in place (:data:`LEGACY_SCHEMA_IDS`); the content of version 1 is a subset of version 2's, and
    its absolute ``encoder.folder`` is shortened as version 2 writes it (:func:`shown_folder`).
    A version 1 or 2 report gets ``input.window_fit`` :data:`LEGACY_WINDOW_FIT` (the only windows
    the probe cut then); the file itself is never changed."""
    old = doc.get("schema")
    if isinstance(old, str) and old in LEGACY_SCHEMA_IDS and "schema_version" not in doc:
        doc["schema"] = SCHEMA
        doc["schema_version"] = LEGACY_SCHEMA_IDS[old]
        enc = doc.get("encoder")
        if isinstance(enc, dict) and isinstance(enc.get("folder"), str):
            enc["folder"] = shown_folder(enc["folder"])  # version 1 recorded the machine's absolute path
    inp = doc.get("input")
    if doc.get("schema") == SCHEMA and doc.get("schema_version") in (1, 2) and isinstance(inp, dict):
        inp.setdefault("window_fit", LEGACY_WINDOW_FIT)
    return doc


def load_report(path: str | os.PathLike[str]) -> dict[str, Any]:
    """Read, migrate and validate one report; :class:`LamValueError` naming the file for anything else.

    Checked: readable UTF-8 JSON (a truncated file fails here), the ``schema`` id, the JSON Schema
    (every key known and of the right type, known dtype and device), π consistent with its
    digests, ``dropped`` and at-risk ids in range.
    """
    p = str(path)
    if not Path(p).exists():
        raise LamValueError(f"report {p!r} does not exist")
    try:
        text = read_input_text(p)
    except InputError as exc:
        raise LamValueError(f"report {p!r} is not readable: {exc.problem}") from None
    try:
        doc = parse_json(p, text)
    except InputError as exc:
        raise LamValueError(f"report {p!r} is not valid JSON (truncated?): {exc.problem}") from None
    if isinstance(doc, dict):
        migrate(doc)
    if not isinstance(doc, dict) or doc.get("schema") != SCHEMA:
        got = doc.get("schema") if isinstance(doc, dict) else type(doc).__name__
        raise LamValueError(f"report {p!r} is not a lam_ref determinism report (schema {got!r}, expected {SCHEMA!r})")
    _schemas.validate(doc, SCHEMA, where=f"report {p!r}")
    n = doc["input"]["chunks"]
    for k, r in enumerate(doc["runs"]):
        pi = np.arange(n, dtype=np.int64)
        pairs = np.asarray(r["deleted"], dtype=np.int64).reshape(-1, 2)
        if pairs.size and (pairs.min() < 0 or pairs.max() >= n or np.any(pairs[:, 1] >= pairs[:, 0])):
            raise LamValueError(f"report {p!r}: runs[{k}].deleted has an id out of range or a representative after its row")
        pi[pairs[:, 0]] = pairs[:, 1]
        if _digest.map_digest(pi) != r["map_digest"] or _digest.deletion_digest(pairs[:, 0]) != r["deletion_digest"]:
            raise LamValueError(f"report {p!r}: runs[{k}] digests do not match its deletion list (edited or corrupt)")
        if len(pairs) != r["dropped"] or len(r["margins"]) != n:
            raise LamValueError(f"report {p!r}: runs[{k}] has dropped={r['dropped']} / {len(r['margins'])} margins for {n} chunks")
        if any(i < 0 or i >= n for i in r["at_risk"]):
            raise LamValueError(f"report {p!r}: runs[{k}].at_risk holds an id outside 0..{n - 1}")
        r["_pi"] = pi
    doc["_path"] = p
    return doc


def identity(doc: dict[str, Any]) -> tuple[str, str | None, str, int, str]:
    """What must agree for two reports to be comparable: chunk texts, encoder weights, scope, and the
    windows (size and fit: :func:`window_label`)."""
    inp = doc["input"]
    return (doc["input_sha256"], doc["encoder"].get("weights_sha256"), inp["scope"], inp["window"],
            inp.get("window_fit", LEGACY_WINDOW_FIT))


def window_label(doc: dict[str, Any]) -> str:
    """How a loaded report's windows were cut, in words: ``encoder-fitted <= 512`` (SPEC §3.4,
    ``compact``'s default) or ``fixed 512`` (the paper's)."""
    inp = doc["input"]
    fit = inp.get("window_fit", LEGACY_WINDOW_FIT)
    return f"encoder-fitted <= {inp['window']}" if fit == "encoder" else f"fixed {inp['window']}"


def window_options(doc: dict[str, Any]) -> dict[str, Any]:
    """The keyword arguments of :func:`lam_ref.determinism.probing.probe` (and ``probe_corpus``)
    that cut a loaded report's windows again: ``window`` and ``fit_window``."""
    inp = doc["input"]
    return {"window": inp["window"], "fit_window": inp.get("window_fit", LEGACY_WINDOW_FIT) == "encoder"}


def _machine(doc: dict[str, Any]) -> str:
    tg = doc["target"]
    if doc["settings"]["device"] == "cuda" and tg.get("gpu"):
        return str(tg["gpu"])
    return str(tg.get("cpu") or "?")


def kernels_label(doc: dict[str, Any]) -> str:
    """The kernels a report ran with, in a few characters: the matrix configuration's name, else
    ``<OpenBLAS core>/<torch capability>`` from ``target.kernels``, ``-`` for a version-1 report."""
    conf = doc.get("configuration")
    if conf:
        return str(conf["name"])
    k = doc["target"].get("kernels")
    if not k:
        return "-"
    return f"{k.get('openblas_coretype') or '?'}/{k.get('torch_cpu_capability') or '-'}"


@dataclass
class Comparison:
    """The outcome of :func:`compare`: table rows, per-group verdicts, and the exit status."""

    rows: list[dict[str, Any]]
    groups: list[dict[str, Any]]
    codec_checked: int
    codec_mismatches: list[dict[str, Any]]

    @property
    def agree(self) -> bool:
        return all(g["agree"] for g in self.groups) and not self.codec_mismatches

    def to_json(self) -> dict[str, Any]:
        return {"agree": self.agree, "rows": self.rows, "groups": self.groups,
                "codec": {"checked": self.codec_checked, "mismatches": self.codec_mismatches}}


def compare(reports: Sequence[dict[str, Any]], *, allow_different_inputs: bool = False) -> Comparison:
    """Compare loaded reports (:func:`load_report`) run by run.

    Runs are grouped by input identity and threshold; a group agrees when every deletion and map
    digest in it is equal. Otherwise the first run of the group is the reference and, for each
    run that differs, the first chunk whose decision diverged is named with its margin in the
    reference run and whether either run flagged it at risk; later differences are counted as the
    cascade. The reference is the first report's run at its reference batch size: a divergence
    between it and another batch size of the same report is always in its at-risk set (``STAB``);
    across machines the jitter is not measured, and the flag says whether the probe foresaw it.
    Codec digests must agree wherever the embedding bytes are equal.

    Reports cut on other windows (``input.window``, ``input.window_fit``) are never compared: their
    digests differ whatever the machine, so a difference would not be non-determinism (issue 35 §2).

    Raises:
        LamValueError: fewer than one report, reports cut on different windows, or reports of
            different inputs, without ``allow_different_inputs`` (each input is then compared on its own).
    """
    if not reports:
        raise LamValueError("give at least one report")
    ids = {identity(d) for d in reports}
    if len(ids) > 1 and not allow_different_inputs:
        a = reports[0]
        b = next((d for d in reports if window_label(d) != window_label(a)), None)
        if b is not None:
            raise LamValueError(f"reports {a['_path']!r} and {b['_path']!r} were cut on different windows "
                                f"({window_label(a)} vs {window_label(b)} tokens): their digests differ on any machine; "
                                "probe both with the same --window and --window-fit (--allow-different-inputs compares "
                                "each on its own)")
        b = next(d for d in reports if identity(d) != identity(a))
        what = "chunk texts" if a["input_sha256"] != b["input_sha256"] else (
            "encoder weights" if identity(a)[1] != identity(b)[1] else "scope")
        raise LamValueError(f"reports {a['_path']!r} and {b['_path']!r} have different inputs ({what} differ); "
                            "use --allow-different-inputs to compare each input separately")
    rows, groups = [], []
    by_group: dict[tuple[Any, ...], list[tuple[dict[str, Any], dict[str, Any]]]] = {}
    for d in reports:
        for r in d["runs"]:
            by_group.setdefault((identity(d), r["threshold"]), []).append((d, r))
            rows.append({
                "report": Path(d["_path"]).name, "machine": _machine(d), "kernels": kernels_label(d),
                "device": d["settings"]["device"], "backend": d["encoder"].get("backend"),
                "dtype": _precision(d), "threads": d["settings"]["threads"], "batch_size": r["batch_size"],
                "threshold": r["threshold"], "dropped": r["dropped"], "deletion_digest": r["deletion_digest"],
                "map_digest": r["map_digest"], "at_risk": len(r["at_risk"]), "input": d["input_sha256"][:12],
                "windows": window_label(d),
            })
    for (ident, t), members in by_group.items():
        # the reference: the first report's run at its reference batch size (its at-risk set is
        # certified for the jitter of its own batch sizes), else the group's first run
        k = next((n for n, (d, r) in enumerate(members) if d is members[0][0]
                  and r["batch_size"] == d["settings"]["reference_batch_size"]), 0)
        members = [members[k]] + members[:k] + members[k + 1 :]
        ref_doc, ref = members[0]
        digests = {(r["deletion_digest"], r["map_digest"]) for _, r in members}
        g: dict[str, Any] = {"input_sha256": ident[0], "weights_sha256": ident[1], "windows": window_label(ref_doc),
                             "threshold": t, "runs": len(members),
                             "agree": len(digests) == 1, "reference": f"{Path(ref_doc['_path']).name} batch {ref['batch_size']}",
                             "divergences": []}
        for d, r in members[1:]:
            first, cascade = first_divergence(ref["_pi"], r["_pi"])
            if first is None:
                continue
            m = ref["margins"][first]
            g["divergences"].append({
                "run": f"{Path(d['_path']).name} batch {r['batch_size']} ({_precision(d)}, {d['settings']['device']}"
                       f"{', ' + d['encoder']['backend'] if d['encoder'].get('backend') not in (None, 'torch') else ''})",
                "first_chunk": first,
                "margin_sq": m,
                "margin_cos": None if m is None else m / 2.0,
                "at_risk": bool(first in set(ref["at_risk"]) or first in set(r["at_risk"])),
                "cascade": cascade,
            })
        groups.append(g)
    mismatches: list[dict[str, Any]] = []
    checked = 0
    seen: dict[tuple[Any, ...], tuple[str, dict[str, Any]]] = {}
    for d in reports:
        for e in d["encodings"]:
            for c in e["codec"] or []:
                key = (e["embeddings_sha256"], c["rel_eb"])
                where = f"{Path(d['_path']).name} batch {e['batch_size']}"
                if key in seen:
                    checked += 1
                    other_where, other = seen[key]
                    if other["sha256"] != c["sha256"]:
                        mismatches.append({"rel_eb": c["rel_eb"], "a": other_where, "b": where})
                else:
                    seen[key] = (where, c)
    return Comparison(rows, groups, checked, mismatches)


def _precision(d: dict[str, Any]) -> str:
    """A report's real encoder precision (its backend's for non-torch backends)."""
    return run_precision(d["encoder"].get("backend"), d["settings"]["dtype"])


def repeated_reports(reports: Sequence[dict[str, Any]]) -> list[tuple[str, str]]:
    """Pairs ``(first, again)`` of report paths that are the same report given twice (the same file,
    or files with the same content): ``determinism compare`` notes each, since a report compared with
    itself agrees trivially (issue 35 §5)."""
    seen: dict[Any, str] = {}
    out = []
    for d in reports:
        path = str(d.get("_path"))
        try:
            key: Any = ("file", Path(path).resolve())
        except (OSError, RuntimeError):
            key = ("file", path)
        body = json.dumps({k: v for k, v in d.items() if k != "_path"}, sort_keys=True, default=str)
        for k in (key, ("body", hashlib.sha256(body.encode()).hexdigest())):
            if k in seen:
                out.append((seen[k], path))
                break
        else:
            seen[key] = seen[("body", hashlib.sha256(body.encode()).hexdigest())] = path
    return out
